package iceberg

import (
	"fmt"
	"slices"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// equalityWriter writes the changes of a table with a primary key with
// equality deletes ('write.upsert.delete-mode' = 'equality'), as Flink's
// Iceberg sink does: the first change of a key in a checkpoint writes an
// equality delete of the key, which deletes every row of the key in the
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
// The writer keeps no keyed state: what it knows of the keys is what the
// running checkpoint changed, and a restored job starts its checkpoint
// again with nothing.
type equalityWriter struct {
	fileWriter
	enc *types.KeyEncoder
	// eqs are the open equality-delete files, one per partition.
	eqs map[partitionKey]*equalityDeleteWriter
	// changed holds the keys changed since the last checkpoint, with the
	// row written for each (live false when the last change deleted it).
	changed map[string]changedKey
}

// changedKey is what an equalityWriter knows of a key changed in the
// running checkpoint: the key's equality delete is written, and, when live,
// its row is at loc.
type changedKey struct {
	loc  rowLocation
	live bool
}

// Open loads the table and checks that the partition of a row follows
// from its key, as equality deletes of a partitioned table need.
func (w *equalityWriter) Open(*eddy.KeyedContext[string, writeResult]) error {
	if err := w.open(); err != nil {
		return err
	}
	pk := w.sink.table.PrimaryKey
	w.enc = types.NewKeyEncoder(w.sink.table.Schema, pk...)
	w.changed = map[string]changedKey{}
	if w.part != nil {
		for _, f := range w.part.fields {
			if !slices.Contains(pk, f.col) {
				return fmt.Errorf("%s is partitioned by column %q, which is not in the primary key: an equality delete deletes rows of its own partition only, so with 'write.upsert.delete-mode' = 'equality' the partition columns must be key columns; add %q to the PRIMARY KEY or use 'position'",
					w.sink.cfg.where(), w.sink.table.Schema.Field(f.col).Name, w.sink.table.Schema.Field(f.col).Name)
			}
		}
	}
	return nil
}

// ProcessElement applies one change of the current key.
func (w *equalityWriter) ProcessElement(ctx *eddy.KeyedContext[string, writeResult], c connector.TableRecord) error {
	key := ctx.Key()
	if old, ok := w.changed[key]; ok {
		if old.live {
			w.deletePartRow(old.loc.file, old.loc.pos, old.loc.part)
		}
	} else if err := w.deleteKey(key, c); err != nil {
		return err
	}
	if !c.Kind.IsAddition() {
		w.changed[key] = changedKey{}
		return nil
	}
	id, pos, part, err := w.appendPart(c)
	if err != nil {
		return err
	}
	w.changed[key] = changedKey{loc: rowLocation{file: id, pos: pos, part: part}, live: true}
	return nil
}

// deleteKey writes the equality delete of key, whose change is c, into
// the equality-delete file of the change's partition.
func (w *equalityWriter) deleteKey(key string, c connector.TableRecord) error {
	var part partitionKey
	if w.part != nil {
		part = string(w.part.key(c.Row))
	}
	eq := w.eqs[part]
	if eq == nil {
		var err error
		if eq, err = w.tf.newEqualityDeleteWriter(w.enc.KeyType(), filePrefix+"-eq-deletes"); err != nil {
			return fmt.Errorf("%s: %w", w.sink.cfg.where(), err)
		}
		eq.SetPartition(part)
		if w.eqs == nil {
			w.eqs = map[partitionKey]*equalityDeleteWriter{}
		}
		w.eqs[part] = eq
	}
	if _, err := eq.Append(w.enc.KeyRow(key)); err != nil {
		return fmt.Errorf("%s: writing the equality delete file %s: %w", w.sink.cfg.where(), eq.Path(), err)
	}
	return nil
}

// flush hands the files written since the last checkpoint to the
// committer, the equality-delete files with them, and forgets the keys the
// checkpoint changed.
func (w *equalityWriter) flush(emit func(writeResult), id int64) error {
	var eqs []fileMeta
	for part, eq := range w.eqs {
		m, err := eq.Close()
		if err != nil {
			return fmt.Errorf("%s: closing the equality-delete file %s: %w", w.sink.cfg.where(), eq.Path(), err)
		}
		delete(w.eqs, part)
		eqs = append(eqs, m)
	}
	clear(w.changed)
	return w.flushWith(emit, id, eqs)
}

// PrepareSnapshot hands the files written since the last checkpoint to
// the committer.
func (w *equalityWriter) PrepareSnapshot(ctx *eddy.KeyedContext[string, writeResult], id int64) error {
	return w.flush(ctx.Emit, id)
}

// EndInput hands the last files to the committer.
func (w *equalityWriter) EndInput(ctx *eddy.KeyedContext[string, writeResult]) error {
	return w.flush(ctx.Emit, 0)
}

// Close removes the files being written.
func (w *equalityWriter) Close() error {
	for part, eq := range w.eqs {
		eq.Abort()
		delete(w.eqs, part)
	}
	return w.close()
}
