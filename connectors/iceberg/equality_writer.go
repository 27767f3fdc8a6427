package iceberg

import (
	"fmt"
	"slices"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// equalityWriter writes the changes of a table with a primary key with
// equality deletes ('write.upsert.delete-mode' = 'equality'), as Flink's
// Iceberg sink does; equalityDeletes says how.
type equalityWriter struct {
	fileWriter
	eq equalityDeletes
}

// equalityDeletes is what a writer in equality-delete mode adds to its
// fileWriter, for the SQL sink's tables (equalityWriter) and the pipeline
// sink's (pipelineTable): the first change of a key in a checkpoint writes
// an equality delete of the key, which deletes every row of the key in the
// data files of earlier snapshots, whoever wrote them; a later change of
// the key in the same checkpoint deletes the row the checkpoint wrote for
// it by position. An insertion or update then appends the new row.
//
// Equality deletes apply only to data files of lower sequence numbers, so
// they never delete a row of their own snapshot: the row a checkpoint
// writes survives the equality delete committed with it, and a row written
// and replaced within a checkpoint is deleted by its position delete,
// which applies to data files of the same snapshot.
//
// It keeps no keyed state: what it knows of the keys is what the running
// checkpoint changed, and a restored job starts its checkpoint again with
// nothing.
type equalityDeletes struct {
	// enc encodes the keys; its key type names the table's key columns.
	enc *types.KeyEncoder
	// eqs are the open equality-delete files, one per partition.
	eqs map[partitionKey]*equalityDeleteWriter
	// closed are the equality-delete files of the running checkpoint
	// closed before it ends, when the table's schema changed.
	closed []fileMeta
	// changed holds the keys changed since the last checkpoint, with the
	// row written for each (live false when the last change deleted it).
	changed map[string]changedKey
}

// changedKey is what an equalityDeletes knows of a key changed in the
// running checkpoint: the key's equality delete is written, and, when live,
// its row is at loc.
type changedKey struct {
	loc  rowLocation
	live bool
}

// checkEqualityPartition checks that the partition of a row of w's table
// follows from its key columns pk, as equality deletes of a partitioned
// table need: an equality delete deletes rows of its own partition only.
// keyHint says how to add a column to the key, for the error.
func checkEqualityPartition(w *fileWriter, pk []int, keyHint string) error {
	if w.part == nil {
		return nil
	}
	for _, f := range w.part.fields {
		if !slices.Contains(pk, f.col) {
			name := w.sink.table.Schema.Field(f.col).Name
			return fmt.Errorf("%s is partitioned by column %q, which is not in the primary key: an equality delete deletes rows of its own partition only, so with 'write.upsert.delete-mode' = 'equality' the partition columns must be key columns; add %q to %s or use 'position'",
				w.sink.cfg.where(), name, name, keyHint)
		}
	}
	return nil
}

// setKey makes enc the encoder of the keys, the key columns of the
// table's schema: at the start, and when the schema changes. Keys changed
// in the running checkpoint under an earlier encoder whose types differ
// (a widened key column) are encoded again, their values cast to the new
// types, so that their later changes still find them.
func (d *equalityDeletes) setKey(enc *types.KeyEncoder) error {
	old := d.enc
	d.enc = enc
	if d.changed == nil {
		d.changed = map[string]changedKey{}
	}
	if old == nil || len(d.changed) == 0 || sameKeyTypes(old.KeyType(), enc.KeyType()) {
		return nil
	}
	from, to := old.KeyType(), enc.KeyType()
	if from.Len() != to.Len() {
		return fmt.Errorf("the key changed from %s to %s", from, to)
	}
	all := make([]int, to.Len())
	for i := range all {
		all[i] = i
	}
	keyOf := types.NewKeyEncoder(to, all...)
	changed := make(map[string]changedKey, len(d.changed))
	for k, ck := range d.changed {
		vals := types.RowValues(from, old.KeyRow(k))
		for i := range vals {
			v, err := types.CastValue(vals[i], from.Field(i).Type, to.Field(i).Type, time.UTC)
			if err != nil {
				return fmt.Errorf("casting key column %q from %s to %s: %w", to.Field(i).Name, from.Field(i).Type, to.Field(i).Type, err)
			}
			vals[i] = v
		}
		r, err := types.BuildRow(to, nil, vals...)
		if err != nil {
			return fmt.Errorf("encoding a key as %s: %w", to, err)
		}
		changed[keyOf.Key(r)] = ck
	}
	d.changed = changed
	return nil
}

// sameKeyTypes reports whether keys of types a and b encode alike: the
// same column types, whatever their names.
func sameKeyTypes(a, b *types.RowType) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Len() {
		if !a.Field(i).Type.EqualIgnoringNullability(b.Field(i).Type) {
			return false
		}
	}
	return true
}

