package mqtt

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/eddystream/eddy/connector"
)

// inboxLimit is how many received messages a reader holds before Read
// emits them.
const inboxLimit = 8192

// stallWarning is how often at most a reader warns that a split's
// in-flight window is full.
var stallWarning = 10 * time.Minute

// reader reads its splits, each a session with a connection of its own.
// With QoS 1 and 2 it acknowledges a message once the checkpoint that
// covers it completes: the messages emitted before a checkpoint's snapshot
// wait in pending under its id, and a completion acknowledges every
// message of its checkpoint and of the ones before, in the order they
// arrived. In a job without checkpoints it acknowledges as it emits.
type reader[T any] struct {
	src    *source[T]
	ctx    connector.ReaderContext
	decode messageDecoder[T]
	splits []*readSplit
	in     *inbox
	batch  []*delivery

	// deferAcks says acknowledgements wait for checkpoints; the enumerator
	// says otherwise in a job without checkpoints.
	deferAcks bool
	since     []*delivery // emitted since the last snapshot
	pending   []covered   // by checkpoint, in ascending order

	cur  connector.SplitOutput[T]
	ts   int64
	emit func(T)
	one  [1]*delivery
}

// covered are the messages emitted before the snapshot of a checkpoint.
type covered struct {
	id   int64
	msgs []*delivery
}

// readSplit is a split a reader holds.
type readSplit struct {
	id      string
	st      splitState
	conn    *connection
	started atomic.Bool // the session was begun: a link came up
	unacked atomic.Int64
	warned  time.Time // the last warning that the in-flight window is full
	// expiryWarned says the broker's shorter session expiry was told;
	// only the connection's goroutine uses it.
	expiryWarned bool
}

func newReader[T any](s *source[T], ctx connector.ReaderContext) *reader[T] {
	r := &reader[T]{src: s, ctx: ctx, decode: s.newDecoder(), in: newInbox(inboxLimit), deferAcks: s.cfg.qos > 0}
	r.emit = func(v T) { r.cur.EmitAt(v, r.ts) }
	return r
}

func (r *reader[T]) AddSplits(splits []connector.Split) error {
	c := r.src.cfg
	for _, s := range splits {
		st, err := decodeState(s)
		if err != nil {
			return fmt.Errorf("%s: split %s: %w", c.label(), s.ID, err)
		}
		sp := &readSplit{id: s.ID, st: st}
		sp.started.Store(st.Started)
		r.splits = append(r.splits, sp)
	}
	return nil
}

// HandleEvent learns from the enumerator whether the job takes
// checkpoints. Without, messages are acknowledged as they are emitted,
// those waiting included.
func (r *reader[T]) HandleEvent(e []byte) error {
	if len(e) != 1 {
		return fmt.Errorf("%s: unexpected event from the enumerator", r.src.cfg.label())
	}
	if e[0] == eventNoCheckpointing && r.deferAcks {
		r.deferAcks = false
		for _, p := range r.pending {
			r.ack(p.msgs)
		}
		r.ack(r.since)
		r.pending, r.since = nil, nil
	}
	return nil
}

// connect starts the connection of a split.
func (r *reader[T]) connect(sp *readSplit) {
	c := r.src.cfg
	persistent := c.qos > 0
	o := linkOptions{clientID: sp.st.Client, persistent: persistent}
	if persistent {
		o.expiry = c.expiry
		if c.version == v5 {
			o.receiveMax = c.receiveMax
		}
	}
	o.onMessage = func(d *delivery) {
		d.split = sp
		r.in.put(d)
	}
	what := fmt.Sprintf("reader %d of %s (client id %s)", r.ctx.Subtask(), r.ctx.SourceName(), sp.st.Client)
	log := r.ctx.Log()
	restored := sp.started.Load()
	setup := func(ctx context.Context, l link, first bool) error {
		if persistent && !l.sessionPresent() && (restored || !first) {
			log.Warn(fmt.Sprintf("%s: the broker kept no session for client id %s: what it received while %s was disconnected, and what was read but not yet acknowledged, is lost; "+
				"'scan.session.expiry-interval' (MQTT 5) must outlast a restart, and the broker must keep sessions when it restarts (Mosquitto: persistence true)", c.label(), sp.st.Client, what))
		}
		if g := l.grantedExpiry(); persistent && g > 0 && g < c.expiry && !sp.expiryWarned {
			sp.expiryWarned = true
			log.Warn(fmt.Sprintf("%s: the broker keeps the session of client id %s for %s after a disconnection, not the %s of 'scan.session.expiry-interval': a job down for longer loses what the broker held for it",
				c.label(), sp.st.Client, g, c.expiry))
		}
		// A resumed session keeps its subscriptions; subscribing again
		// would, with 3.1.1, send the retained messages again. MQTT 5
		// subscribes every time, sending retained messages only to a new
		// subscription.
		if c.version == v311 && persistent && !first && l.sessionPresent() {
			sp.started.Store(true)
			return nil
		}
		if err := l.subscribe(ctx, sp.st.Filters, c.qos, c.retained); err != nil {
			return err
		}
		sp.started.Store(true)
		return nil
	}
	sp.conn = newConnection(c, what, log, o, persistent && c.startNew && !restored, setup)
}

