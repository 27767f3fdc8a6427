package iceberg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	icebergo "github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy/sql/types"
)

// arrowAllocator allocates the Arrow buffers of the writers.
var arrowAllocator memory.Allocator = memory.DefaultAllocator

const (
	// batchRows is the number of rows buffered in Arrow builders before
	// they are encoded into the Parquet file.
	batchRows = 8192
	// defaultRowGroupBytes is the row group size when the table does not
	// set write.parquet.row-group-size-bytes.
	defaultRowGroupBytes = 128 << 20
)

// tableFiles is what the writers of one Iceberg table need to know of it:
// where its files go, its schema, partition spec and write properties. It
// is made once (newTableFiles) and shared by the writers.
type tableFiles struct {
	fs            icebergio.WriteFileIO
	dataDir       string // directory of new files, without a trailing slash
	schema        *icebergo.Schema
	arrowSchema   *arrow.Schema
	spec          icebergo.PartitionSpec
	props         icebergo.Properties
	formatVersion int
	compression   compress.Compression
	rowGroupBytes int64
}

// newTableFiles reads what writers of tbl need from its current metadata:
// files are written for the table's current schema and partition spec.
func newTableFiles(ctx context.Context, tbl *table.Table) (*tableFiles, error) {
	name := strings.Join(tbl.Identifier(), ".")
	spec := tbl.Spec()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("iceberg table %s: opening its file IO at %s: %w", name, tbl.Location(), err)
	}
	wfs, ok := fsys.(icebergio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("iceberg table %s: the file IO of %s (%T) cannot write files: use a writable warehouse", name, tbl.Location(), fsys)
	}
	as, err := arrowSchema(tbl.Schema())
	if err != nil {
		return nil, fmt.Errorf("iceberg table %s: %w", name, err)
	}
	props := tbl.Properties()
	dataDir := dataDirOf(tbl)
	codec, err := parquetCodec(props.Get("write.parquet.compression-codec", "zstd"))
	if err != nil {
		return nil, fmt.Errorf("iceberg table %s: %w", name, err)
	}
	rgBytes := int64(props.GetInt("write.parquet.row-group-size-bytes", defaultRowGroupBytes))
	if rgBytes <= 0 {
		rgBytes = defaultRowGroupBytes
	}
	return &tableFiles{
		fs:            wfs,
		dataDir:       dataDir,
		schema:        tbl.Schema(),
		arrowSchema:   as,
		spec:          spec,
		props:         props,
		formatVersion: tbl.Metadata().Version(),
		compression:   codec,
		rowGroupBytes: rgBytes,
	}, nil
}

// dataDirOf returns the directory of a table's new files, without a
// trailing slash: write.data.path, or the table location's data directory.
func dataDirOf(tbl *table.Table) string {
	if p := tbl.Properties().Get("write.data.path", ""); p != "" {
		return strings.TrimSuffix(p, "/")
	}
	return strings.TrimSuffix(tbl.Location(), "/") + "/data"
}

// newPartitioner returns the partitioner of the table's spec for eddy rows
// of type rt, nil for an unpartitioned table.
func (tf *tableFiles) newPartitioner(rt *types.RowType) (*partitioner, error) {
	return newPartitioner(tf.spec, tf.schema, rt)
}

// parquetCodec returns the compression of a write.parquet.compression-codec
// value.
func parquetCodec(name string) (compress.Compression, error) {
	switch strings.ToLower(name) {
	case "zstd":
		return compress.Codecs.Zstd, nil
	case "snappy":
		return compress.Codecs.Snappy, nil
	case "gzip":
		return compress.Codecs.Gzip, nil
	case "uncompressed", "none":
		return compress.Codecs.Uncompressed, nil
	}
	return compress.Codecs.Uncompressed, fmt.Errorf("table property write.parquet.compression-codec %q is not supported: use zstd, snappy, gzip or uncompressed", name)
}

// newFilePath returns a new file path <data dir>/<prefix>-<16 random hex
// digits>.parquet.
func (tf *tableFiles) newFilePath(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return tf.dataDir + "/" + prefix + "-" + hex.EncodeToString(b[:]) + ".parquet"
}

