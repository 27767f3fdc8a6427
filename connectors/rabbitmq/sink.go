package rabbitmq

import (
	"fmt"
	"math"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// sink publishes records as they come (writer) or, with
// 'sink.publish-on-checkpoint', when the checkpoint accounting for them
// completes (committer).
type sink[T any] struct {
	cfg        *config
	newEncoder func() connector.Encoder[T]
}

// txSink is the checkpoint-aligned sink, with the changelog mode of its
// format.
type txSink[T any] struct {
	connector.TransactionalSink[T]
	mode changelog.Mode
}

// ChangelogMode says which changes the format writes.
func (s txSink[T]) ChangelogMode() changelog.Mode { return s.mode }

// newSink returns the sink cfg describes.
func newSink[T any](cfg *config, newEncoder func() connector.Encoder[T]) connector.Sink[T] {
	if cfg.onCheckpoint {
		return txSink[T]{connector.TwoPhase(func(ctx connector.WriterContext) (connector.TwoPhaseCommitter[T, rabbitTx], error) {
			return &committer[T]{cfg: cfg, ctx: ctx, enc: newEncoder(), now: time.Now, since: time.Now()}, nil
		}), cfg.changelogs}
	}
	return &sink[T]{cfg: cfg, newEncoder: newEncoder}
}

// ChangelogMode says which changes the format writes.
func (s *sink[T]) ChangelogMode() changelog.Mode { return s.cfg.changelogs }

// NewWriter connects, declares and binds the queue if the options say so,
// checks that the exchange exists, and opens the channel to publish on.
func (s *sink[T]) NewWriter(ctx connector.WriterContext) (connector.Writer[T], error) {
	p, err := newPublisher(s.cfg, ctx)
	if err != nil {
		return nil, err
	}
	return &writer[T]{cfg: s.cfg, enc: s.newEncoder(), pub: p, prefix: randomID()}, nil
}

// writer publishes records as they come and, at least once, waits for the
// broker's confirms at every flush.
type writer[T any] struct {
	cfg    *config
	enc    connector.Encoder[T]
	buf    []byte
	pub    *publisher
	prefix string // of the message-ids of the current checkpoint interval
	n      int    // the index of the next message in the interval
}

func (w *writer[T]) Write(records []T, timestamps []int64) error {
	for i, v := range records {
		b, err := w.enc.Encode(w.buf[:0], v)
		if err != nil {
			return fmt.Errorf("rabbitmq %q: encoding a record for %s: %w", w.cfg.name, w.cfg.target(), err)
		}
		w.buf = b
		ts := int64(math.MinInt64)
		if i < len(timestamps) {
			ts = timestamps[i]
		}
		if err := w.pub.publish(b, messageID(w.prefix, w.n), ts); err != nil {
			return err
		}
		w.n++
	}
	return nil
}

// Flush waits for the confirms of every message published so far; the
// next messages' ids start a new interval.
func (w *writer[T]) Flush() error {
	if err := w.pub.wait(); err != nil {
		return err
	}
	if w.n > 0 {
		w.prefix, w.n = randomID(), 0
	}
	return nil
}

func (w *writer[T]) Close() error {
	w.pub.close()
	return nil
}

// messageID is the message-id of message i of a transaction or interval.
func messageID(prefix string, i int) string {
	return fmt.Sprintf("%s-%d", prefix, i)
}

// checkpointWarning is how long the checkpoint-aligned sink holds records
// without a checkpoint before it warns that nothing is published.
var checkpointWarning = 10 * time.Minute

// rabbitTx is a transaction of the checkpoint-aligned sink: the messages of
// one checkpoint interval of one subtask, published when the checkpoint
// completes. Message i is published with the message-id ID-i, so a
// publication repeated after a failure (a restored job commits the
// transactions of its checkpoint again) carries the ids it had the first
// time.
type rabbitTx struct {
	ID   string   `json:"id"`
	Msgs [][]byte `json:"msgs"`
}

// committer is the TwoPhaseCommitter of the checkpoint-aligned sink. It
// publishes only when checkpoints complete; in a job without checkpoints it
// holds every record until the input ends, and warns when it has held
// records without a checkpoint for checkpointWarning.
type committer[T any] struct {
	cfg    *config
	ctx    connector.WriterContext
	enc    connector.Encoder[T]
	buf    []byte
	pub    *publisher
	now    func() time.Time
	since  time.Time // the last checkpoint's barrier, or the start
	warned time.Time // the last warning
}

func (c *committer[T]) Begin() (rabbitTx, error) { return rabbitTx{ID: randomID()}, nil }

func (c *committer[T]) Write(tx *rabbitTx, v T) error {
	b, err := c.enc.Encode(c.buf[:0], v)
	if err != nil {
		return fmt.Errorf("rabbitmq %q: encoding a record for %s: %w", c.cfg.name, c.cfg.target(), err)
	}
	c.buf = b
	tx.Msgs = append(tx.Msgs, append([]byte(nil), b...))
	if len(tx.Msgs)%256 == 1 {
		c.warnIfNoCheckpoint(len(tx.Msgs))
	}
	return nil
}

// warnIfNoCheckpoint logs a warning when the committer has held records
// without a checkpoint for checkpointWarning.
func (c *committer[T]) warnIfNoCheckpoint(held int) {
	now := c.now()
	if now.Sub(c.since) < checkpointWarning || now.Sub(c.warned) < checkpointWarning {
		return
	}
	c.warned = now
	c.ctx.Log().Warn(fmt.Sprintf("rabbitmq %q: 'sink.publish-on-checkpoint' publishes records only when a checkpoint completes, and no checkpoint has passed for %s: "+
		"the sink holds %d records for %s in memory and has published none of them; enable checkpointing (eddy.WithCheckpointing, or SET 'execution.checkpointing.interval' in SQL) "+
		"or set 'sink.publish-on-checkpoint' = 'false'", c.cfg.name, now.Sub(c.since).Round(time.Second), held, c.cfg.target()),
		"sink", c.ctx.SinkName(), "subtask", c.ctx.Subtask())
}

// PreCommit notes that a checkpoint's barrier passed: the transaction's
// messages travel in the checkpoint.
func (c *committer[T]) PreCommit(*rabbitTx) error {
	c.since = c.now()
	return nil
}

// Commit publishes the messages of tx with their ids and waits until the
// broker has confirmed every one.
func (c *committer[T]) Commit(tx rabbitTx) error {
	if len(tx.Msgs) == 0 {
		return nil
	}
	if c.pub == nil {
		p, err := newPublisher(c.cfg, c.ctx)
		if err != nil {
			return err
		}
		c.pub = p
	}
	for i, m := range tx.Msgs {
		if err := c.pub.publish(m, messageID(tx.ID, i), math.MinInt64); err != nil {
			return err
		}
	}
	return c.pub.wait()
}

// Abort drops a transaction: its messages were never published.
func (c *committer[T]) Abort(rabbitTx) error { return nil }

// Recover has nothing to clean: a transaction is published only by Commit.
func (c *committer[T]) Recover(pending, current []rabbitTx) error { return nil }

// Close closes the connection.
func (c *committer[T]) Close() error {
	if c.pub != nil {
		c.pub.close()
	}
	return nil
}
