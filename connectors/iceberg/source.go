package iceberg

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// source reads an Iceberg table: one split per file scan task of a
// snapshot (a data file, with the delete files that apply to it). A batch
// read plans the chosen snapshot once; a streaming read also plans, every
// 'monitor-interval', the files each new snapshot appended, and for a
// changelog read the rows each new snapshot deletes (changelogSplits). A
// split's state holds how to plan it again (the snapshot and whether it is
// a full scan, an append or a file's deletions) and how many of its rows
// were emitted, which a restored reader skips.
type source struct {
	cfg   *sourceConfig
	table *connector.Table
	// cols are the columns of table.Schema the rows hold, in order; rt is
	// their row type.
	cols      []int
	rt        *types.RowType
	transient bool
}

func newSource(cfg *sourceConfig, t *connector.Table) (*source, error) {
	if len(t.Metadata) > 0 {
		return nil, connector.UnknownMetadata("iceberg", t.Metadata[0])
	}
	if cfg.streaming && len(t.PrimaryKey) > 0 && !cfg.changelog {
		c := *cfg
		c.changelog = true
		cfg = &c
	}
	cols := make([]int, t.Schema.Len())
	for i := range cols {
		cols[i] = i
	}
	return &source{cfg: cfg, table: t, cols: cols, rt: t.Schema}, nil
}

// ChangelogMode says that the source emits insertions only, or for a
// changelog read (see changelogSplits) insertions and deletions.
func (s *source) ChangelogMode() changelog.Mode {
	if s.cfg.streaming && s.cfg.changelog {
		return changelogMode
	}
	return changelog.InsertOnly
}

// KeepsSplitOrder implements connector.OrderedSplits: the splits of a
// changelog read, all read by the first reader, must stay in order there,
// or a row's deletion could come after its new values.
func (s *source) KeepsSplitOrder() bool { return s.cfg.streaming && s.cfg.changelog }

// ProjectFields returns the source reading the top-level columns at paths
// only; it cannot project fields of nested ROW values.
func (s *source) ProjectFields(paths [][]int) (connector.Source[connector.TableRecord], bool) {
	cols := make([]int, len(paths))
	fs := make([]types.Field, len(paths))
	for k, p := range paths {
		if len(p) != 1 || p[0] < 0 || p[0] >= len(s.cols) {
			return nil, false
		}
		cols[k] = s.cols[p[0]]
		fs[k] = s.table.Schema.Field(cols[k])
	}
	rt, err := types.NewRowType(fs...)
	if err != nil {
		return nil, false
	}
	out := *s
	out.cols, out.rt = cols, rt
	return &out, true
}

// TransientRows returns the source writing every row into the memory of
// the one before.
func (s *source) TransientRows() connector.Source[connector.TableRecord] {
	out := *s
	out.transient = true
	return &out
}

// columnNames returns the names of the columns read.
func (s *source) columnNames() []string {
	names := make([]string, len(s.cols))
	for k, i := range s.cols {
		names[k] = s.table.Schema.Field(i).Name
	}
	return names
}

// openTable opens the catalog and loads the table.
func (s *source) openTable(ctx context.Context) (catalog.Catalog, *table.Table, error) {
	c := s.cfg
	cat, err := openCatalog(ctx, c.catalogType, c.catalogName, c.uri, c.warehouse, c.props)
	if err != nil {
		return nil, nil, err
	}
	tbl, err := loadTable(ctx, cat, s.cfg)
	if err != nil {
		closeCatalog(cat)
		return nil, nil, err
	}
	return cat, tbl, nil
}

func loadTable(ctx context.Context, cat catalog.Catalog, c *sourceConfig) (*table.Table, error) {
	tbl, err := cat.LoadTable(ctx, tableIdentifier(c.namespace, c.table))
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, fmt.Errorf("%s does not exist: check 'catalog-database' and 'catalog-table', or create it first (an iceberg sink creates its table from its DDL): %w", c.where(), err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: loading it: %w", c.where(), err)
	}
	return tbl, nil
}