// countingWriter counts the bytes written through it. It deliberately has
// no Close, so the Parquet writer does not close the file: the owner does.
type countingWriter struct {
	w io.Writer
	n int64
}

// Write writes p to the underlying writer, counting the bytes written.
func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// parquetFile is one Parquet file being written from Arrow record batches.
type parquetFile struct {
	fs            icebergio.WriteFileIO
	path          string
	f             icebergio.FileWriter
	cw            *countingWriter
	pw            *pqarrow.FileWriter
	rowGroupBytes int64
}

// createParquetFile creates the file path and a Parquet writer of the
// Arrow schema as into it.
func (tf *tableFiles) createParquetFile(path string, as *arrow.Schema) (*parquetFile, error) {
	f, err := tf.fs.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating the Iceberg file %s: %w", path, err)
	}
	cw := &countingWriter{w: f}
	opts := []parquet.WriterProperty{
		parquet.WithCompression(tf.compression),
		parquet.WithStats(true),
		parquet.WithDictionaryDefault(true),
		parquet.WithMaxRowGroupLength(1 << 30),
		parquet.WithAllocator(arrowAllocator),
	}
	for _, f := range as.Fields() {
		// Decimals are fixed-length byte arrays, whose dictionary encoder
		// allocates per value and rarely pays off: encode them plainly.
		if f.Type.ID() == arrow.DECIMAL128 {
			opts = append(opts, parquet.WithDictionaryFor(f.Name, false))
		}
	}
	props := parquet.NewWriterProperties(opts...)
	pw, err := pqarrow.NewFileWriter(as, cw, props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(arrowAllocator)))
	if err != nil {
		_ = f.Close()
		_ = tf.fs.Remove(path)
		return nil, fmt.Errorf("starting the Parquet file %s: %w", path, err)
	}
	return &parquetFile{fs: tf.fs, path: path, f: f, cw: cw, pw: pw, rowGroupBytes: tf.rowGroupBytes}, nil
}

// write encodes a record batch into the current row group, starting a new
// row group when the current one reached the target size.
func (p *parquetFile) write(rec arrow.RecordBatch) error {
	if err := p.pw.WriteBuffered(rec); err != nil {
		return fmt.Errorf("writing the Parquet file %s: %w", p.path, err)
	}
	if p.pw.RowGroupTotalBytesWritten() >= p.rowGroupBytes {
		if err := p.pw.NewBufferedRowGroupChecked(); err != nil {
			return fmt.Errorf("writing the Parquet file %s: %w", p.path, err)
		}
	}
	return nil
}

// setKeyValue records a key-value pair in the file's footer (Parquet's
// key_value_metadata).
func (p *parquetFile) setKeyValue(key, value string) error {
	if err := p.pw.AppendKeyValueMetadata(key, value); err != nil {
		return fmt.Errorf("writing the footer metadata %s of the Parquet file %s: %w", key, p.path, err)
	}
	return nil
}

// size returns the bytes written so far: the finished row groups and the
// finished pages of the row group being built. The page being filled and
// the dictionary of each column (up to the data page and dictionary page
// size limits, 1 MiB each by default) are not counted yet.
func (p *parquetFile) size() int64 { return p.cw.n + p.pw.RowGroupTotalBytesWritten() }

// close finishes the file and returns its Parquet metadata and size.
func (p *parquetFile) close() (*metadata.FileMetaData, int64, error) {
	if err := p.pw.Close(); err != nil {
		_ = p.f.Close()
		return nil, 0, fmt.Errorf("finishing the Parquet file %s: %w", p.path, err)
	}
	if err := p.f.Close(); err != nil {
		return nil, 0, fmt.Errorf("closing the Iceberg file %s: %w", p.path, err)
	}
	md, err := p.pw.FileMetadata()
	if err != nil {
		return nil, 0, fmt.Errorf("reading the metadata of the Parquet file %s: %w", p.path, err)
	}
	return md, p.cw.n, nil
}

