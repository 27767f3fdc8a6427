package iceberg

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/state"
)

// writeResult is what a writer hands the committer at a checkpoint: the
// data and delete files it wrote since the previous one.
type writeResult struct {
	Checkpoint int64
	Data       []fileMeta
	Deletes    []fileMeta
}

// fileWriter is the part of a writer that owns the open files: the data
// file rows go into, the data files closed since the last checkpoint, and
// the position deletes of the rows changes replaced.
type fileWriter struct {
	sink *Sink
	tf   *tableFiles
	// A data file is named by a random 64-bit id (filePrefix-<id in
	// hex>.parquet), from which the key index finds it.
	data   *dataFileWriter
	dataID uint64
	done   []fileMeta
	dels   *positionDeleteWriter
}

// filePrefix begins the names of the files the sink writes.
const filePrefix = "eddy"

// open loads the table, creating it if it does not exist.
func (w *fileWriter) open() error {
	ctx := context.Background()
	tbl, err := w.sink.loadTable(ctx)
	if err != nil {
		return err
	}
	w.tf, err = newTableFiles(ctx, tbl)
	return err
}

// filePath is the path of the data file id.
func (w *fileWriter) filePath(id uint64) string {
	return w.tf.dataDir + "/" + filePrefix + "-" + fmt.Sprintf("%016x", id) + ".parquet"
}

// fileID returns the id of a data file's path, or false for a file eddy
// did not name.
func fileID(path string) (uint64, bool) {
	const p = "/" + filePrefix + "-"
	i := strings.LastIndex(path, p)
	if i < 0 || !strings.HasSuffix(path, ".parquet") {
		return 0, false
	}
	id, err := strconv.ParseUint(path[i+len(p):len(path)-len(".parquet")], 16, 64)
	return id, err == nil
}

// append writes row into the open data file, opening one if none is, and
// returns the file's id and the row's position in it.
func (w *fileWriter) append(c connector.TableRecord) (uint64, int64, error) {
	if w.data == nil {
		d, err := w.tf.newDataFileWriter(w.sink.table.Schema, filePrefix)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", w.sink.cfg.where(), err)
		}
		id, ok := fileID(d.Path())
		if !ok || w.filePath(id) != d.Path() {
			d.Abort()
			return 0, 0, fmt.Errorf("%s: data file %s is not named as the key index expects", w.sink.cfg.where(), d.Path())
		}
		w.data, w.dataID = d, id
	}
	pos, err := w.data.Append(c.Row)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: writing %s: %w", w.sink.cfg.where(), w.filePath(w.dataID), err)
	}
	id := w.dataID
	if w.data.Size() >= w.sink.cfg.targetFileSize {
		if err := w.closeData(); err != nil {
			return 0, 0, err
		}
	}
	return id, pos, nil
}

// deleteRow notes that the row at pos of data file id is deleted.
func (w *fileWriter) deleteRow(id uint64, pos int64) {
	if w.dels == nil {
		w.dels = w.tf.newPositionDeleteWriter(filePrefix + "-deletes")
	}
	w.dels.Delete(w.filePath(id), pos)
}

func (w *fileWriter) closeData() error {
	if w.data == nil {
		return nil
	}
	d := w.data
	w.data = nil
	m, err := d.Close()
	if err != nil {
		return fmt.Errorf("%s: closing data file %s: %w", w.sink.cfg.where(), w.filePath(w.dataID), err)
	}
	w.done = append(w.done, m)
	return nil
}

// flush closes the open files and emits them for checkpoint id.
func (w *fileWriter) flush(emit func(writeResult), id int64) error {
	if err := w.closeData(); err != nil {
		return err
	}
	r := writeResult{Checkpoint: id, Data: w.done}
	if w.dels != nil {
		dels, err := w.dels.Close()
		w.dels = nil
		if err != nil {
			return fmt.Errorf("%s: writing position deletes: %w", w.sink.cfg.where(), err)
		}
		r.Deletes = dels
	}
	w.done = nil
	if len(r.Data) > 0 || len(r.Deletes) > 0 {
		emit(r)
	}
	return nil
}