func closeCatalog(cat catalog.Catalog) {
	if c, ok := cat.(catalog.Closer); ok {
		_ = c.Close()
	}
}

// checkColumns checks that the table has every column read.
func (s *source) checkColumns(tbl *table.Table) error {
	sc := tbl.Schema()
	var missing []string
	for _, n := range s.columnNames() {
		if _, ok := sc.FindFieldByName(n); !ok {
			missing = append(missing, types.QuoteIdentifier(n))
		}
	}
	if len(missing) > 0 {
		var have []string
		for _, f := range sc.Fields() {
			have = append(have, f.Name)
		}
		return fmt.Errorf("%s has no column %s of the DDL (it has %s): remove the column from the DDL or add it to the table",
			s.cfg.where(), strings.Join(missing, ", "), strings.Join(have, ", "))
	}
	return nil
}

// snapshotError is the error of a snapshot id the table does not have.
func snapshotError(c *sourceConfig, tbl *table.Table, id int64, key string) error {
	snaps := append([]table.Snapshot(nil), tbl.Metadata().Snapshots()...)
	sort.Slice(snaps, func(i, j int) bool { return snaps[i].TimestampMs > snaps[j].TimestampMs })
	if len(snaps) == 0 {
		return optionError(key, fmt.Sprintf("is %d, but %s has no snapshot yet: it holds no rows", id, c.where()))
	}
	var ids []string
	for i := 0; i < len(snaps) && i < 5; i++ {
		ids = append(ids, strconv.FormatInt(snaps[i].SnapshotID, 10))
	}
	more := ""
	if len(snaps) > 5 {
		more = fmt.Sprintf(" (of %d)", len(snaps))
	}
	return optionError(key, fmt.Sprintf("is %d, but %s has no such snapshot (expired, or of another table); its newest snapshots%s are %s", id, c.where(), more, strings.Join(ids, ", ")))
}

// Kinds of split: a file scan task of a snapshot, with the deletes that
// apply to it, a data file a snapshot appended, or the rows of a data file
// a snapshot deleted (see changelogSplits).
const (
	splitScan    = 0
	splitAppend  = 1
	splitDeleted = 2
)

// fileSplit is a split: what to plan, the task's file and start, and the
// rows emitted so far.
type fileSplit struct {
	kind     byte
	snapshot int64
	path     string
	start    int64
	emitted  int64
}

func (f *fileSplit) id() string {
	if f.kind == splitDeleted { // a file has a split of deletions per snapshot deleting from it
		return f.path + " deleted by " + strconv.FormatInt(f.snapshot, 10)
	}
	if f.start == 0 {
		return f.path
	}
	return f.path + "@" + strconv.FormatInt(f.start, 10)
}

func (f *fileSplit) split() connector.Split {
	b := []byte{1, f.kind}
	b = binary.AppendVarint(b, f.snapshot)
	b = binary.AppendVarint(b, f.start)
	b = binary.AppendVarint(b, f.emitted)
	b = binary.AppendUvarint(b, uint64(len(f.path)))
	b = append(b, f.path...)
	return connector.Split{ID: f.id(), State: b}
}

func decodeFileSplit(s connector.Split) (*fileSplit, error) {
	b := s.State
	if len(b) < 2 || b[0] != 1 || b[1] > splitDeleted {
		return nil, fmt.Errorf("iceberg source: split %s: state is corrupt or from another source", s.ID)
	}
	f := &fileSplit{kind: b[1]}
	b = b[2:]
	for _, p := range []*int64{&f.snapshot, &f.start, &f.emitted} {
		v, n := binary.Varint(b)
		if n <= 0 {
			return nil, fmt.Errorf("iceberg source: split %s: state is truncated", s.ID)
		}
		*p, b = v, b[n:]
	}
	l, n := binary.Uvarint(b)
	if n <= 0 || uint64(len(b)-n) != l {
		return nil, fmt.Errorf("iceberg source: split %s: state is truncated", s.ID)
	}
	f.path = string(b[n:])
	return f, nil
}

