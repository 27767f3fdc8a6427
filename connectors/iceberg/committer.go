package iceberg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy/connector"
)

// icebergTx is a transaction of the committer: the files the writers wrote
// for one checkpoint, committed together as one snapshot. It travels in
// checkpoints as JSON.
type icebergTx struct {
	Job        string     `json:"job"`
	Checkpoint int64      `json:"checkpoint"`
	Data       []fileMeta `json:"data,omitempty"`
	Deletes    []fileMeta `json:"deletes,omitempty"`
}

// committer gathers the writers' files and commits one snapshot per
// completed checkpoint. It runs in a single subtask.
type committer struct {
	sink *Sink
	tbl  *table.Table
	// wc counts the bytes of the files the writers wrote (writtenBytes).
	wc connector.WriterContext
	// job identifies this run of the committer in the summaries of its
	// snapshots; a restored job commits its new transactions under a new
	// id, and the restored ones under theirs.
	job string
	// last is the checkpoint id of the last transaction pre-committed.
	last int64
	// final is the checkpoint id of the transaction of the end of the
	// input, 0 before it is pre-committed.
	final int64
	maint *maintainer
	// compact compacts small files after commits; nil when compaction is
	// off.
	compact *compactor
}

func (s *Sink) newCommitter(wc connector.WriterContext) (connector.TwoPhaseCommitter[writeResult, icebergTx], error) {
	tbl, err := s.loadTable(context.Background())
	if err != nil {
		return nil, err
	}
	job, err := newJobID()
	if err != nil {
		return nil, err
	}
	c := &committer{sink: s, tbl: tbl, wc: wc, job: job, maint: newMaintainer(s.cfg.where(), s.cfg.maintenance, wc.Log(), s.loadTable)}
	if s.cfg.compaction.enabled {
		c.compact = &compactor{cfg: s.cfg.compaction, rt: s.table.Schema, where: s.cfg.where(), log: wc.Log()}
	}
	return c, nil
}

// writtenBytes returns the size of the files of r, data and deletes: the
// bytes the writers wrote to the table's storage, which the sink reports as
// its bytes out.
func (r writeResult) writtenBytes() int {
	var n int64
	for _, f := range r.Data {
		n += f.FileSize
	}
	for _, f := range r.Deletes {
		n += f.FileSize
	}
	return int(n)
}

// newJobID returns a random id for the snapshots a committer commits.
func newJobID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// Begin starts the transaction of the next checkpoint.
func (c *committer) Begin() (icebergTx, error) { return icebergTx{Job: c.job}, nil }

// Write adds a writer's files.
func (c *committer) Write(tx *icebergTx, r writeResult) error {
	connector.CountBytesOut(c.wc, r.writtenBytes())
	tx.Data = append(tx.Data, r.Data...)
	tx.Deletes = append(tx.Deletes, r.Deletes...)
	tx.Checkpoint = max(tx.Checkpoint, r.Checkpoint)
	return nil
}

// PreCommit fixes the transaction's checkpoint id: the writers' files are
// durable when they hand them over. The files of the end of the input
// carry no id and take the next one.
func (c *committer) PreCommit(tx *icebergTx) error {
	endOfInput := tx.Checkpoint == 0
	tx.Checkpoint = nextCheckpoint(tx.Checkpoint, &c.last)
	if endOfInput {
		c.final = tx.Checkpoint
	}
	return nil
}

// nextCheckpoint returns the checkpoint id of a transaction whose writers
// said id (0 for files of the end of the input) after the transaction of
// *last, and makes it *last: ids grow, as the replayed-commit check needs.
func nextCheckpoint(id int64, last *int64) int64 {
	if id <= *last {
		id = *last + 1
	}
	*last = id
	return id
}

// Commit commits the transaction's files as one snapshot, unless a
// snapshot of its job and checkpoint is in the table already.
//
// With compaction on, the position deletes of rows that compaction moved
// are moved with them first, and small files are compacted in the
// background, each compaction committed as a snapshot of its own after a
// later checkpoint's commit.
func (c *committer) Commit(tx icebergTx) error {
	if c.compact != nil {
		return c.commitCompacting(tx)
	}
	tbl, err := commitOnce(context.Background(), c.tbl, tx.Job, tx.Checkpoint, tx.Data, tx.Deletes)
	if err != nil {
		return fmt.Errorf("%s: %w", c.sink.cfg.where(), err)
	}
	if tbl != nil {
		c.tbl = tbl
		c.maint.afterCommit()
	}
	return nil
}