func (r *reader[T]) Read(out connector.Output[T]) error {
	for _, sp := range r.splits {
		if sp.conn == nil {
			r.connect(sp)
		} else if err := sp.conn.failure(); err != nil {
			return err
		}
	}
	if len(r.splits) == 0 {
		return nil
	}
	room := out.Room()
	if room <= 0 {
		return nil
	}
	r.batch = r.in.take(r.batch[:0], room, 5*time.Millisecond)
	for i, d := range r.batch {
		if err := r.handle(out, d); err != nil {
			clear(r.batch[i:])
			return err
		}
	}
	clear(r.batch)
	return nil
}

// handle emits the records of one message.
func (r *reader[T]) handle(out connector.Output[T], d *delivery) error {
	sp := d.split
	c := r.src.cfg
	// A resumed session may hold subscriptions of a wider read than the
	// one narrowed, and a shared subscription is never narrowed: a
	// message of another topic is left out before it is decoded.
	if !(d.retained && !c.retained) && (!c.narrowed || d.topic == c.only) {
		r.cur, r.ts = out.Split(sp.id), d.received
		connector.CountBytesIn(r.ctx, len(d.payload))
		if err := r.decode.decode(d, r.emit); err != nil {
			loc := fmt.Sprintf("topic %s (client id %s, message id %d)", d.topic, sp.st.Client, d.id)
			if berr := out.BadRecord(connector.DeadLetter{Source: r.ctx.SourceName(), Location: loc, Raw: string(d.payload), Error: err.Error()}); berr != nil {
				return berr
			}
		}
	}
	if d.qos == 0 {
		return nil
	}
	if !r.deferAcks {
		r.one[0] = d
		d.link.ack(r.one[:])
		return nil
	}
	r.since = append(r.since, d)
	if n := sp.unacked.Add(1); c.version == v5 && n >= int64(c.receiveMax) {
		r.warnFull(sp, n)
	}
	return nil
}

// warnFull warns that a split holds as many unacknowledged messages as
// the broker sends it: none comes until a checkpoint completes.
func (r *reader[T]) warnFull(sp *readSplit, n int64) {
	now := time.Now()
	if now.Sub(sp.warned) < stallWarning {
		return
	}
	sp.warned = now
	r.ctx.Log().Warn(fmt.Sprintf("%s: client id %s holds %d unacknowledged messages, its 'scan.receive-maximum': the broker sends it no more until a checkpoint completes and acknowledges them, "+
		"and queues the rest (Mosquitto drops messages beyond max_queued_messages, 1000 by default). Shorten the checkpoint interval, raise 'scan.receive-maximum' (up to 65535), "+
		"or share the filters among more readers ('scan.shared-subscription.group' with a higher parallelism)", r.src.cfg.label(), sp.st.Client, n))
}

// ack acknowledges msgs, in the order they arrived, each run of messages
// of one link at once.
func (r *reader[T]) ack(msgs []*delivery) {
	for len(msgs) > 0 {
		n := 1
		for n < len(msgs) && msgs[n].link == msgs[0].link {
			n++
		}
		msgs[0].link.ack(msgs[:n])
		for _, d := range msgs[:n] {
			d.split.unacked.Add(-1)
		}
		msgs = msgs[n:]
	}
}

func (r *reader[T]) SnapshotState(id int64) ([]connector.Split, error) {
	if r.deferAcks && len(r.since) > 0 {
		r.pending = append(r.pending, covered{id: id, msgs: r.since})
		r.since = nil
	}
	out := make([]connector.Split, len(r.splits))
	for i, sp := range r.splits {
		st := sp.st
		st.Started = sp.started.Load()
		out[i] = st.split()
	}
	return out, nil
}

// NotifyCheckpointComplete acknowledges the messages the checkpoint, and
// those before it, cover.
func (r *reader[T]) NotifyCheckpointComplete(id int64) error {
	n := 0
	for n < len(r.pending) && r.pending[n].id <= id {
		r.ack(r.pending[n].msgs)
		n++
	}
	r.pending = slices.Delete(r.pending, 0, n)
	return nil
}

// Close disconnects without acknowledging what no completed checkpoint
// covers: the broker delivers it again when the sessions resume.
func (r *reader[T]) Close() error {
	r.in.close()
	for _, sp := range r.splits {
		if sp.conn != nil {
			sp.conn.close()
		}
	}
	return nil
}