// planKey names a plan: a full scan of a snapshot, or what it appended.
type planKey struct {
	kind     byte
	snapshot int64
}

// plan returns the file scan tasks of k, sorted by file and start.
func plan(ctx context.Context, tbl *table.Table, k planKey) ([]table.FileScanTask, error) {
	var tasks []table.FileScanTask
	var err error
	if k.kind == splitScan {
		tasks, err = tbl.Scan(table.WithSnapshotID(k.snapshot)).PlanFiles(ctx)
	} else {
		tasks, err = tbl.NewIncrementalAppendScan().FromSnapshotInclusive(k.snapshot).ToSnapshot(k.snapshot).PlanFiles(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("planning the files of snapshot %d: %w", k.snapshot, err)
	}
	sort.Slice(tasks, func(i, j int) bool {
		a, b := tasks[i], tasks[j]
		if a.File.FilePath() != b.File.FilePath() {
			return a.File.FilePath() < b.File.FilePath()
		}
		return a.Start < b.Start
	})
	return tasks, nil
}

// planSplits returns the splits of k.
func planSplits(ctx context.Context, tbl *table.Table, k planKey) ([]connector.Split, error) {
	tasks, err := plan(ctx, tbl, k)
	if err != nil {
		return nil, err
	}
	out := make([]connector.Split, len(tasks))
	for i, t := range tasks {
		f := fileSplit{kind: k.kind, snapshot: k.snapshot, path: t.File.FilePath(), start: t.Start}
		out[i] = f.split()
	}
	return out, nil
}

// batchSnapshot returns the snapshot a batch read reads, nil for a table
// without one.
func (s *source) batchSnapshot(tbl *table.Table) (*table.Snapshot, error) {
	c := s.cfg
	switch {
	case c.snapshotID != 0:
		snap := tbl.SnapshotByID(c.snapshotID)
		if snap == nil {
			return nil, snapshotError(c, tbl, c.snapshotID, "snapshot-id")
		}
		return snap, nil
	case c.asOfTimestamp >= 0:
		snap := tbl.SnapshotAsOf(c.asOfTimestamp, true)
		if snap == nil {
			return nil, optionError("as-of-timestamp", fmt.Sprintf("is %d, but %s had no snapshot then: give a later time", c.asOfTimestamp, c.where()))
		}
		return snap, nil
	}
	return tbl.CurrentSnapshot(), nil
}

func (s *source) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	if !s.cfg.streaming {
		return connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) {
			bg := context.Background()
			cat, tbl, err := s.openTable(bg)
			if err != nil {
				return nil, fmt.Errorf("iceberg source %q: %w", ctx.SourceName(), err)
			}
			defer closeCatalog(cat)
			if err := s.checkColumns(tbl); err != nil {
				return nil, fmt.Errorf("iceberg source %q: %w", ctx.SourceName(), err)
			}
			snap, err := s.batchSnapshot(tbl)
			if err != nil || snap == nil {
				return nil, err
			}
			splits, err := planSplits(bg, tbl, planKey{splitScan, snap.SnapshotID})
			if err != nil {
				return nil, fmt.Errorf("iceberg source %q: %s: %w", ctx.SourceName(), s.cfg.where(), err)
			}
			return splits, nil
		})
	}
	e := &follower{src: s, ctx: ctx}
	if len(restored) > 0 {
		if err := e.restore(restored); err != nil {
			return nil, fmt.Errorf("iceberg source %q: restoring the enumerator: %w", ctx.SourceName(), err)
		}
	}
	e.discover()
	ctx.Every(s.cfg.monitorInterval, func() error { e.discover(); return nil })
	return e, nil
}

// follower is the enumerator of a streaming read. Its position is the last
// snapshot whose files it planned (last, if hasLast); before its first
// discovery (started false) it starts per the starting strategy. New
// splits go round-robin to the readers; those not yet assigned are kept in
// its state.
type follower struct {
	src     *source
	ctx     connector.EnumeratorContext
	started bool
	hasLast bool
	last    int64
	pending []connector.Split
	readers []int
	next    int
	busy    bool
	cat     catalog.Catalog // opened by the first discovery, on its goroutine
}

