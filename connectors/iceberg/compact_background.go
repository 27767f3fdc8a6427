package iceberg

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	icebergo "github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
)

// A compaction runs in two parts. The rewrite (prepare) runs in the
// background, on a fixed snapshot of the table (its base), while the
// committer goes on committing checkpoints; the commit (commitPrepared)
// runs on the committer's goroutine, between two checkpoints' commits,
// and commits the rewrite as a replace snapshot of its own. The deletes
// committed since the base to rows of the rewritten files are moved to the
// rows' new places in that snapshot, so that nothing a checkpoint deleted
// comes back.
//
// Nothing of a compaction is in a checkpoint: a job that fails or stops
// while one runs removes the files it wrote (Close), and after a crash
// they are orphans, which orphan-file removal takes. The rows' moves are
// recorded in the footers of the compacted files, which a restored
// committer reads (load).

// compaction is a compaction rewritten but not yet committed.
type compaction struct {
	// fs is the file IO the new files were written with.
	fs icebergio.IO
	// baseSeq is the sequence number of the base snapshot, which the new
	// data files take: deletes committed after the base apply to them.
	baseSeq int64
	// baseDeletes holds the delete files of the base snapshot (deleteKey),
	// whose deletes of the chosen files' rows are applied already.
	baseDeletes map[string]bool
	// chosen are the data files rewritten.
	chosen   []icebergo.DataFile
	isChosen map[string]bool
	// added describes the new data files, outs what they hold.
	added []icebergo.DataFile
	outs  []compactOutput
	// rows maps each chosen file to where its live rows are: an entry
	// whose From is the chosen file and To a new file.
	rows map[string]*movedEntry
	// superseded are the files of the compactor's moved entries whose
	// rows were in chosen compacted files: outs' entries replace them.
	superseded []string
	// partOf holds the partition values of each new file.
	partOf map[string]map[int]any
	// specID is the partition spec of the new files.
	specID int
}

// compactOutput is a data file a compaction wrote.
type compactOutput struct {
	path    string
	rows    int64
	entries []*movedEntry
}

// remove removes the new files of a compaction that will not commit.
func (p *compaction) remove() {
	for _, o := range p.outs {
		_ = removeFiles(p.fs, []string{o.path})
	}
}

// deleteKey identifies a delete file of a snapshot: its path, and for a
// deletion vector (several share a Puffin file) its blob's offset.
func deleteKey(d icebergo.DataFile) string {
	if off := d.ContentOffset(); off != nil {
		return d.FilePath() + "#" + strconv.FormatInt(*off, 10)
	}
	return d.FilePath()
}

// compactionHold, when set (by tests), is called by a background
// compaction once its rewrite is done, before the committer may commit
// it: a test holds the compaction there while checkpoints commit.
var compactionHold func(ctx context.Context)

// compactionCommitted, when set (by tests), is called after a compaction
// committed, with the number of deletes committed during its rewrite that
// it moved to the rows' new places.
var compactionCommitted func(movedDeletes int)

// backgroundRun is a compaction running in the background.
type backgroundRun struct {
	done   chan struct{}
	cancel context.CancelFunc
	// p and err are the outcome, set before done is closed; p is nil when
	// there was nothing to compact.
	p   *compaction
	err error
}

// startBackground starts a compaction of the current snapshot of tbl in
// the background. The rewrite reads a table of its own with tbl's
// metadata, and the moves the compactor knows now; it uses the delete
// reference cache (refs), which the committer leaves alone until it has
// collected the run.
func (c *compactor) startBackground(ctx context.Context, tbl *table.Table) error {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	if err := c.load(tbl, fsys); err != nil {
		return err
	}
	base := table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(),
		func(context.Context) (icebergio.IO, error) { return fsys, nil }, nil)
	moved := maps.Clone(c.moved)
	bctx, cancel := context.WithCancel(context.Background())
	r := &backgroundRun{done: make(chan struct{}), cancel: cancel}
	c.bg = r
	go func() {
		defer close(r.done)
		r.p, r.err = c.prepare(bctx, base, moved)
		if r.err == nil && r.p != nil && compactionHold != nil {
			compactionHold(bctx)
		}
		if r.err == nil && bctx.Err() != nil {
			r.err = bctx.Err()
		}
		if r.err != nil && r.p != nil {
			r.p.remove()
			r.p = nil
		}
	}()
	return nil
}

