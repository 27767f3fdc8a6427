package iceberg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	icebergo "github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
)

// dvFile is the deleted positions of one data file.
type dvFile struct {
	part partitionKey
	bm   *dv.RoaringPositionBitmap
}

// deletionVectorWriter collects the position deletes of format version 3
// tables and writes them as deletion vectors: one Puffin file holding one
// deletion vector per data file. The committer merges a new deletion
// vector with the one a data file already has (mergeDeletionVectors).
type deletionVectorWriter struct {
	tf     *tableFiles
	prefix string
	files  map[string]*dvFile
	order  []string
}

// newDeletionVectorWriter makes a deletion-vector writer whose file will
// be <data dir>/<prefix>-<16 hex digits>.puffin.
func (tf *tableFiles) newDeletionVectorWriter(prefix string) *deletionVectorWriter {
	return &deletionVectorWriter{tf: tf, prefix: prefix, files: map[string]*dvFile{}}
}

// Delete records that row pos of the data file path, of partition part,
// is deleted.
func (w *deletionVectorWriter) Delete(path string, pos int64, part partitionKey) {
	f := w.files[path]
	if f == nil {
		f = &dvFile{part: part, bm: dv.NewRoaringPositionBitmap()}
		w.files[path] = f
		w.order = append(w.order, path)
	}
	f.bm.Set(uint64(pos))
}

// Len returns the number of data files with deletes.
func (w *deletionVectorWriter) Len() int { return len(w.order) }

// Close writes the deletion vectors into one Puffin file and returns their
// descriptions, one per data file (all of the same path); none when no
// delete was recorded. The writer can be used again afterwards.
func (w *deletionVectorWriter) Close() ([]fileMeta, error) {
	if len(w.order) == 0 {
		return nil, nil
	}
	fields, err := specFieldTypes(w.tf.spec, w.tf.schema)
	if err != nil {
		return nil, fmt.Errorf("iceberg deletion vectors: %w", err)
	}
	spec := w.tf.spec
	dw := dv.NewDVWriter(w.tf.fs, func(id int32) *icebergo.PartitionSpec {
		if int(id) == spec.ID() {
			return &spec
		}
		return nil
	})
	for _, path := range w.order {
		f := w.files[path]
		var vals map[int]any
		if !spec.IsUnpartitioned() {
			if vals, err = partitionValues(f.part, fields); err != nil {
				return nil, fmt.Errorf("iceberg deletion vector of %s: %w", path, err)
			}
		}
		dw.Load(path, f.bm, int32(spec.ID()), vals)
	}
	loc := w.tf.newPuffinPath(w.prefix)
	dfs, err := dw.Flush(context.Background(), loc)
	if err != nil {
		_ = removeFiles(w.tf.fs, []string{loc})
		return nil, fmt.Errorf("iceberg deletion vectors %s: %w", loc, err)
	}
	out := make([]fileMeta, 0, len(dfs))
	for _, df := range dfs {
		m := fileMetaOf(df, contentPositionDeletes, spec.ID())
		if f := w.files[m.ReferencedDataFile]; f != nil && f.part != "" {
			m.Partition = []byte(f.part)
		}
		out = append(out, m)
	}
	w.Abort()
	return out, nil
}

// Abort drops the recorded deletes (no file exists before Close).
func (w *deletionVectorWriter) Abort() {
	clear(w.files)
	w.order = w.order[:0]
}

// newPuffinPath returns a new file path <data dir>/<prefix>-<16 random hex
// digits>.puffin.
func (tf *tableFiles) newPuffinPath(prefix string) string {
	return newPuffinPath(tf.dataDir, prefix)
}

func newPuffinPath(dir, prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return dir + "/" + prefix + "-" + hex.EncodeToString(b[:]) + ".puffin"
}

// mergeDeletionVectors makes the deletion vectors among deletes (for a
// commit to tbl) obey format version 3's rule of at most one live deletion
// vector per data file: the deletion vectors of one data file (several
// writers', and the one the table holds already) are merged into one,
// written into a new Puffin file, and the table's old one is returned to
// be removed in the same snapshot. It returns the delete files to add in
// place of deletes, and those to remove.
func mergeDeletionVectors(ctx context.Context, tbl *table.Table, fsys icebergio.WriteFileIO, deletes []icebergo.DataFile) (add, remove []icebergo.DataFile, err error) {
	byRef := map[string][]icebergo.DataFile{}
	var order []string
	for _, d := range deletes {
		if !table.IsDeletionVector(d) {
			add = append(add, d)
			continue
		}
		ref := d.ReferencedDataFile()
		if ref == nil || *ref == "" {
			return nil, nil, fmt.Errorf("deletion vector %s names no data file", d.FilePath())
		}
		if byRef[*ref] == nil {
			order = append(order, *ref)
		}
		byRef[*ref] = append(byRef[*ref], d)
	}
	if len(order) == 0 {
		return add, nil, nil
	}
	// The live deletion vectors of the data files, from the current
	// snapshot's delete manifests.
	live := map[string]icebergo.DataFile{}
	if snap := tbl.CurrentSnapshot(); snap != nil {
		mfs, err := snap.Manifests(fsys)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the manifest list of snapshot %d: %w", snap.SnapshotID, err)
		}
		for _, mf := range mfs {
			if mf.ManifestContent() != icebergo.ManifestContentDeletes {
				continue
			}
			entries, err := mf.FetchEntries(fsys, true)
			if err != nil {
				return nil, nil, fmt.Errorf("reading the delete manifest %s: %w", mf.FilePath(), err)
			}
			for _, e := range entries {
				df := e.DataFile()
				if !table.IsDeletionVector(df) || df.ReferencedDataFile() == nil {
					continue
				}
				if _, ok := byRef[*df.ReferencedDataFile()]; ok {
					live[*df.ReferencedDataFile()] = df
				}
			}
		}
	}
	specs := map[int32]*icebergo.PartitionSpec{}
	for _, s := range tbl.Metadata().PartitionSpecs() {
		s := s
		specs[int32(s.ID())] = &s
	}
	var dw *dv.DVWriter
	for _, ref := range order {
		news := byRef[ref]
		old, hasOld := live[ref]
		if len(news) == 1 && !hasOld {
			add = append(add, news[0])
			continue
		}
		if dw == nil {
			dw = dv.NewDVWriter(fsys, func(id int32) *icebergo.PartitionSpec { return specs[id] })
		}
		all := news
		if hasOld {
			all = append(all[:len(all):len(all)], old)
			remove = append(remove, old)
		}
		for _, d := range all {
			bm, err := dv.ReadDV(fsys, d)
			if err != nil {
				return nil, nil, fmt.Errorf("reading the deletion vector of %s in %s: %w", ref, d.FilePath(), err)
			}
			dw.Load(ref, bm, d.SpecID(), d.Partition())
		}
	}
	if dw == nil {
		return add, remove, nil
	}
	loc := newPuffinPath(dataDirOf(tbl), filePrefix+"-dv-merged")
	merged, err := dw.Flush(ctx, loc)
	if err != nil {
		return nil, nil, fmt.Errorf("writing the merged deletion vectors %s: %w", loc, err)
	}
	return append(add, merged...), remove, nil
}
