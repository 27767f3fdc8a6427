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
// file rows go into (one per partition of a partitioned table), the data
// files closed since the last checkpoint, and the position deletes of the
// rows changes replaced (Parquet position-delete files, one per partition,
// or, in format version 3, deletion vectors).
type fileWriter struct {
	sink *Sink
	tf   *tableFiles
	// part computes the partition of a row; nil for an unpartitioned
	// table, whose open data file is one.
	part  *partitioner
	one   *openFile
	parts map[partitionKey]*openFile
	done  []fileMeta
	dels  map[partitionKey]*positionDeleteWriter
	dvs   *deletionVectorWriter
	// paths caches the paths of the data files deletes name: one string
	// per file, made once, which the delete writers' sort compares cheaply.
	paths map[uint64]string
}

// maxCachedPaths bounds the path cache; it is emptied when full.
const maxCachedPaths = 1 << 16

// deletedFilePath returns the path of data file id, from the cache.
func (w *fileWriter) deletedFilePath(id uint64) string {
	if p, ok := w.paths[id]; ok {
		return p
	}
	if w.paths == nil || len(w.paths) >= maxCachedPaths {
		w.paths = map[uint64]string{}
	}
	p := w.filePath(id)
	w.paths[id] = p
	return p
}

// openFile is a data file being written. A data file is named by a
// random 64-bit id (filePrefix-<id in hex>.parquet), from which the key
// index finds it; all its rows are of the partition part.
type openFile struct {
	w    *dataFileWriter
	id   uint64
	part partitionKey
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
	if w.tf, err = newTableFiles(ctx, tbl); err != nil {
		return err
	}
	if w.part, err = w.tf.newPartitioner(w.sink.table.Schema); err != nil {
		return fmt.Errorf("%s: %w", w.sink.cfg.where(), err)
	}
	if w.part != nil {
		w.parts = map[partitionKey]*openFile{}
	}
	return nil
}

// filePath is the path of the data file id.
func (w *fileWriter) filePath(id uint64) string {
	var hex [16]byte
	const digits = "0123456789abcdef"
	for i := range hex {
		hex[i] = digits[id>>(60-4*i)&15]
	}
	return w.tf.dataDir + "/" + filePrefix + "-" + string(hex[:]) + ".parquet"
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

// newFile opens a data file for rows of partition part.
func (w *fileWriter) newFile(part partitionKey) (*openFile, error) {
	d, err := w.tf.newDataFileWriter(w.sink.table.Schema, filePrefix)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w.sink.cfg.where(), err)
	}
	id, ok := fileID(d.Path())
	if !ok || w.filePath(id) != d.Path() {
		d.Abort()
		return nil, fmt.Errorf("%s: data file %s is not named as the key index expects", w.sink.cfg.where(), d.Path())
	}
	d.SetPartition(part)
	return &openFile{w: d, id: id, part: part}, nil
}

// append writes row into the open data file of its partition, opening one
// if none is, and returns the file's id and the row's position in it.
func (w *fileWriter) append(c connector.TableRecord) (uint64, int64, error) {
	id, pos, _, err := w.appendPart(c)
	return id, pos, err
}

// appendPart is append returning the row's partition too.
func (w *fileWriter) appendPart(c connector.TableRecord) (uint64, int64, partitionKey, error) {
	var f *openFile
	if w.part == nil {
		if w.one == nil {
			nf, err := w.newFile("")
			if err != nil {
				return 0, 0, "", err
			}
			w.one = nf
		}
		f = w.one
	} else {
		key := w.part.key(c.Row)
		if f = w.parts[string(key)]; f == nil {
			nf, err := w.newFile(string(key))
			if err != nil {
				return 0, 0, "", err
			}
			f = nf
			w.parts[f.part] = f
		}
	}
	pos, err := f.w.Append(c.Row)
	if err != nil {
		return 0, 0, "", fmt.Errorf("%s: writing %s: %w", w.sink.cfg.where(), w.filePath(f.id), err)
	}
	if f.w.Size() >= w.sink.cfg.targetFileSize {
		if err := w.closeFile(f); err != nil {
			return 0, 0, "", err
		}
	}
	return f.id, pos, f.part, nil
}

// deletePartRow notes that the row at pos of data file id, of partition
// part, is deleted.
func (w *fileWriter) deletePartRow(id uint64, pos int64, part partitionKey) {
	if w.tf.formatVersion >= 3 {
		if w.dvs == nil {
			w.dvs = w.tf.newDeletionVectorWriter(filePrefix + "-dv")
		}
		w.dvs.Delete(w.deletedFilePath(id), pos, part)
		return
	}
	if w.dels == nil {
		w.dels = map[partitionKey]*positionDeleteWriter{}
	}
	d := w.dels[part]
	if d == nil {
		d = w.tf.newPositionDeleteWriter(filePrefix + "-deletes")
		d.SetPartition(part)
		w.dels[part] = d
	}
	d.Delete(w.deletedFilePath(id), pos)
}