// afterCommit is called by the committer after each checkpoint's commit,
// with the table as it then is, the job and the checkpoint committed
// last. It commits the background compaction if it is done and starts the
// next one when none runs. With final (the end of the input) it waits for
// the running compaction and for one more, so that the table is left
// compacted. It returns the table as it then is; a compaction that fails
// is logged, and leaves the table as it was.
func (c *compactor) afterCommit(ctx context.Context, tbl *table.Table, job string, checkpoint int64, final bool) *table.Table {
	c.pending.count(tbl, time.Now())
	collect := func() {
		r := c.bg
		<-r.done
		c.bg = nil
		err := r.err
		if err == nil && r.p != nil {
			tbl, err = c.commitPrepared(ctx, tbl, r.p, job, checkpoint)
		}
		if err != nil {
			c.log.Warn("iceberg compaction failed; it is tried again after the next commit", "table", c.where, "error", err)
		}
	}
	if c.bg != nil {
		select {
		case <-c.bg.done:
		default:
			if !final {
				return tbl
			}
		}
		collect()
	}
	if !final && !c.pending.due(c.cfg.schedule, time.Now()) {
		return tbl
	}
	c.pending.reset(time.Now())
	if err := c.startBackground(ctx, tbl); err != nil {
		c.log.Warn("iceberg compaction failed; it is tried again after the next commit", "table", c.where, "error", err)
		return tbl
	}
	if final {
		collect()
	}
	return tbl
}

// pendingCommits is what the commits of a table added since a compaction
// last started: the schedule (compactionSchedule) starts the next one
// once any of its thresholds is reached.
type pendingCommits struct {
	// since is when the last compaction started, or when the first
	// commit was counted.
	since time.Time
	// snapshot is the id of the snapshot counted last.
	snapshot              int64
	commits, files, bytes int64
}

// count counts the table's current snapshot, at time now, unless it was
// counted already (a commit replayed after a failure commits nothing) or
// is a compaction's.
func (p *pendingCommits) count(tbl *table.Table, now time.Time) {
	if p.since.IsZero() {
		p.since = now
	}
	snap := tbl.CurrentSnapshot()
	if snap == nil || snap.SnapshotID == p.snapshot {
		return
	}
	p.snapshot = snap.SnapshotID
	if snap.Summary == nil || snap.Summary.Properties[summaryCompaction] == "true" {
		return
	}
	p.commits++
	files, _ := strconv.ParseInt(snap.Summary.Properties["added-data-files"], 10, 64)
	bytes, _ := strconv.ParseInt(snap.Summary.Properties["added-files-size"], 10, 64)
	p.files += files
	p.bytes += bytes
}

// due reports whether a compaction is due at time now under schedule s.
func (p *pendingCommits) due(s compactionSchedule, now time.Time) bool {
	if p.commits == 0 {
		return false
	}
	return p.commits >= s.commits || p.files >= s.dataFiles || p.bytes >= s.dataBytes || now.Sub(p.since) >= s.interval
}

// reset starts counting again, for a compaction that starts at time now.
func (p *pendingCommits) reset(now time.Time) {
	*p = pendingCommits{since: now, snapshot: p.snapshot}
}

// close stops the background compaction, if one runs, and removes the
// files of one that did not commit.
func (c *compactor) close() {
	r := c.bg
	if r == nil {
		return
	}
	c.bg = nil
	r.cancel()
	<-r.done
	if r.p != nil {
		r.p.remove()
	}
}