// commitCompacting is Commit with compaction on: the position deletes of
// rows that compaction moved are moved with them, and then the compaction
// running in the background is committed if it is done, and the next one
// started (see compactor.afterCommit).
func (c *committer) commitCompacting(tx icebergTx) error {
	ctx := context.Background()
	tbl, err := commitTranslated(ctx, c.tbl, c.compact, tx)
	if err != nil {
		return fmt.Errorf("%s: %w", c.sink.cfg.where(), err)
	}
	if tbl != nil {
		c.tbl = tbl
		c.maint.afterCommit()
	}
	c.tbl = c.compact.afterCommit(ctx, c.tbl, tx.Job, tx.Checkpoint, tx.Checkpoint == c.final)
	return nil
}

// commitTranslated commits the transaction tx to tbl, as commitOnce does,
// with the position deletes of rows comp moved moved with them. It returns
// the table as committed, or nil when it committed nothing.
func commitTranslated(ctx context.Context, tbl *table.Table, comp *compactor, tx icebergTx) (*table.Table, error) {
	if err := tbl.Refresh(ctx); err != nil {
		return nil, fmt.Errorf("loading the table to commit checkpoint %d: %w", tx.Checkpoint, err)
	}
	if n, ok := committedCheckpoint(tbl, tx.Job); ok && n >= tx.Checkpoint {
		return nil, nil
	}
	tf, err := newTableFiles(ctx, tbl)
	if err != nil {
		return nil, err
	}
	deletes, done, err := comp.translate(ctx, tbl, tf, tx.Deletes)
	if err != nil {
		return nil, fmt.Errorf("moving the deletes of checkpoint %d to the rows' compacted files: %w", tx.Checkpoint, err)
	}
	committed, err := commitOnce(ctx, tbl, tx.Job, tx.Checkpoint, tx.Data, deletes)
	done(err == nil && committed != nil, err)
	return committed, err
}

// commitOnce refreshes tbl and commits data and deletes as one snapshot of
// job's checkpoint, unless a snapshot of that checkpoint (or a later one)
// of the job is in the table already, as after a failure that struck
// between a commit and the checkpoint's notification. It returns the
// table as committed, or nil if it committed nothing.
func commitOnce(ctx context.Context, tbl *table.Table, job string, checkpoint int64, data, deletes []fileMeta) (*table.Table, error) {
	if err := tbl.Refresh(ctx); err != nil {
		return nil, fmt.Errorf("loading the table to commit checkpoint %d: %w", checkpoint, err)
	}
	if n, ok := committedCheckpoint(tbl, job); ok && n >= checkpoint {
		return nil, nil
	}
	if len(data) == 0 && len(deletes) == 0 {
		return nil, nil
	}
	if err := checkFilesExist(ctx, tbl, data, deletes); err != nil {
		return nil, fmt.Errorf("checkpoint %d: %w", checkpoint, err)
	}
	summary := map[string]string{summaryJobID: job, summaryCheckpointID: strconv.FormatInt(checkpoint, 10)}
	out, err := commitFiles(ctx, tbl, data, deletes, summary)
	if err != nil {
		return nil, fmt.Errorf("committing checkpoint %d (%d data files, %d delete files): %w", checkpoint, len(data), len(deletes), err)
	}
	return out, nil
}

// Abort removes the files of a transaction that will never commit.
func (c *committer) Abort(tx icebergTx) error {
	if err := abortFiles(c.tbl, tx.Data, tx.Deletes); err != nil {
		return fmt.Errorf("%s: removing the files of an aborted checkpoint: %w", c.sink.cfg.where(), err)
	}
	return nil
}

// checkFilesExist makes sure that every file a commit names is there, so
// that a commit never makes a snapshot whose files are gone: a checkpoint
// restored long after it was taken may name files that orphan-file removal
// deleted in the meantime.
func checkFilesExist(ctx context.Context, tbl *table.Table, data, deletes []fileMeta) error {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	for _, fs := range [][]fileMeta{data, deletes} {
		for _, f := range fs {
			if f.Path == "" {
				continue
			}
			h, err := fsys.Open(f.Path)
			if err != nil {
				return fmt.Errorf("file %s is gone (%w), so its rows cannot be committed: restore the job from a later checkpoint, or keep 'maintenance.orphan-files.older-than' above the age of the checkpoints you restore from", f.Path, err)
			}
			h.Close()
		}
	}
	return nil
}

// abortFiles removes the files of tbl that will never be committed.
func abortFiles(tbl *table.Table, data, deletes []fileMeta) error {
	var paths []string
	for _, f := range data {
		paths = append(paths, f.Path)
	}
	for _, f := range deletes {
		paths = append(paths, f.Path)
	}
	if len(paths) == 0 {
		return nil
	}
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		return err
	}
	return removeFiles(fsys, paths)
}

// Recover has nothing to do: the files of transactions in neither list were
// never known to a checkpoint, and are left to orphan-file removal.
func (c *committer) Recover(pending, current []icebergTx) error { return nil }

// Close stops the maintenance run and the compaction in progress; the
// files of a compaction that did not commit are removed.
func (c *committer) Close() error {
	c.maint.close()
	if c.compact != nil {
		c.compact.close()
	}
	return nil
}