// position is the part of the follower's state a discovery starts from.
type position struct {
	started, hasLast bool
	last             int64
}

// discovered is what a discovery found.
type discovered struct {
	pos    position
	splits []connector.Split
}

// discover plans the snapshots committed since the last discovery, unless
// one is under way.
func (e *follower) discover() {
	if e.busy {
		return
	}
	e.busy = true
	pos := position{e.started, e.hasLast, e.last}
	e.ctx.CallAsync(func() (any, error) { return e.find(pos) }, func(res any, err error) error {
		e.busy = false
		if err != nil {
			return fmt.Errorf("iceberg source %q: %w", e.ctx.SourceName(), err)
		}
		d := res.(discovered)
		e.started, e.hasLast, e.last = d.pos.started, d.pos.hasLast, d.pos.last
		e.pending = append(e.pending, d.splits...)
		e.assign()
		return nil
	})
}

// find runs on a goroutine of its own: it loads the table and plans what
// was committed after pos.
func (e *follower) find(pos position) (discovered, error) {
	ctx := context.Background()
	c := e.src.cfg
	if e.cat == nil {
		cat, err := openCatalog(ctx, c.catalogType, c.catalogName, c.uri, c.warehouse, c.props)
		if err != nil {
			return discovered{}, err
		}
		e.cat = cat
	}
	tbl, err := loadTable(ctx, e.cat, c)
	if err != nil {
		return discovered{}, err
	}
	if err := e.src.checkColumns(tbl); err != nil {
		return discovered{}, err
	}
	cur := tbl.CurrentSnapshot()
	var from int64 // the first snapshot to read, inclusive; 0: the oldest
	if !pos.started {
		pos.started = true
		if cur == nil {
			return discovered{pos: pos}, nil // every snapshot to come is read
		}
		switch c.startingStrategy {
		case startTableScanThenIncremental:
			splits, err := planSplits(ctx, tbl, planKey{splitScan, cur.SnapshotID})
			if err != nil {
				return discovered{}, fmt.Errorf("%s: %w", c.where(), err)
			}
			pos.hasLast, pos.last = true, cur.SnapshotID
			return discovered{pos: pos, splits: splits}, nil
		case startFromLatestSnapshot:
			from = cur.SnapshotID
		case startFromEarliestSnapshot:
		case startFromSnapshotID:
			if tbl.SnapshotByID(c.startSnapshotID) == nil {
				return discovered{}, snapshotError(c, tbl, c.startSnapshotID, "start-snapshot-id")
			}
			from = c.startSnapshotID
		case startFromSnapshotTimestamp:
			from = -1
			for _, s := range table.AncestorsOf(cur.SnapshotID, tbl.SnapshotByID) {
				if s.TimestampMs >= c.startSnapshotTime {
					from = s.SnapshotID
				}
			}
			if from == -1 { // every snapshot is older: start after the current one
				pos.hasLast, pos.last = true, cur.SnapshotID
				return discovered{pos: pos}, nil
			}
		}
	}
	if cur == nil || (pos.hasLast && cur.SnapshotID == pos.last) {
		return discovered{pos: pos}, nil
	}
	// The snapshots to read, newest first: the ancestors of the current
	// one down to the last one read (exclusive) or the first one to read.
	var todo []table.Snapshot
	found := false
	for _, s := range table.AncestorsOf(cur.SnapshotID, tbl.SnapshotByID) {
		if pos.hasLast && s.SnapshotID == pos.last {
			found = true
			break
		}
		todo = append(todo, s)
		if from != 0 && s.SnapshotID == from {
			found = true
			break
		}
	}
	switch {
	case pos.hasLast && !found:
		return discovered{}, fmt.Errorf("%s: snapshot %d, the last one read, is no longer an ancestor of the current snapshot %d (it expired, or the table was rolled back), so the snapshots since cannot be found: "+
			"expire snapshots more slowly than the source reads them, and start a new job (with 'starting-strategy')", c.where(), pos.last, cur.SnapshotID)
	case from != 0 && !found:
		return discovered{}, fmt.Errorf("%s: the first snapshot to read, %d, is not an ancestor of the current snapshot %d: choose another 'start-snapshot-id'", c.where(), from, cur.SnapshotID)
	}
	var splits []connector.Split
	for i := len(todo) - 1; i >= 0; i-- {
		s := todo[i]
		op := ""
		if s.Summary != nil {
			op = string(s.Summary.Operation)
		}
		switch op {
		case string(table.OpAppend):
			more, err := planSplits(ctx, tbl, planKey{splitAppend, s.SnapshotID})
			if err != nil {
				return discovered{}, fmt.Errorf("%s: %w", c.where(), err)
			}
			splits = append(splits, more...)
		case string(table.OpReplace):
			// Rewritten files (compaction) hold the same rows.
		default:
			if !c.changelog {
				return discovered{}, deletingSnapshotError(c, s, op)
			}
			more, err := changelogSplits(ctx, tbl, s)
			if err != nil {
				return discovered{}, fmt.Errorf("%s: %w", c.where(), err)
			}
			splits = append(splits, more...)
		}
	}
	pos.hasLast, pos.last = true, cur.SnapshotID
	return discovered{pos: pos, splits: splits}, nil
}

