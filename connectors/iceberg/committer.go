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
	// job identifies this run of the committer in the summaries of its
	// snapshots; a restored job commits its new transactions under a new
	// id, and the restored ones under theirs.
	job string
	// last is the checkpoint id of the last transaction pre-committed.
	last  int64
	maint *maintainer
}

func (s *Sink) newCommitter(wc connector.WriterContext) (connector.TwoPhaseCommitter[writeResult, icebergTx], error) {
	tbl, err := s.loadTable(context.Background())
	if err != nil {
		return nil, err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	return &committer{sink: s, tbl: tbl, job: hex.EncodeToString(b[:]), maint: newMaintainer(s, wc.Log())}, nil
}

// Begin starts the transaction of the next checkpoint.
func (c *committer) Begin() (icebergTx, error) { return icebergTx{Job: c.job}, nil }

// Write adds a writer's files.
func (c *committer) Write(tx *icebergTx, r writeResult) error {
	tx.Data = append(tx.Data, r.Data...)
	tx.Deletes = append(tx.Deletes, r.Deletes...)
	tx.Checkpoint = max(tx.Checkpoint, r.Checkpoint)
	return nil
}

// PreCommit fixes the transaction's checkpoint id: the writers' files are
// durable when they hand them over. The files of the end of the input
// carry no id and take the next one.
func (c *committer) PreCommit(tx *icebergTx) error {
	if tx.Checkpoint <= c.last {
		tx.Checkpoint = c.last + 1
	}
	c.last = tx.Checkpoint
	return nil
}

// Commit commits the transaction's files as one snapshot, unless a
// snapshot of its job and checkpoint is in the table already.
func (c *committer) Commit(tx icebergTx) error {
	ctx := context.Background()
	if err := c.tbl.Refresh(ctx); err != nil {
		return fmt.Errorf("%s: loading the table to commit checkpoint %d: %w", c.sink.cfg.where(), tx.Checkpoint, err)
	}
	if n, ok := committedCheckpoint(c.tbl, tx.Job); ok && n >= tx.Checkpoint {
		return nil
	}
	if len(tx.Data) == 0 && len(tx.Deletes) == 0 {
		return nil
	}
	summary := map[string]string{summaryJobID: tx.Job, summaryCheckpointID: strconv.FormatInt(tx.Checkpoint, 10)}
	tbl, err := commitFiles(ctx, c.tbl, tx.Data, tx.Deletes, summary)
	if err != nil {
		return fmt.Errorf("%s: committing checkpoint %d (%d data files, %d delete files): %w", c.sink.cfg.where(), tx.Checkpoint, len(tx.Data), len(tx.Deletes), err)
	}
	c.tbl = tbl
	c.maint.afterCommit()
	return nil
}

// Abort removes the files of a transaction that will never commit.
func (c *committer) Abort(tx icebergTx) error {
	var paths []string
	for _, f := range tx.Data {
		paths = append(paths, f.Path)
	}
	for _, f := range tx.Deletes {
		paths = append(paths, f.Path)
	}
	fsys, err := c.tbl.FS(context.Background())
	if err != nil {
		return fmt.Errorf("%s: opening the file IO to remove the files of an aborted checkpoint: %w", c.sink.cfg.where(), err)
	}
	if err := removeFiles(fsys, paths); err != nil {
		return fmt.Errorf("%s: removing the files of an aborted checkpoint: %w", c.sink.cfg.where(), err)
	}
	return nil
}

// Recover has nothing to do: the files of transactions in neither list were
// never known to a checkpoint, and are left to orphan-file removal.
func (c *committer) Recover(pending, current []icebergTx) error { return nil }

// Close stops the maintenance run in progress.
func (c *committer) Close() error {
	c.maint.close()
	return nil
}