// apply applies change c of key (encoded by d.enc) to the table w writes.
func (d *equalityDeletes) apply(w *fileWriter, key string, c connector.TableRecord) error {
	if old, ok := d.changed[key]; ok {
		if old.live {
			w.deletePartRow(old.loc.file, old.loc.pos, old.loc.part)
		}
	} else if err := d.deleteKey(w, key, c); err != nil {
		return err
	}
	if !c.Kind.IsAddition() {
		d.changed[key] = changedKey{}
		return nil
	}
	id, pos, part, err := w.appendPart(c)
	if err != nil {
		return err
	}
	d.changed[key] = changedKey{loc: rowLocation{file: id, pos: pos, part: part}, live: true}
	return nil
}

// deleteKey writes the equality delete of key, whose change is c, into
// the equality-delete file of the change's partition.
func (d *equalityDeletes) deleteKey(w *fileWriter, key string, c connector.TableRecord) error {
	var part partitionKey
	if w.part != nil {
		part = string(w.part.key(c.Row))
	}
	eq := d.eqs[part]
	if eq == nil {
		var err error
		if eq, err = w.tf.newEqualityDeleteWriter(d.enc.KeyType(), filePrefix+"-eq-deletes"); err != nil {
			return fmt.Errorf("%s: %w", w.sink.cfg.where(), err)
		}
		eq.SetPartition(part)
		if d.eqs == nil {
			d.eqs = map[partitionKey]*equalityDeleteWriter{}
		}
		d.eqs[part] = eq
	}
	if _, err := eq.Append(d.enc.KeyRow(key)); err != nil {
		return fmt.Errorf("%s: writing the equality delete file %s: %w", w.sink.cfg.where(), eq.Path(), err)
	}
	return nil
}

// closeFiles closes the open equality-delete files of w's table; they are
// handed to the committer at the checkpoint.
func (d *equalityDeletes) closeFiles(w *fileWriter) error {
	for part, eq := range d.eqs {
		m, err := eq.Close()
		if err != nil {
			return fmt.Errorf("%s: closing the equality-delete file %s: %w", w.sink.cfg.where(), eq.Path(), err)
		}
		delete(d.eqs, part)
		d.closed = append(d.closed, m)
	}
	return nil
}

// flush hands the files w wrote since the last checkpoint to the
// committer, the equality-delete files with them, and forgets the keys the
// checkpoint changed.
func (d *equalityDeletes) flush(w *fileWriter, emit func(writeResult), id int64) error {
	if err := d.closeFiles(w); err != nil {
		return err
	}
	eqs := d.closed
	d.closed = nil
	clear(d.changed)
	return w.flushWith(emit, id, eqs)
}

// abort removes the equality-delete files being written and forgets the
// keys the checkpoint changed.
func (d *equalityDeletes) abort() {
	for part, eq := range d.eqs {
		eq.Abort()
		delete(d.eqs, part)
	}
	d.closed = nil
	clear(d.changed)
}

// Open loads the table and checks that the partition of a row follows
// from its key, as equality deletes of a partitioned table need.
func (w *equalityWriter) Open(*eddy.KeyedContext[string, writeResult]) error {
	if err := w.open(); err != nil {
		return err
	}
	pk := w.sink.table.PrimaryKey
	if err := checkEqualityPartition(&w.fileWriter, pk, "the PRIMARY KEY"); err != nil {
		return err
	}
	return w.eq.setKey(types.NewKeyEncoder(w.sink.table.Schema, pk...))
}

// ProcessElement applies one change of the current key.
func (w *equalityWriter) ProcessElement(ctx *eddy.KeyedContext[string, writeResult], c connector.TableRecord) error {
	return w.eq.apply(&w.fileWriter, ctx.Key(), c)
}

// PrepareSnapshot hands the files written since the last checkpoint to
// the committer.
func (w *equalityWriter) PrepareSnapshot(ctx *eddy.KeyedContext[string, writeResult], id int64) error {
	return w.eq.flush(&w.fileWriter, ctx.Emit, id)
}

// EndInput hands the last files to the committer.
func (w *equalityWriter) EndInput(ctx *eddy.KeyedContext[string, writeResult]) error {
	return w.eq.flush(&w.fileWriter, ctx.Emit, 0)
}

// Close removes the files being written.
func (w *equalityWriter) Close() error {
	w.eq.abort()
	return w.close()
}