// deletingSnapshotError is the error of a streaming read reaching a
// snapshot that deletes or overwrites rows.
func deletingSnapshotError(c *sourceConfig, s table.Snapshot, op string) error {
	var what []string
	if s.Summary != nil {
		for _, k := range []string{"deleted-data-files", "deleted-records", "added-position-deletes", "added-equality-deletes", "added-delete-files"} {
			if v := s.Summary.Properties[k]; v != "" && v != "0" {
				what = append(what, k+"="+v)
			}
		}
	}
	detail := ""
	if len(what) > 0 {
		detail = " (" + strings.Join(what, ", ") + ")"
	}
	return fmt.Errorf("%s: snapshot %d is a %q commit%s, which deletes or replaces rows; a streaming read emits the rows snapshots append, as insertions, and would lose those deletions: "+
		"streaming reads of upsert tables (an iceberg sink with a PRIMARY KEY, or other writers' updates and deletes) need a changelog read: declare the table's PRIMARY KEY in the DDL or set 'streaming-changelog' = 'true' (the query must then take deletions), "+
		"or read the table in batch ('streaming' = 'false')", c.where(), s.SnapshotID, op, detail)
}

func (e *follower) assign() {
	if len(e.readers) == 0 {
		return
	}
	if e.src.cfg.changelog {
		// The reader of subtask 0 reads every change, in order: a row's
		// deletion comes before its new values.
		if len(e.pending) > 0 && e.readers[0] == 0 {
			e.ctx.AssignSplits(0, e.pending...)
			e.pending = nil
		}
		return
	}
	for _, s := range e.pending {
		r := e.readers[e.next%len(e.readers)]
		e.next++
		e.ctx.AssignSplits(r, s)
	}
	e.pending = nil
}

func (e *follower) AddReader(subtask int) error {
	e.readers = append(e.readers, subtask)
	sort.Ints(e.readers)
	e.assign()
	return nil
}

func (e *follower) HandleSplitRequest(int) error { return nil }

func (e *follower) HandleEvent(subtask int, _ []byte) error {
	return fmt.Errorf("iceberg source %q: unexpected event from reader %d", e.ctx.SourceName(), subtask)
}

// SnapshotState encodes the position and the splits not yet assigned.
func (e *follower) SnapshotState(int64) ([]byte, error) {
	var flags byte
	if e.started {
		flags |= 1
	}
	if e.hasLast {
		flags |= 2
	}
	b := []byte{1, flags}
	b = binary.AppendVarint(b, e.last)
	return append(b, connector.EncodeSplits(e.pending)...), nil
}

