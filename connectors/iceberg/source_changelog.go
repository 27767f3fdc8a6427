package iceberg

import (
	"context"
	"fmt"
	"iter"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	icebergo "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// changelogMode is the mode of a changelog read: insertions, and
// deletions carrying the deleted row's values. An update of a row is its
// deletion followed by the insertion of its new values, so operators that
// take retractions (aggregations, joins) take the stream as it is.
var changelogMode = changelog.ModeOf(changelog.Insert, changelog.Delete)

// A streaming changelog read turns a snapshot that deletes or overwrites
// rows into splits of two kinds, all of them read by one reader in the
// order planned, so that a row's deletion is never overtaken by its new
// values:
//
//   - for each data file whose deletes changed (new position deletes,
//     deletion vectors or equality deletes that apply to it) or that the
//     snapshot removed, a splitDeleted: the rows of the file live in the
//     snapshot's parent but not in the snapshot, as deletions;
//   - then, for each data file the snapshot added, a splitScan of the
//     snapshot for that file: its rows, less those the snapshot's own
//     deletes remove, as insertions.
//
// The rows of a splitDeleted are found by reading the data file twice, with
// the deletes of the parent and with those of the snapshot: the second is
// the first less some rows, in the same order, so the rows of the first
// that the second lacks are found in one pass. A split records how many
// deletions it emitted, like any other; a restored reader runs the pass
// again and skips them.

// deleteFiles returns the delete files that apply to the data file of t
// in its plan, by an id: "p:" and the path for a position-delete file,
// "e:" and the path for an equality-delete file, "d:", the path and the
// offset for a deletion vector.
func deleteFiles(t table.FileScanTask) map[string]icebergo.DataFile {
	out := map[string]icebergo.DataFile{}
	for _, d := range t.DeleteFiles {
		out["p:"+d.FilePath()] = d
	}
	for _, d := range t.EqualityDeleteFiles {
		out["e:"+d.FilePath()] = d
	}
	for _, d := range t.DeletionVectorFiles {
		id := "d:" + d.FilePath()
		if off := d.ContentOffset(); off != nil {
			id += "@" + strconv.FormatInt(*off, 10)
		}
		out[id] = d
	}
	return out
}

// changelogSplits returns the splits of snapshot s of a changelog read:
// the deletions of the rows it removes from older data files, then the
// insertions of the rows of the data files it adds.
func changelogSplits(ctx context.Context, tbl *table.Table, s table.Snapshot) ([]connector.Split, error) {
	after, err := plan(ctx, tbl, planKey{splitScan, s.SnapshotID})
	if err != nil {
		return nil, err
	}
	var before []table.FileScanTask
	if s.ParentSnapshotID != nil {
		if tbl.SnapshotByID(*s.ParentSnapshotID) == nil {
			return nil, fmt.Errorf("snapshot %d: its parent snapshot %d is gone (expired), so the rows it deletes cannot be read: expire snapshots more slowly than the source reads them", s.SnapshotID, *s.ParentSnapshotID)
		}
		if before, err = plan(ctx, tbl, planKey{splitScan, *s.ParentSnapshotID}); err != nil {
			return nil, err
		}
	}
	afterDeletes := map[string]map[string]icebergo.DataFile{}
	for _, t := range after {
		afterDeletes[t.File.FilePath()] = deleteFiles(t)
	}
	targets := positionDeleteTargets{tbl: tbl, paths: map[string]map[string]bool{}}
	var out []connector.Split
	old := map[string]bool{}
	for _, t := range before { // sorted by path
		p := t.File.FilePath()
		if old[p] {
			continue
		}
		old[p] = true
		now, kept := afterDeletes[p]
		if kept {
			changed, err := targets.deletesFrom(ctx, p, deleteFiles(t), now)
			if err != nil {
				return nil, fmt.Errorf("snapshot %d: %w", s.SnapshotID, err)
			}
			if !changed {
				continue
			}
		}
		f := fileSplit{kind: splitDeleted, snapshot: s.SnapshotID, path: p}
		out = append(out, f.split())
	}
	for _, t := range after {
		if !old[t.File.FilePath()] {
			f := fileSplit{kind: splitScan, snapshot: s.SnapshotID, path: t.File.FilePath(), start: t.Start}
			out = append(out, f.split())
		}
	}
	return out, nil
}

// positionDeleteTargets finds the data files position-delete files name.
type positionDeleteTargets struct {
	tbl   *table.Table
	paths map[string]map[string]bool // delete file -> data files it names
}

// deletesFrom reports whether the delete files of the data file path
// change from was to now in a way that may delete rows of it: a position-
// delete file added that names another data file only (as a file of many
// data files' deletes may) does not.
func (p *positionDeleteTargets) deletesFrom(ctx context.Context, path string, was, now map[string]icebergo.DataFile) (bool, error) {
	for id := range was {
		if _, ok := now[id]; !ok {
			return true, nil // a delete file replaced (a merged deletion vector) or dropped
		}
	}
	for id, d := range now {
		if _, ok := was[id]; ok {
			continue
		}
		if !strings.HasPrefix(id, "p:") {
			return true, nil
		}
		if ref := d.ReferencedDataFile(); ref != nil {
			if *ref == path {
				return true, nil
			}
			continue
		}
		named, ok := p.paths[d.FilePath()]
		if !ok {
			var err error
			if named, err = readPositionDeleteTargets(ctx, p.tbl, d.FilePath()); err != nil {
				return false, err
			}
			p.paths[d.FilePath()] = named
		}
		if named[path] {
			return true, nil
		}
	}
	return false, nil
}

// readPositionDeleteTargets returns the data files the position-delete
// file p names.
func readPositionDeleteTargets(ctx context.Context, tbl *table.Table, p string) (map[string]bool, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("opening the file IO of %s: %w", tbl.Location(), err)
	}
	out := map[string]bool{}
	err = scanPositionDeletes(ctx, fsys, p, []int{0}, func(rec arrow.RecordBatch) error {
		paths, ok := rec.Column(0).(interface{ Value(int) string })
		if !ok {
			return fmt.Errorf("the position-delete file %s has a first column of %s, not file_path string", p, rec.Column(0).DataType())
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			out[paths.Value(i)] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// recordCursor walks the rows of a sequence of record batches.
type recordCursor struct {
	next  func() (arrow.RecordBatch, error, bool)
	stop  func()
	batch arrow.RecordBatch
	pos   int
	done  bool
	cols  []int // batch column of each compared column
}

func newRecordCursor(seq iter.Seq2[arrow.RecordBatch, error]) *recordCursor {
	next, stop := iter.Pull2(seq)
	return &recordCursor{next: next, stop: stop}
}

// fill makes the cursor point at a row, reading batches as needed; it
// returns false at the end. newBatch is called with each new batch.
func (c *recordCursor) fill(newBatch func(*recordCursor) error) (bool, error) {
	for !c.done && (c.batch == nil || c.pos >= int(c.batch.NumRows())) {
		if c.batch != nil {
			c.batch.Release()
			c.batch = nil
		}
		b, err, ok := c.next()
		if err != nil {
			return false, err
		}
		if !ok {
			c.done = true
			break
		}
		c.batch, c.pos = b, 0
		if err := newBatch(c); err != nil {
			return false, err
		}
	}
	return !c.done, nil
}

func (c *recordCursor) close() {
	if c.batch != nil {
		c.batch.Release()
		c.batch = nil
	}
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
}

// deletedRows is the reading of a splitDeleted under way.
type deletedRows struct {
	before, after *recordCursor
	names         []string // the compared columns
}

func (d *deletedRows) close() {
	d.before.close()
	d.after.close()
}

// bindColumns finds the compared columns in the cursor's batch.
func (d *deletedRows) bindColumns(c *recordCursor) error {
	s := c.batch.Schema()
	c.cols = c.cols[:0]
	for _, n := range d.names {
		ks := s.FieldIndices(n)
		if len(ks) == 0 {
			return fmt.Errorf("the rows read lack column %s", n)
		}
		c.cols = append(c.cols, ks[0])
	}
	return nil
}

// same reports whether the rows the cursors point at are equal.
func (d *deletedRows) same() bool {
	b, a := d.before, d.after
	for k := range b.cols {
		if !valueEqual(b.batch.Column(b.cols[k]), b.pos, a.batch.Column(a.cols[k]), a.pos) {
			return false
		}
	}
	return true
}

// valueEqual reports whether value i of x equals value j of y (NULLs are
// equal, and so are NaNs).
func valueEqual(x arrow.Array, i int, y arrow.Array, j int) bool {
	xn, yn := x.IsNull(i), y.IsNull(j)
	if xn || yn {
		return xn == yn
	}
	switch a := x.(type) {
	case *array.Int64:
		if b, ok := y.(*array.Int64); ok {
			return a.Value(i) == b.Value(j)
		}
	case *array.Int32:
		if b, ok := y.(*array.Int32); ok {
			return a.Value(i) == b.Value(j)
		}
	case *array.String:
		if b, ok := y.(*array.String); ok {
			return a.Value(i) == b.Value(j)
		}
	case *array.LargeString:
		if b, ok := y.(*array.LargeString); ok {
			return a.Value(i) == b.Value(j)
		}
	}
	return array.SliceApproxEqual(x, int64(i), int64(i+1), y, int64(j), int64(j+1), array.WithNaNsEqual(true), array.WithAbsTolerance(0))
}

// tasksOf returns the file scan tasks of path in the plan k, planning it
// if needed.
func (r *reader) tasksOf(ctx context.Context, k planKey, path string) ([]table.FileScanTask, error) {
	tasks, err := r.planned(ctx, k)
	if err != nil {
		return nil, err
	}
	var out []table.FileScanTask
	for _, t := range tasks {
		if t.File.FilePath() == path {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out, nil
}

// openDeleted starts reading the splitDeleted f: the rows of its file live
// in the parent of its snapshot, and those live in its snapshot.
func (r *reader) openDeleted(out connector.Output[connector.TableRecord], f *fileSplit) error {
	ctx := context.Background()
	if _, err := r.planned(ctx, planKey{splitScan, f.snapshot}); err != nil {
		return err
	}
	snap := r.tbl.SnapshotByID(f.snapshot)
	if snap.ParentSnapshotID == nil {
		return fmt.Errorf("%s: snapshot %d of split %s has no parent, so it deletes no row of an older file", r.src.cfg.where(), f.snapshot, f.id())
	}
	parent := *snap.ParentSnapshotID
	if r.tbl.SnapshotByID(parent) == nil {
		return fmt.Errorf("%s: snapshot %d, the parent of snapshot %d of split %s, is gone (expired): expire snapshots more slowly than the job reads them", r.src.cfg.where(), parent, f.snapshot, f.id())
	}
	before, err := r.tasksOf(ctx, planKey{splitScan, parent}, f.path)
	if err != nil {
		return err
	}
	after, err := r.tasksOf(ctx, planKey{splitScan, f.snapshot}, f.path)
	if err != nil {
		return err
	}
	names := r.src.columnNames()
	read := func(id int64, tasks []table.FileScanTask) (*recordCursor, error) {
		scan := r.tbl.Scan(table.WithSnapshotID(id), table.WithSelectedFields(names...))
		_, seq, err := scan.ReadTasks(ctx, tasks)
		if err != nil {
			return nil, fmt.Errorf("%s: reading %s as of snapshot %d: %w", r.src.cfg.where(), f.path, id, err)
		}
		return newRecordCursor(seq), nil
	}
	d := &deletedRows{names: names}
	if d.before, err = read(parent, before); err != nil {
		return err
	}
	if len(after) == 0 { // the snapshot removed the file: every live row is deleted
		d.after = &recordCursor{done: true}
	} else if d.after, err = read(f.snapshot, after); err != nil {
		d.before.close()
		return err
	}
	r.deleted = d
	r.skip = f.emitted
	r.out = out.Split(f.id())
	return nil
}

// readDeleted emits the deletions of the splitDeleted f being read until
// out has no room or the split is finished (it then returns true).
func (r *reader) readDeleted(out connector.Output[connector.TableRecord], f *fileSplit) (bool, error) {
	d := r.deleted
	bindBefore := func(c *recordCursor) error {
		if err := d.bindColumns(c); err != nil {
			return err
		}
		return r.rows.bind(c.batch)
	}
	for out.Room() > 0 {
		ok, err := d.before.fill(bindBefore)
		if err != nil {
			return false, fmt.Errorf("%s: reading %s: %w", r.src.cfg.where(), f.path, err)
		}
		if !ok {
			more, err := d.after.fill(d.bindColumns)
			if err != nil {
				return false, fmt.Errorf("%s: reading %s: %w", r.src.cfg.where(), f.path, err)
			}
			if more {
				return false, fmt.Errorf("%s: file %s holds rows as of snapshot %d that it did not hold before: the table's files changed in a way a changelog read cannot follow", r.src.cfg.where(), f.path, f.snapshot)
			}
			return true, nil
		}
		live, err := d.after.fill(d.bindColumns)
		if err != nil {
			return false, fmt.Errorf("%s: reading %s: %w", r.src.cfg.where(), f.path, err)
		}
		if live && d.same() { // the row is still there
			d.before.pos++
			d.after.pos++
			continue
		}
		if r.skip > 0 {
			r.skip--
		} else {
			row, err := r.rows.row(d.before.pos)
			if err != nil {
				return false, fmt.Errorf("%s: %w", f.path, err)
			}
			r.out.Emit(connector.TableRecord{Kind: changelog.Delete, Row: row})
			f.emitted++
		}
		d.before.pos++
	}
	return false, nil
}