// closeData closes the open data files.
func (w *fileWriter) closeData() error {
	if w.one != nil {
		if err := w.closeFile(w.one); err != nil {
			return err
		}
	}
	for _, f := range w.parts {
		if err := w.closeFile(f); err != nil {
			return err
		}
	}
	return nil
}

// closeFile closes the open data file f.
func (w *fileWriter) closeFile(f *openFile) error {
	if w.one == f {
		w.one = nil
	} else {
		delete(w.parts, f.part)
	}
	m, err := f.w.Close()
	if err != nil {
		return fmt.Errorf("%s: closing data file %s: %w", w.sink.cfg.where(), w.filePath(f.id), err)
	}
	w.done = append(w.done, m)
	return nil
}

// flush closes the open files and emits them for checkpoint id.
func (w *fileWriter) flush(emit func(writeResult), id int64) error {
	return w.flushWith(emit, id, nil)
}

// flushWith is flush with the delete files more, written and closed by
// the caller, emitted with the others. At the end of the input (id 0) it
// emits a result even without files: from it the committer learns that
// its transaction is the last one, whose commit compacts the table
// whatever the schedule, also when every file went with the checkpoint
// before.
func (w *fileWriter) flushWith(emit func(writeResult), id int64, more []fileMeta) error {
	if err := w.closeData(); err != nil {
		return err
	}
	r := writeResult{Checkpoint: id, Data: w.done, Deletes: more}
	for part, d := range w.dels {
		dels, err := d.Close()
		if err != nil {
			return fmt.Errorf("%s: writing position deletes: %w", w.sink.cfg.where(), err)
		}
		delete(w.dels, part)
		r.Deletes = append(r.Deletes, dels...)
	}
	if w.dvs != nil && w.dvs.Len() > 0 {
		dvs, err := w.dvs.Close()
		if err != nil {
			return fmt.Errorf("%s: writing deletion vectors: %w", w.sink.cfg.where(), err)
		}
		r.Deletes = append(r.Deletes, dvs...)
	}
	w.done = nil
	if len(r.Data) > 0 || len(r.Deletes) > 0 || id == 0 {
		emit(r)
	}
	return nil
}

// close removes the data files being written, which no checkpoint will
// commit.
func (w *fileWriter) close() error {
	if w.one != nil {
		w.one.w.Abort()
		w.one = nil
	}
	for k, f := range w.parts {
		f.w.Abort()
		delete(w.parts, k)
	}
	for k, d := range w.dels {
		d.Abort()
		delete(w.dels, k)
	}
	if w.dvs != nil {
		w.dvs.Abort()
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

// rowLocation is where the row of a key is: a data file's id, the row's
// position in it and the file's partition (of a partitioned table).
type rowLocation struct {
	file uint64
	pos  int64
	part partitionKey
}

// locationCodec encodes a rowLocation as the file id's 8 bytes and the
// position as a varint; with a partition, the varint is -(position+1) and
// the partition follows, as its length (uvarint) and bytes.
type locationCodec struct{}

func (locationCodec) Append(dst []byte, l rowLocation) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, l.file)
	if l.part == "" {
		return binary.AppendVarint(dst, l.pos)
	}
	dst = binary.AppendVarint(dst, -(l.pos + 1))
	dst = binary.AppendUvarint(dst, uint64(len(l.part)))
	return append(dst, l.part...)
}

func (locationCodec) Decode(src []byte) (rowLocation, int, error) {
	if len(src) < 9 {
		return rowLocation{}, 0, errors.New("iceberg: key index entry is truncated")
	}
	pos, n := binary.Varint(src[8:])
	if n <= 0 {
		return rowLocation{}, 0, errors.New("iceberg: key index entry is corrupt")
	}
	l := rowLocation{file: binary.LittleEndian.Uint64(src), pos: pos}
	n += 8
	if pos >= 0 {
		return l, n, nil
	}
	l.pos = -pos - 1
	size, k := binary.Uvarint(src[n:])
	if k <= 0 || uint64(len(src)-n-k) < size {
		return rowLocation{}, 0, errors.New("iceberg: key index entry is corrupt")
	}
	n += k
	l.part = string(src[n : n+int(size)])
	return l, n + int(size), nil
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
		w.deletePartRow(old.file, old.pos, old.part)
	}
	if !c.Kind.IsAddition() {
		w.index.Clear()
		return nil
	}
	id, pos, part, err := w.appendPart(c)
	if err != nil {
		return err
	}
	w.index.Update(rowLocation{file: id, pos: pos, part: part})
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