func (e *follower) restore(b []byte) error {
	if len(b) < 2 || b[0] != 1 {
		return errors.New("state is corrupt or from another source")
	}
	e.started, e.hasLast = b[1]&1 != 0, b[1]&2 != 0
	last, n := binary.Varint(b[2:])
	if n <= 0 {
		return errors.New("state is truncated")
	}
	e.last = last
	splits, err := connector.DecodeSplits(b[2+n:])
	if err != nil {
		return err
	}
	e.pending = splits
	return nil
}

// Close closes the catalog. A discovery under way may still use it; it
// then fails, and its result is dropped with the job.
func (e *follower) Close() error {
	if e.cat != nil && !e.busy {
		closeCatalog(e.cat)
	}
	return nil
}

func (s *source) NewReader(ctx connector.ReaderContext) (connector.Reader[connector.TableRecord], error) {
	arena := types.NewArena(0)
	if s.transient {
		arena = types.NewScratchArena()
	}
	rr, err := newRowReader(s.rt, arena, s.cfg.where())
	if err != nil {
		return nil, err
	}
	return &reader{src: s, name: ctx.SourceName(), rows: rr, plans: map[planKey][]table.FileScanTask{}}, nil
}

// reader reads its splits one after the other, a record batch at a time.
type reader struct {
	src    *source
	name   string
	rows   *rowReader
	cat    catalog.Catalog
	tbl    *table.Table
	plans  map[planKey][]table.FileScanTask
	splits []*fileSplit
	// deleted is the reading of the splitDeleted being read.
	deleted *deletedRows

	// The split being read: its batches, the batch being emitted and the
	// index of its next row, and how many rows are still to skip.
	next  func() (arrow.RecordBatch, error, bool)
	stop  func()
	batch arrow.RecordBatch
	pos   int
	skip  int64
	out   connector.SplitOutput[connector.TableRecord]
}

func (r *reader) AddSplits(splits []connector.Split) error {
	for _, s := range splits {
		f, err := decodeFileSplit(s)
		if err != nil {
			return err
		}
		r.splits = append(r.splits, f)
	}
	return nil
}

// planned returns the file scan tasks of plan k, planning its snapshot
// (and loading the table again for a snapshot it does not know) if needed.
func (r *reader) planned(ctx context.Context, k planKey) ([]table.FileScanTask, error) {
	if tasks, ok := r.plans[k]; ok {
		return tasks, nil
	}
	if r.cat == nil {
		cat, tbl, err := r.src.openTable(ctx)
		if err != nil {
			return nil, err
		}
		r.cat, r.tbl = cat, tbl
	}
	if r.tbl.SnapshotByID(k.snapshot) == nil {
		tbl, err := loadTable(ctx, r.cat, r.src.cfg)
		if err != nil {
			return nil, err
		}
		r.tbl = tbl
		if tbl.SnapshotByID(k.snapshot) == nil {
			return nil, fmt.Errorf("%s: snapshot %d is gone (expired): expire snapshots more slowly than the job reads them", r.src.cfg.where(), k.snapshot)
		}
	}
	tasks, err := plan(ctx, r.tbl, k)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.src.cfg.where(), err)
	}
	r.plans[k] = tasks
	return tasks, nil
}

// task returns the file scan task of split f.
func (r *reader) task(ctx context.Context, f *fileSplit) (table.FileScanTask, error) {
	tasks, err := r.planned(ctx, planKey{f.kind, f.snapshot})
	if err != nil {
		return table.FileScanTask{}, fmt.Errorf("split %s: %w", f.id(), err)
	}
	for _, t := range tasks {
		if t.File.FilePath() == f.path && t.Start == f.start {
			return t, nil
		}
	}
	return table.FileScanTask{}, fmt.Errorf("%s: snapshot %d has no file %s any more", r.src.cfg.where(), f.snapshot, f.id())
}