// commitPrepared commits the compaction p to tbl as a replace snapshot of
// job's checkpoint (one committed already) and returns the table as
// committed. The deletes committed since p's base to rows of the files it
// rewrote are moved to the rows' new places in the same snapshot: delete
// files added since the base that name those rows are replaced by ones
// that name the new places. A compaction that fails to commit leaves the
// table as it was, and its files are removed.
func (c *compactor) commitPrepared(ctx context.Context, tbl *table.Table, p *compaction, job string, checkpoint int64) (_ *table.Table, err error) {
	var written []string
	keep := false
	defer func() {
		if err != nil && !keep {
			_ = removeFiles(p.fs, written)
			p.remove()
		}
	}()
	if err := tbl.Refresh(ctx); err != nil {
		return tbl, fmt.Errorf("loading the table to commit a compaction: %w", err)
	}
	tf, err := newTableFiles(ctx, tbl)
	if err != nil {
		return tbl, err
	}
	if tf.spec.ID() != p.specID {
		return tbl, fmt.Errorf("the table's partition spec changed while compacting")
	}
	data, deletes, err := snapshotFiles(tbl, tf.fs)
	if err != nil {
		return tbl, err
	}
	live := make(map[string]bool, len(data))
	for _, df := range data {
		live[df.FilePath()] = true
	}
	for _, df := range p.chosen {
		if !live[df.FilePath()] {
			return tbl, fmt.Errorf("the data file %s was removed from the table while compacting it", df.FilePath())
		}
	}
	spec, sc := tbl.Spec(), tbl.Schema()
	var removeDeletes, addDeletes []icebergo.DataFile
	dvs := map[string]*dv.RoaringPositionBitmap{}
	var dvOrder []string
	moved := 0
	for _, d := range deletes {
		if d.ContentType() == icebergo.EntryContentEqDeletes {
			// Equality deletes committed since the base apply to the
			// new files, which have the base's sequence number.
			continue
		}
		refs, err := c.deleteRefs(ctx, tf.fs, d)
		if err != nil {
			return tbl, err
		}
		names, dead := false, true
		for r := range refs {
			if p.isChosen[r] {
				names = true
			} else if live[r] {
				dead = false
			}
		}
		if !names || p.baseDeletes[deleteKey(d)] {
			if dead {
				removeDeletes = append(removeDeletes, d)
			}
			continue
		}
		// Deletes committed since the base to rows that moved.
		if table.IsDeletionVector(d) {
			bm, err := dv.ReadDV(tf.fs, d)
			if err != nil {
				return tbl, fmt.Errorf("reading the deletion vector of %s: %w", d.FilePath(), err)
			}
			e := p.rows[*d.ReferencedDataFile()]
			for pos := range bm.Positions() {
				q, ok := e.locate(int64(pos))
				if !ok {
					continue
				}
				to := dvs[e.To]
				if to == nil {
					to = dv.NewRoaringPositionBitmap()
					dvs[e.To] = to
					dvOrder = append(dvOrder, e.To)
				}
				to.Set(uint64(q))
				moved++
			}
			removeDeletes = append(removeDeletes, d)
			continue
		}
		rows, err := readPositionDeletes(ctx, tf.fs, d.FilePath())
		if err != nil {
			return tbl, err
		}
		w := tf.newPositionDeleteWriter(compactPrefix + "-deletes")
		for _, r := range rows {
			if e := p.rows[r.path]; e != nil {
				if q, ok := e.locate(r.pos); ok {
					w.Delete(e.To, q)
					moved++
				}
			} else if live[r.path] {
				w.Delete(r.path, r.pos)
			}
		}
		if w.Len() > 0 {
			ms, err := w.Close()
			if err != nil {
				return tbl, err
			}
			for _, m := range ms {
				written = append(written, m.Path)
				df, err := m.dataFileIn(spec, sc, d.Partition())
				if err != nil {
					return tbl, err
				}
				addDeletes = append(addDeletes, df)
			}
		}
		removeDeletes = append(removeDeletes, d)
	}
	if len(dvOrder) > 0 {
		dw := dv.NewDVWriter(tf.fs, func(id int32) *icebergo.PartitionSpec {
			if int(id) == spec.ID() {
				return &spec
			}
			return nil
		})
		for _, to := range dvOrder {
			dw.Load(to, dvs[to], int32(spec.ID()), p.partOf[to])
		}
		loc := tf.newPuffinPath(compactPrefix + "-dv")
		written = append(written, loc)
		dfs, err := dw.Flush(ctx, loc)
		if err != nil {
			return tbl, fmt.Errorf("writing the deletion vectors of compacted files: %w", err)
		}
		addDeletes = append(addDeletes, dfs...)
	}
	props := icebergo.Properties{summaryJobID: job, summaryCheckpointID: strconv.FormatInt(checkpoint, 10), summaryCompaction: "true"}
	tx := tbl.NewTransaction()
	rw := tx.NewRewrite(props)
	rw.DataSequenceNumber(p.baseSeq)
	for _, df := range p.chosen {
		rw.DeleteFile(df)
	}
	for _, df := range p.added {
		rw.AddDataFile(df)
	}
	for _, d := range removeDeletes {
		rw.DeleteFile(d)
	}
	for _, d := range addDeletes {
		rw.AddDeleteFile(d)
	}
	if err := rw.Commit(ctx); err != nil {
		return tbl, fmt.Errorf("staging the compaction of %d data files: %w", len(p.chosen), err)
	}
	committed, err := tx.Commit(ctx)
	if err != nil {
		// After another failure than a conflict, the commit may have
		// gone through: the new files stay (orphan-file removal takes
		// them if it did not), and where rows are is read again from
		// the table before the next commit.
		if !errors.Is(err, table.ErrCommitFailed) {
			keep = true
			c.moved = nil
		}
		return tbl, fmt.Errorf("committing the compaction of %d data files: %w", len(p.chosen), err)
	}
	for _, f := range p.superseded {
		delete(c.moved, f)
	}
	var rows int64
	for _, o := range p.outs {
		for _, e := range o.entries {
			c.moved[e.From] = e
		}
		rows += o.rows
	}
	for _, d := range removeDeletes {
		delete(c.refs, d.FilePath())
	}
	c.log.Info("iceberg data files compacted", "table", c.where, "files", len(p.chosen), "into", len(p.outs), "rows", rows,
		"deleteFilesDropped", len(removeDeletes), "deletesMoved", moved)
	if compactionCommitted != nil {
		compactionCommitted(moved)
	}
	return committed, nil
}