// abort stops writing and removes the file.
func (p *parquetFile) abort() error {
	_ = p.pw.Close()
	_ = p.f.Close()
	if err := p.fs.Remove(p.path); err != nil && !isNotExist(err) {
		return fmt.Errorf("removing the aborted Iceberg file %s: %w", p.path, err)
	}
	return nil
}

// describe builds the fileMeta of a finished file, with the column metrics
// from its Parquet metadata (Iceberg's metrics modes apply: strings and
// binaries are truncated to 16 bytes unless the table says otherwise).
func (tf *tableFiles) describe(content string, sc *icebergo.Schema, path string, md *metadata.FileMetaData, size int64, eqIDs []int, referenced string, part partitionKey) (fileMeta, error) {
	mc, err := (&fileMeta{Content: content, Path: path}).manifestContent()
	if err != nil {
		return fileMeta{}, err
	}
	args := table.DataFileArgs{
		Schema:           sc,
		Spec:             tf.spec,
		Format:           icebergo.ParquetFile,
		Metadata:         md,
		FilePath:         path,
		FileSize:         size,
		Content:          mc,
		Properties:       tf.props,
		EqualityFieldIDs: eqIDs,
		FormatVersion:    tf.formatVersion,
	}
	if referenced != "" {
		args.ReferencedDataFile = &referenced
	}
	df, err := table.DataFileFromMetadata(args)
	if err != nil {
		return fileMeta{}, fmt.Errorf("collecting the metrics of the Iceberg file %s: %w", path, err)
	}
	m := fileMetaOf(df, content, tf.spec.ID())
	if part != "" {
		m.Partition = []byte(part)
	}
	return m, nil
}

// dataFileWriter writes eddy rows into one new Parquet file of an Iceberg
// table: a data file, or (through equalityDeleteWriter) an equality-delete
// file. Rows are kept in append order, so the position Append returns is
// the row's position in the file (what a position delete names). Rows are
// buffered in Arrow builders and encoded batchRows at a time.
//
// A dataFileWriter is not safe for concurrent use. After an error, the
// writer only aborts.
type dataFileWriter struct {
	tf      *tableFiles
	content string
	schema  *icebergo.Schema // schema of the file
	eqIDs   []int
	part    partitionKey // the partition of every row
	file    *parquetFile
	batcher *rowBatcher
	rows    int64
	pending int // rows in the batcher
	err     error
	done    bool
}

// newDataFileWriter starts a data file for rows of type rt, whose columns
// are matched to the table's columns by name (table columns rt lacks are
// written NULL and must be optional). The file is
// <table location>/data/<prefix>-<16 hex digits>.parquet.
func (tf *tableFiles) newDataFileWriter(rt *types.RowType, prefix string) (*dataFileWriter, error) {
	return tf.newRowFileWriter(contentData, tf.schema, tf.arrowSchema, rt, nil, prefix)
}

// newDataFileWriterAt is newDataFileWriter writing the file path the
// caller chose (a new file under the table's data directory).
func (tf *tableFiles) newDataFileWriterAt(rt *types.RowType, path string) (*dataFileWriter, error) {
	return tf.newRowFileWriterAt(contentData, tf.schema, tf.arrowSchema, rt, nil, path)
}

// newBatchFileWriterAt starts the data file path of the table's current
// schema, written only with AppendBatch.
func (tf *tableFiles) newBatchFileWriterAt(path string) (*dataFileWriter, error) {
	f, err := tf.createParquetFile(path, tf.arrowSchema)
	if err != nil {
		return nil, err
	}
	return &dataFileWriter{tf: tf, content: contentData, schema: tf.schema, file: f}, nil
}

// newRowFileWriter starts a file of content holding rows of type rt
// converted to the Iceberg schema sc (Arrow schema as).
func (tf *tableFiles) newRowFileWriter(content string, sc *icebergo.Schema, as *arrow.Schema, rt *types.RowType, eqIDs []int, prefix string) (*dataFileWriter, error) {
	return tf.newRowFileWriterAt(content, sc, as, rt, eqIDs, tf.newFilePath(prefix))
}