// open starts reading split f.
func (r *reader) open(out connector.Output[connector.TableRecord], f *fileSplit) error {
	ctx := context.Background()
	t, err := r.task(ctx, f)
	if err != nil {
		return err
	}
	scan := r.tbl.Scan(table.WithSnapshotID(f.snapshot), table.WithSelectedFields(r.src.columnNames()...))
	_, seq, err := scan.ReadTasks(ctx, []table.FileScanTask{t})
	if err != nil {
		return fmt.Errorf("%s: reading %s: %w", r.src.cfg.where(), f.path, err)
	}
	r.next, r.stop = iter.Pull2(seq)
	r.skip = f.emitted
	r.out = out.Split(f.id())
	return nil
}

// closeSplit stops reading the split being read.
func (r *reader) closeSplit() {
	if r.batch != nil {
		r.batch.Release()
		r.batch = nil
	}
	if r.stop != nil {
		r.stop()
	}
	if r.deleted != nil {
		r.deleted.close()
	}
	r.next, r.stop, r.out, r.deleted = nil, nil, nil, nil
}

func (r *reader) Read(out connector.Output[connector.TableRecord]) error {
	for out.Room() > 0 && len(r.splits) > 0 {
		f := r.splits[0]
		if f.kind == splitDeleted {
			if r.deleted == nil {
				if err := r.openDeleted(out, f); err != nil {
					return err
				}
			}
			done, err := r.readDeleted(out, f)
			if err != nil {
				return err
			}
			if done {
				r.out.Finish()
				r.closeSplit()
				r.splits = r.splits[1:]
				r.forget(f)
			}
			continue
		}
		if r.next == nil {
			if err := r.open(out, f); err != nil {
				return err
			}
		}
		if r.batch == nil || r.pos >= int(r.batch.NumRows()) {
			if r.batch != nil {
				r.batch.Release()
				r.batch = nil
			}
			b, err, ok := r.next()
			if err != nil {
				return fmt.Errorf("%s: reading %s: %w", r.src.cfg.where(), f.path, err)
			}
			if !ok {
				r.out.Finish()
				r.closeSplit()
				r.splits = r.splits[1:]
				r.forget(f)
				continue
			}
			r.batch, r.pos = b, 0
			if r.skip > 0 {
				n := min(r.skip, b.NumRows())
				r.pos, r.skip = int(n), r.skip-n
				if r.pos >= int(b.NumRows()) {
					continue
				}
			}
			if err := r.rows.bind(b); err != nil {
				return err
			}
		}
		n := int(r.batch.NumRows())
		for r.pos < n && out.Room() > 0 {
			row, err := r.rows.row(r.pos)
			if err != nil {
				return fmt.Errorf("%s, row %d: %w", f.path, f.emitted, err)
			}
			r.out.Emit(connector.TableRecord{Kind: changelog.Insert, Row: row})
			r.pos++
			f.emitted++
		}
	}
	return nil
}

// forget drops the plans a finished split read once no split left needs
// them.
func (r *reader) forget(f *fileSplit) {
	needed := map[planKey]bool{}
	for _, g := range r.splits {
		if g.kind != splitDeleted {
			needed[planKey{g.kind, g.snapshot}] = true
			continue
		}
		needed[planKey{splitScan, g.snapshot}] = true
		needed[planKey{splitScan, r.parentOf(g.snapshot)}] = true
	}
	for k := range r.plans {
		if !needed[k] {
			delete(r.plans, k)
		}
	}
}

// parentOf returns the id of the parent of snapshot id, or 0.
func (r *reader) parentOf(id int64) int64 {
	if r.tbl == nil {
		return 0
	}
	if s := r.tbl.SnapshotByID(id); s != nil && s.ParentSnapshotID != nil {
		return *s.ParentSnapshotID
	}
	return 0
}

func (r *reader) SnapshotState(int64) ([]connector.Split, error) {
	out := make([]connector.Split, len(r.splits))
	for i, f := range r.splits {
		out[i] = f.split()
	}
	return out, nil
}

func (r *reader) Close() error {
	r.closeSplit()
	if r.cat != nil {
		closeCatalog(r.cat)
	}
	return nil
}
