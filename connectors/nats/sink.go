package nats

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// maxInFlight is how many publications a writer awaits acknowledgements of
// at once.
const maxInFlight = 512

// publishTimeout is how long a writer waits for the stream to acknowledge
// a publication before it fails.
var publishTimeout = time.Minute

// checkpointWarning is how long the exactly-once sink holds records
// without a checkpoint before it warns that nothing is published.
var checkpointWarning = 10 * time.Minute

// newSink returns the sink cfg describes: exactly-once (a
// TransactionalSink), at-least-once or at-most-once.
func newSink[T any](cfg *config, newEncoder func() connector.Encoder[T]) connector.Sink[T] {
	if cfg.guarantee == exactlyOnce {
		return txSink[T]{connector.TwoPhase(func(ctx connector.WriterContext) (connector.TwoPhaseCommitter[T, natsTx], error) {
			return &committer[T]{cfg: cfg, ctx: ctx, enc: newEncoder(), now: time.Now, since: time.Now()}, nil
		}), cfg.changelogs}
	}
	return plainSink[T]{cfg: cfg, newEncoder: newEncoder}
}

// txSink is the exactly-once sink, with the changelog mode of its format.
type txSink[T any] struct {
	connector.TransactionalSink[T]
	mode changelog.Mode
}

// ChangelogMode says which changes the format writes.
func (s txSink[T]) ChangelogMode() changelog.Mode { return s.mode }

// natsTx is a transaction of the exactly-once sink: the messages of one
// checkpoint interval of one subtask, published when the checkpoint
// completes. Message i is published with the Nats-Msg-Id ID-i, so a
// publication repeated after a failure (a restored job commits the
// transactions of its checkpoint again) is dropped by the stream.
type natsTx struct {
	ID   string   `json:"id"`
	Msgs [][]byte `json:"msgs"`
}

// committer is the TwoPhaseCommitter of the exactly-once sink.
//
// It publishes only when checkpoints complete; in a job without
// checkpointing it holds every record until the input ends. The runtime
// does not tell a writer whether the job checkpoints, so the committer
// warns when it has held records without a checkpoint for
// checkpointWarning, and again every checkpointWarning after.
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

func (c *committer[T]) Begin() (natsTx, error) {
	return natsTx{ID: nuid.Next()}, nil
}

func (c *committer[T]) Write(tx *natsTx, v T) error {
	b, err := c.enc.Encode(c.buf[:0], v)
	if err != nil {
		return fmt.Errorf("nats %q: encoding a record for subject %q: %w", c.cfg.name, c.cfg.subjects[0], err)
	}
	c.buf = b
	tx.Msgs = append(tx.Msgs, bytes.Clone(b))
	if len(tx.Msgs)%256 == 1 {
		c.warnIfNoCheckpoint(len(tx.Msgs))
	}
	return nil
}

// warnIfNoCheckpoint logs a warning when the committer has held
// records without a checkpoint for checkpointWarning.
func (c *committer[T]) warnIfNoCheckpoint(held int) {
	now := c.now()
	if now.Sub(c.since) < checkpointWarning || now.Sub(c.warned) < checkpointWarning {
		return
	}
	c.warned = now
	c.ctx.Log().Warn(fmt.Sprintf("nats %q: 'sink.delivery-guarantee' = 'exactly-once' publishes records only when a checkpoint completes, and no checkpoint has passed for %s: "+
		"the sink holds %d records of stream %q in memory and has published none of them; enable checkpointing (eddy.WithCheckpointing, or SET 'execution.checkpointing.interval' in SQL) "+
		"or set 'sink.delivery-guarantee' = 'at-least-once'", c.cfg.name, now.Sub(c.since).Round(time.Second), held, c.cfg.stream),
		"sink", c.ctx.SinkName(), "subtask", c.ctx.Subtask())
}

// PreCommit notes that a checkpoint's barrier passed.
func (c *committer[T]) PreCommit(*natsTx) error {
	c.since = c.now()
	return nil
}

// Commit publishes the messages of tx with their ids and waits until the
// stream has stored (or deduplicated) every one.
func (c *committer[T]) Commit(tx natsTx) error {
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
		if err := c.pub.publish(m, tx.ID+"-"+strconv.Itoa(i)); err != nil {
			return err
		}
		connector.CountBytesOut(c.ctx, len(m))
	}
	return c.pub.wait()
}

func (c *committer[T]) Abort(natsTx) error { return nil }

func (c *committer[T]) Recover(pending, current []natsTx) error { return nil }

// Close closes the connection.
func (c *committer[T]) Close() error {
	if c.pub != nil {
		c.pub.close()
	}
	return nil
}

// publisher publishes to a stream through JetStream and awaits the
// acknowledgements.
type publisher struct {
	cfg     *config
	stream  string // the stream that must store the messages
	nc      *natsgo.Conn
	js      jetstream.JetStream
	futures []jetstream.PubAckFuture
}