// newRowFileWriterAt is newRowFileWriter writing the file path.
func (tf *tableFiles) newRowFileWriterAt(content string, sc *icebergo.Schema, as *arrow.Schema, rt *types.RowType, eqIDs []int, path string) (*dataFileWriter, error) {
	b, err := newRowBatcher(rt, sc, as)
	if err != nil {
		return nil, fmt.Errorf("iceberg %s file: %w", content, err)
	}
	f, err := tf.createParquetFile(path, as)
	if err != nil {
		b.release()
		return nil, err
	}
	return &dataFileWriter{tf: tf, content: content, schema: sc, eqIDs: eqIDs, file: f, batcher: b}, nil
}

// Path returns the file's path.
func (w *dataFileWriter) Path() string { return w.file.path }

// SetPartition records that the file's rows are all of partition key (of
// a partitioned table); the file's description carries it.
func (w *dataFileWriter) SetPartition(key partitionKey) { w.part = key }

// Append appends row and returns its position (0-based) in the file.
func (w *dataFileWriter) Append(row types.Row) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.done {
		return 0, fmt.Errorf("iceberg file %s: Append after Close or Abort", w.file.path)
	}
	if err := w.batcher.append(row); err != nil {
		w.err = fmt.Errorf("iceberg file %s: row %d: %w", w.file.path, w.rows, err)
		return 0, w.err
	}
	pos := w.rows
	w.rows++
	w.pending++
	if w.pending == batchRows {
		if err := w.flush(); err != nil {
			return 0, err
		}
	}
	return pos, nil
}

// flush encodes the buffered rows into the Parquet file.
func (w *dataFileWriter) flush() error {
	if w.pending == 0 {
		return nil
	}
	rec := w.batcher.batch()
	w.pending = 0
	err := w.file.write(rec)
	rec.Release()
	if err != nil {
		w.err = err
	}
	return err
}

// SetKeyValue records a key-value pair in the file's Parquet footer.
func (w *dataFileWriter) SetKeyValue(key, value string) error { return w.file.setKeyValue(key, value) }

// AppendBatch appends the rows of rec, whose schema must be the file's
// Arrow schema, after the rows appended before.
func (w *dataFileWriter) AppendBatch(rec arrow.RecordBatch) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return fmt.Errorf("iceberg file %s: AppendBatch after Close or Abort", w.file.path)
	}
	if err := w.flush(); err != nil {
		return err
	}
	if err := w.file.write(rec); err != nil {
		w.err = err
		return err
	}
	w.rows += rec.NumRows()
	return nil
}

// Rows returns the number of rows appended.
func (w *dataFileWriter) Rows() int64 { return w.rows }

// Size returns the approximate size of the file so far, in bytes: the
// encoded and compressed pages, not the rows still buffered nor the page
// and dictionary each column is filling (see parquetFile.size), so a file
// rolled at a target size ends up somewhat larger.
func (w *dataFileWriter) Size() int64 { return w.file.size() }

// Close finishes the file and returns its description. A writer that got
// no rows writes no file: it returns a zero fileMeta (Path "") and removes
// the file.
func (w *dataFileWriter) Close() (fileMeta, error) {
	if w.err != nil {
		return fileMeta{}, w.err
	}
	if w.done {
		return fileMeta{}, fmt.Errorf("iceberg file %s: Close after Close or Abort", w.file.path)
	}
	if w.rows == 0 {
		return fileMeta{}, w.Abort()
	}
	if err := w.flush(); err != nil {
		return fileMeta{}, err
	}
	w.done = true
	w.batcher.release()
	md, size, err := w.file.close()
	if err != nil {
		return fileMeta{}, err
	}
	return w.tf.describe(w.content, w.schema, w.file.path, md, size, w.eqIDs, "", w.part)
}

// Abort stops writing and removes the file.
func (w *dataFileWriter) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.batcher.release()
	return w.file.abort()
}

// isNotExist reports whether err says a file does not exist.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
