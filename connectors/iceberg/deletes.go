package iceberg

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	icebergo "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy/sql/types"
)

// positionDelete names one deleted row: a data file and the row's
// position in it.
type positionDelete struct {
	path string
	pos  int64
}

// positionDeleteWriter collects position deletes and writes them, sorted
// by file path and position as the Iceberg spec requires, into one
// Parquet position-delete file (file_path, pos: the reserved field ids
// 2147483546 and 2147483545). A partitioned table needs a writer per
// partition of the data files deleted from (SetPartition). Position
// deletes in Parquet are format version 2's: version 3 replaces them with
// deletion vectors (deletionVectorWriter).
type positionDeleteWriter struct {
	tf      *tableFiles
	prefix  string
	part    partitionKey // the partition of the data files deleted from
	deletes []positionDelete
}

// newPositionDeleteWriter makes a position-delete writer whose file will
// be <data dir>/<prefix>-<16 hex digits>.parquet.
func (tf *tableFiles) newPositionDeleteWriter(prefix string) *positionDeleteWriter {
	return &positionDeleteWriter{tf: tf, prefix: prefix}
}

// Delete records that row pos of the data file path is deleted.
func (w *positionDeleteWriter) Delete(path string, pos int64) {
	w.deletes = append(w.deletes, positionDelete{path, pos})
}

// SetPartition records that the deletes are all of data files of
// partition key: a partitioned table needs a delete file per partition.
func (w *positionDeleteWriter) SetPartition(key partitionKey) { w.part = key }

// Len returns the number of deletes recorded.
func (w *positionDeleteWriter) Len() int { return len(w.deletes) }

// Close writes the recorded deletes and returns the files written: none
// when no delete was recorded, else one, whose referenced data file is set
// when all deletes name the same data file. The writer can be used again
// afterwards (for the next checkpoint).
func (w *positionDeleteWriter) Close() ([]fileMeta, error) {
	if len(w.deletes) == 0 {
		return nil, nil
	}
	slices.SortFunc(w.deletes, func(a, b positionDelete) int {
		if c := cmp.Compare(a.path, b.path); c != 0 {
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	as := table.PositionalDeleteArrowSchema
	f, err := w.tf.createParquetFile(w.tf.newFilePath(w.prefix), as)
	if err != nil {
		return nil, fmt.Errorf("iceberg position-delete file: %w", err)
	}
	rb := array.NewRecordBuilder(arrowAllocator, as)
	defer rb.Release()
	paths := rb.Field(0).(*array.StringBuilder)
	poss := rb.Field(1).(*array.Int64Builder)
	referenced := w.deletes[0].path
	for start := 0; start < len(w.deletes); start += batchRows {
		end := min(start+batchRows, len(w.deletes))
		for _, d := range w.deletes[start:end] {
			paths.Append(d.path)
			poss.Append(d.pos)
			if d.path != referenced {
				referenced = ""
			}
		}
		rec := rb.NewRecordBatch()
		err := f.write(rec)
		rec.Release()
		if err != nil {
			_ = f.abort()
			return nil, err
		}
	}
	md, size, err := f.close()
	if err != nil {
		_ = f.abort()
		return nil, err
	}
	m, err := w.tf.describe(contentPositionDeletes, icebergo.PositionalDeleteSchema, f.path, md, size, nil, referenced, w.part)
	if err != nil {
		return nil, err
	}
	w.deletes = w.deletes[:0]
	return []fileMeta{m}, nil
}

// Abort drops the recorded deletes (no file exists before Close).
func (w *positionDeleteWriter) Abort() { w.deletes = w.deletes[:0] }

// equalityDeleteWriter writes an equality-delete file: rows holding only
// the key columns, each deleting every row of an earlier snapshot with
// the same key (the equality field ids are the key columns' field ids).
type equalityDeleteWriter struct {
	*dataFileWriter
}

// newEqualityDeleteWriter starts an equality-delete file for key rows of
// type keyType, whose fields are the table's key columns (by name). The
// file is <data dir>/<prefix>-<16 hex digits>.parquet. Append, Rows, Size,
// Close and Abort are those of dataFileWriter.
func (tf *tableFiles) newEqualityDeleteWriter(keyType *types.RowType, prefix string) (*equalityDeleteWriter, error) {
	all := make([]int, keyType.Len())
	for i := range all {
		all[i] = i
	}
	ids, err := keyFieldIDs(tf.schema, keyType, all)
	if err != nil {
		return nil, fmt.Errorf("iceberg equality-delete file: %w", err)
	}
	sc, err := tf.schema.Select(true, keyType.Names()...)
	if err != nil {
		return nil, fmt.Errorf("iceberg equality-delete file: selecting the key columns %v: %w", keyType.Names(), err)
	}
	var as *arrow.Schema
	if as, err = arrowSchema(sc); err != nil {
		return nil, fmt.Errorf("iceberg equality-delete file: %w", err)
	}
	w, err := tf.newRowFileWriter(contentEqualityDeletes, sc, as, keyType, ids, prefix)
	if err != nil {
		return nil, err
	}
	return &equalityDeleteWriter{w}, nil
}