// close removes the data file being written, which no checkpoint will
// commit.
func (w *fileWriter) close() error {
	if w.data != nil {
		w.data.Abort()
		w.data = nil
	}
	if w.dels != nil {
		w.dels.Abort()
		w.dels = nil
	}
	return nil
}

// appendWriter writes the rows of a table without a primary key.
type appendWriter struct{ fileWriter }

// Open loads the table.
func (w *appendWriter) Open(*eddy.ProcessContext[writeResult]) error { return w.open() }

// ProcessElement appends an inserted row.
func (w *appendWriter) ProcessElement(_ *eddy.ProcessContext[writeResult], c connector.TableRecord) error {
	if c.Kind != changelog.Insert {
		return fmt.Errorf("%s has no primary key, so the sink only appends rows, but a %s change arrived: declare the table's PRIMARY KEY ... NOT ENFORCED to apply updates and deletions", w.sink.cfg.where(), c.Kind)
	}
	_, _, err := w.append(c)
	return err
}

// PrepareSnapshot hands the files written since the last checkpoint to
// the committer.
func (w *appendWriter) PrepareSnapshot(ctx *eddy.ProcessContext[writeResult], id int64) error {
	return w.flush(ctx.Emit, id)
}

// EndInput hands the last files to the committer.
func (w *appendWriter) EndInput(ctx *eddy.ProcessContext[writeResult]) error {
	return w.flush(ctx.Emit, 0)
}

// Close removes the file being written.
func (w *appendWriter) Close() error { return w.close() }

// rowLocation is where the row of a key is: a data file's id and the row's
// position in it.
type rowLocation struct {
	file uint64
	pos  int64
}

// locationCodec encodes a rowLocation as the file id's 8 bytes and the
// position as a varint.
type locationCodec struct{}

func (locationCodec) Append(dst []byte, l rowLocation) []byte {
	return binary.AppendVarint(binary.LittleEndian.AppendUint64(dst, l.file), l.pos)
}

func (locationCodec) Decode(src []byte) (rowLocation, int, error) {
	if len(src) < 9 {
		return rowLocation{}, 0, errors.New("iceberg: key index entry is truncated")
	}
	pos, n := binary.Varint(src[8:])
	if n <= 0 {
		return rowLocation{}, 0, errors.New("iceberg: key index entry is corrupt")
	}
	return rowLocation{file: binary.LittleEndian.Uint64(src), pos: pos}, 8 + n, nil
}

// keyedWriter writes the changes of a table with a primary key. Its keyed
// state is the index from each key to the row that holds it: an insertion
// or update of a key the table holds deletes the old row by position and
// appends the new one; a deletion deletes the row by position.
type keyedWriter struct {
	fileWriter
	index state.Value[rowLocation]
}

// Open declares the key index and loads the table.
func (w *keyedWriter) Open(ctx *eddy.KeyedContext[string, writeResult]) error {
	w.index = state.NewValue(ctx.Store(), state.ValueDescriptor[rowLocation]{Name: "iceberg-key-index", Codec: locationCodec{}})
	return w.open()
}

// ProcessElement applies one change of the current key.
func (w *keyedWriter) ProcessElement(_ *eddy.KeyedContext[string, writeResult], c connector.TableRecord) error {
	if old, ok := w.index.Value(); ok {
		w.deleteRow(old.file, old.pos)
	}
	if !c.Kind.IsAddition() {
		w.index.Clear()
		return nil
	}
	id, pos, err := w.append(c)
	if err != nil {
		return err
	}
	w.index.Update(rowLocation{file: id, pos: pos})
	return nil
}

// PrepareSnapshot hands the files written since the last checkpoint to
// the committer; the key index, snapshotted next, points into them.
func (w *keyedWriter) PrepareSnapshot(ctx *eddy.KeyedContext[string, writeResult], id int64) error {
	return w.flush(ctx.Emit, id)
}

// EndInput hands the last files to the committer.
func (w *keyedWriter) EndInput(ctx *eddy.KeyedContext[string, writeResult]) error {
	return w.flush(ctx.Emit, 0)
}

// Close removes the file being written.
func (w *keyedWriter) Close() error { return w.close() }