func newPublisher(cfg *config, ctx connector.WriterContext) (*publisher, error) {
	nc, js, _, err := cfg.jetStream(fmt.Sprintf("writer %d of %s", ctx.Subtask(), ctx.SinkName()), ctx.Log(), jetstream.WithPublishAsyncTimeout(publishTimeout))
	if err != nil {
		return nil, err
	}
	return &publisher{cfg: cfg, stream: cfg.stream, nc: nc, js: js}, nil
}

// publish sends data to the sink's subject, with the message id if not
// empty.
func (p *publisher) publish(data []byte, id string) error {
	return p.publishMsg(&natsgo.Msg{Subject: p.cfg.subjects[0], Data: data}, id)
}

// publishMsg sends m, with the message id if not empty.
func (p *publisher) publishMsg(m *natsgo.Msg, id string) error {
	opts := []jetstream.PublishOpt{jetstream.WithExpectStream(p.stream)}
	if id != "" {
		opts = append(opts, jetstream.WithMsgID(id))
	}
	f, err := p.js.PublishMsgAsync(m, opts...)
	if err != nil {
		return fmt.Errorf("nats %q: publishing to %q of stream %q: %w", p.cfg.name, m.Subject, p.stream, err)
	}
	p.futures = append(p.futures, f)
	if len(p.futures) >= maxInFlight {
		return p.wait()
	}
	return nil
}

// wait waits for the acknowledgements of every publication not yet
// acknowledged.
func (p *publisher) wait() error {
	fs := p.futures
	p.futures = p.futures[:0]
	for _, f := range fs {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			subject := f.Msg().Subject
			if errors.Is(err, jetstream.ErrAsyncPublishTimeout) {
				return fmt.Errorf("nats %q: the stream %q did not acknowledge a message published to %q within %s: %w; check that the stream takes the subject (and nothing else answers on it) and that the servers are reachable", p.cfg.name, p.stream, subject, publishTimeout, err)
			}
			return fmt.Errorf("nats %q: the stream %q did not store a message published to %q: %w; check that the stream takes the subject and has room", p.cfg.name, p.stream, subject, err)
		}
	}
	return nil
}

func (p *publisher) close() { p.nc.Close() }

// plainSink is the at-least-once sink of a stream and the at-most-once
// sink of core NATS (or of a stream with 'none').
type plainSink[T any] struct {
	cfg        *config
	newEncoder func() connector.Encoder[T]
}

// ChangelogMode says which changes the format writes.
func (s plainSink[T]) ChangelogMode() changelog.Mode { return s.cfg.changelogs }

func (s plainSink[T]) NewWriter(ctx connector.WriterContext) (connector.Writer[T], error) {
	return &writer[T]{cfg: s.cfg, ctx: ctx, enc: s.newEncoder()}, nil
}

// writer publishes records as they come: through JetStream, awaiting the
// acknowledgements at every flush (at least once), or as core NATS
// messages (at most once).
type writer[T any] struct {
	cfg *config
	ctx connector.WriterContext
	enc connector.Encoder[T]
	buf []byte
	nc  *natsgo.Conn
	pub *publisher
}

func (w *writer[T]) Write(records []T, _ []int64) error {
	if w.nc == nil {
		if w.cfg.guarantee == atLeastOnce {
			p, err := newPublisher(w.cfg, w.ctx)
			if err != nil {
				return err
			}
			w.pub, w.nc = p, p.nc
		} else {
			nc, err := w.cfg.connect(fmt.Sprintf("writer %d of %s", w.ctx.Subtask(), w.ctx.SinkName()), w.ctx.Log())
			if err != nil {
				return err
			}
			w.nc = nc
		}
	}
	subject := w.cfg.subjects[0]
	for _, v := range records {
		b, err := w.enc.Encode(w.buf[:0], v)
		if err != nil {
			return fmt.Errorf("nats %q: encoding a record for subject %q: %w", w.cfg.name, subject, err)
		}
		w.buf = b
		connector.CountBytesOut(w.ctx, len(b))
		if w.pub != nil {
			if err := w.pub.publish(bytes.Clone(b), ""); err != nil {
				return err
			}
			continue
		}
		if err := w.nc.Publish(subject, b); err != nil {
			return fmt.Errorf("nats %q: publishing to %q: %w", w.cfg.name, subject, err)
		}
	}
	return nil
}

// Flush waits for the stream's acknowledgements, or, for core NATS, for
// the server to have received what was published.
func (w *writer[T]) Flush() error {
	if w.pub != nil {
		return w.pub.wait()
	}
	if w.nc != nil {
		if err := w.nc.Flush(); err != nil {
			return fmt.Errorf("nats %q: flushing messages to %q: %w", w.cfg.name, w.cfg.subjects[0], err)
		}
	}
	return nil
}

func (w *writer[T]) Close() error {
	if w.nc != nil {
		w.nc.Close()
	}
	return nil
}
