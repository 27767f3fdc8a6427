package jdbc

import (
	"fmt"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// Exactly-once writing ('sink.delivery-guarantee' = 'exactly-once', the
// default for a table with a primary key): the changes between two
// checkpoints, the last of each key, travel in the checkpoint and are
// written in one database transaction once it completes. The database
// never holds changes of a run that a failure then rolls back — changes a
// replay would not repeat, as a snapshot chunk read again later misses the
// rows deleted in between. Writing a transaction again after a failure
// upserts and deletes the same rows by key, so it is idempotent.

// jdbcTx is a transaction of the exactly-once sink: its changes.
type jdbcTx struct {
	ID      string     `json:"id"`
	Changes []txChange `json:"changes"`
}

// txChange is a change with its row in eddy's row encoding.
type txChange struct {
	Kind changelog.Kind `json:"kind"`
	Row  []byte         `json:"row"`
}

// committer is the TwoPhaseCommitter of one subtask.
type committer struct {
	*rowOps
	ctx   connector.WriterContext // counts the bytes written (paramBytes)
	name  string
	seq   int
	byKey map[string]int // key -> index in the open transaction's changes
}

func (c *committer) Begin() (jdbcTx, error) {
	c.seq++
	clear(c.byKey)
	return jdbcTx{ID: fmt.Sprintf("%s-%d", c.name, c.seq)}, nil
}

func (c *committer) Write(tx *jdbcTx, r connector.TableRecord) error {
	if r.Kind == changelog.UpdateBefore {
		return nil // the +U that follows replaces the row
	}
	ch := txChange{Kind: r.Kind, Row: r.Row.Bytes()}
	k := c.keyEnc.Key(r.Row)
	if i, ok := c.byKey[k]; ok {
		tx.Changes[i] = ch
		return nil
	}
	c.byKey[k] = len(tx.Changes)
	tx.Changes = append(tx.Changes, ch)
	return nil
}

func (c *committer) PreCommit(*jdbcTx) error { return nil }

// Commit writes the transaction's changes in one database transaction.
func (c *committer) Commit(tx jdbcTx) error {
	if len(tx.Changes) == 0 {
		return nil
	}
	ops := make([]op, len(tx.Changes))
	for i, ch := range tx.Changes {
		row, err := types.RowFromBytes(c.rt, ch.Row)
		if err != nil {
			return fmt.Errorf("jdbc: transaction %s of %s: %w", tx.ID, c.cfg.where(), err)
		}
		if ops[i], err = c.opOf(connector.TableRecord{Kind: ch.Kind, Row: row}); err != nil {
			return err
		}
	}
	if err := c.apply(ops); err != nil {
		return err
	}
	n := 0
	for _, o := range ops {
		n += paramBytes(o.args)
	}
	connector.CountBytesOut(c.ctx, n)
	return nil
}

func (c *committer) Abort(jdbcTx) error { return nil }

func (c *committer) Recover(_, _ []jdbcTx) error { return nil }

// txSink is the exactly-once sink of a table with a primary key.
type txSink struct {
	connector.TransactionalSink[connector.TableRecord]
}

func (txSink) ChangelogMode() changelog.Mode { return changelog.Upsert }

func (s *Sink) transactional() txSink {
	return txSink{connector.TwoPhase(func(ctx connector.WriterContext) (connector.TwoPhaseCommitter[connector.TableRecord, jdbcTx], error) {
		name := "jdbc"
		if ctx != nil {
			name = fmt.Sprintf("%s-%d", ctx.SinkName(), ctx.Subtask())
		}
		return &committer{rowOps: s.rowOps(), ctx: ctx, name: name, byKey: map[string]int{}}, nil
	})}
}
