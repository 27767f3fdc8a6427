package rabbitmq

import (
	"fmt"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// restoredWindow is how long a reader restored with deduplication keeps
// the message-ids of the checkpoint after it starts consuming: the broker
// redelivers what an earlier run left unacknowledged once it notices that
// run's connection is gone, within two heartbeat intervals (20 s) even
// when the earlier process vanished without closing it.
var restoredWindow = 10 * time.Minute

// source reads a queue: a stream queue from its offsets, a classic or
// quorum queue through consumers acknowledging at checkpoints.
type source[T any] struct {
	cfg        *config
	newDecoder func() connector.Decoder[T]
}

// ChangelogMode says what the format yields: insertions, or the changes of
// a changelog format.
func (s *source[T]) ChangelogMode() changelog.Mode { return s.cfg.changelogs }

func (s *source[T]) NewReader(ctx connector.ReaderContext) (connector.Reader[T], error) {
	r := &reader[T]{
		cfg:      s.cfg,
		ctx:      ctx,
		decode:   s.newDecoder(),
		ch:       make(chan delivery, 512),
		done:     make(chan struct{}),
		seen:     map[string]int{},
		restored: map[string]time.Time{},
	}
	r.withDelivery, _ = r.decode.(deliveryDecoder)
	r.emit = func(v T) {
		if r.ts != noTimestamp {
			r.out.EmitAt(v, r.ts)
		} else {
			r.out.Emit(v)
		}
	}
	return r, nil
}

const noTimestamp = -1 << 63

// delivery is a message a consumer received, or the end of the consumer.
type delivery struct {
	sp  *readSplit
	msg amqp.Delivery
	err error // the consumer ended: its channel closed or the broker cancelled it
}

// interval is what a queue split emitted up to a checkpoint: the delivery
// tag to acknowledge when the checkpoint completes, and, deduplicating,
// the message-ids emitted since the checkpoint before.
type interval struct {
	checkpoint int64
	tag        uint64
	ids        []string
}

// readSplit is a split a reader holds, with its consumer.
type readSplit struct {
	id        string
	st        splitState
	ch        *amqp.Channel
	lastTag   uint64     // the delivery tag of the last message handled
	ackedTag  uint64     // the highest delivery tag acknowledged
	intervals []interval // queue splits: snapshotted, not yet acknowledged
	cur       []string   // deduplicating: ids emitted since the last snapshot
	messages  int64      // the messages handled, for Status
}

// reader reads its splits through one connection, a channel and consumer
// per split, all delivering into one Go channel that Read drains.
type reader[T any] struct {
	cfg    *config
	ctx    connector.ReaderContext
	decode connector.Decoder[T]
	// withDelivery is decode, if it takes metadata of the messages.
	withDelivery deliveryDecoder
	conn         *amqp.Connection
	splits       []*readSplit
	ch           chan delivery
	done         chan struct{}
	once         sync.Once

	// What the enumerator's event says.
	ready         bool
	mode          byte
	checkpointing bool
	requested     bool // asked the enumerator for a split

	// Deduplication by message-id.
	seen     map[string]int       // ids emitted and not known acknowledged (a count each)
	restored map[string]time.Time // ids of the checkpoint restored, until when to keep them (zero: not consuming yet)

	mu  sync.Mutex
	err error // the connection's failure

	out  connector.SplitOutput[T]
	ts   int64
	emit func(T)
}

func (r *reader[T]) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
}

func (r *reader[T]) failed() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *reader[T]) what() string {
	return fmt.Sprintf("reader %d of %s", r.ctx.Subtask(), r.ctx.SourceName())
}

func (r *reader[T]) AddSplits(splits []connector.Split) error {
	for _, s := range splits {
		st, err := decodeState(s.State)
		if err != nil {
			return fmt.Errorf("rabbitmq %q: split %s: %w", r.cfg.name, s.ID, err)
		}
		if st.queue != r.cfg.queue {
			return fmt.Errorf("rabbitmq %q: the checkpoint reads queue %q and 'queue' is now %q; restore with the queue the checkpoint reads, or start the job afresh", r.cfg.name, st.queue, r.cfg.queue)
		}
		for _, id := range st.ids {
			r.restored[id] = time.Time{}
		}
		st.ids = nil
		r.splits = append(r.splits, &readSplit{id: s.ID, st: st})
	}
	return nil
}

// HandleEvent takes the enumerator's word on how the source reads.
func (r *reader[T]) HandleEvent(event []byte) error {
	if len(event) != 3 || event[0] != eventVersion {
		return fmt.Errorf("rabbitmq %q: the enumerator sent an event of another version", r.cfg.name)
	}
	r.ready, r.mode, r.checkpointing = true, event[1], event[2] == 1
	if !r.checkpointing && r.mode != readStream && r.ctx.Subtask() == 0 {
		r.ctx.Log().Warn(fmt.Sprintf("rabbitmq %q: the job takes no checkpoints, so messages of queue %q are acknowledged as soon as they are emitted: "+
			"a failure loses those still in the job (at most once); enable checkpointing (eddy.WithCheckpointing, or SET 'execution.checkpointing.interval' in SQL) for at-least-once", r.cfg.name, r.cfg.queue))
	}
	return nil
}

// prefetch is the prefetch count of a consumer of a split: a stream
// consumer needs one.
func (r *reader[T]) prefetch(sp *readSplit) int {
	if sp.st.kind == streamSplit && r.cfg.prefetch == 0 {
		return maxPrefetch
	}
	return r.cfg.prefetch
}

// start connects, if not yet connected, and starts the consumer of sp.
func (r *reader[T]) start(sp *readSplit) error {
	c := r.cfg
	if r.conn == nil {
		conn, err := c.dial(r.what(), r.ctx.Log())
		if err != nil {
			return err
		}
		r.conn = conn
		closed := conn.NotifyClose(make(chan *amqp.Error, 1))
		go func() {
			if err, ok := <-closed; ok && err != nil {
				r.fail(fmt.Errorf("rabbitmq %q: the connection of %s to %s closed: %w; the job restarts from its last checkpoint, and the broker delivers again the messages not acknowledged", c.name, r.what(), c.broker(), err))
			}
		}()
	}
	ch, err := r.conn.Channel()
	if err != nil {
		return fmt.Errorf("rabbitmq %q: opening a channel on %s: %w", c.name, c.broker(), err)
	}
	if err := ch.Qos(r.prefetch(sp), 0, false); err != nil {
		return fmt.Errorf("rabbitmq %q: setting the prefetch count of %s: %w", c.name, sp.id, err)
	}
	var args amqp.Table
	from := ""
	if sp.st.kind == streamSplit {
		if sp.st.first {
			args, from = amqp.Table{"x-stream-offset": "first"}, " from its first message"
		} else {
			args, from = amqp.Table{"x-stream-offset": sp.st.next}, fmt.Sprintf(" from offset %d", sp.st.next)
		}
	}
	deliveries, err := ch.Consume(c.queue, "eddy-"+randomID(), false, false, false, false, args)
	if err != nil {
		return fmt.Errorf("rabbitmq %q: consuming queue %q%s (%s): %w", c.name, c.queue, from, sp.id, err)
	}
	chClosed := ch.NotifyClose(make(chan *amqp.Error, 1))
	cancelled := ch.NotifyCancel(make(chan string, 1))
	go func() {
		for d := range deliveries {
			select {
			case r.ch <- delivery{sp: sp, msg: d}:
			case <-r.done:
				return
			}
		}
		err := fmt.Errorf("rabbitmq %q: the consumer of queue %q (%s) ended", c.name, c.queue, sp.id)
		select {
		case e := <-chClosed:
			if e != nil {
				err = fmt.Errorf("rabbitmq %q: the channel consuming queue %q (%s) closed: %w; the job restarts from its last checkpoint, and the broker delivers again the messages not acknowledged", c.name, c.queue, sp.id, e)
			}
		case <-cancelled:
			err = fmt.Errorf("rabbitmq %q: the broker cancelled the consumer of queue %q (%s): was the queue deleted?", c.name, c.queue, sp.id)
		case <-r.done:
			return
		case <-time.After(time.Second):
		}
		select {
		case r.ch <- delivery{sp: sp, err: err}:
		case <-r.done:
		}
	}()
	sp.ch = ch
	now := time.Now()
	for id, until := range r.restored {
		if until.IsZero() {
			r.restored[id] = now.Add(restoredWindow)
		}
	}
	return nil
}

func (r *reader[T]) Read(out connector.Output[T]) error {
	if err := r.failed(); err != nil {
		return err
	}
	if !r.ready {
		time.Sleep(2 * time.Millisecond)
		return nil
	}
	if r.mode == readShared && len(r.splits) == 0 && !r.requested {
		r.requested = true
		r.ctx.RequestSplit()
	}
	for _, sp := range r.splits {
		if sp.ch == nil {
			if err := r.start(sp); err != nil {
				return err
			}
		}
	}
	if len(r.splits) == 0 || out.Room() <= 0 {
		return nil
	}
	defer r.ackEmitted()
	timer := time.NewTimer(5 * time.Millisecond)
	defer timer.Stop()
	var d delivery
	select {
	case d = <-r.ch:
	case <-timer.C:
		return nil
	}
	for {
		if err := r.handle(out, d); err != nil {
			return err
		}
		if out.Room() <= 0 {
			return nil
		}
		select {
		case d = <-r.ch:
		default:
			return nil
		}
	}
}

// ackEmitted acknowledges what was emitted where acknowledgements do not
// wait for checkpoints: on streams (where they only give the consumer
// credit) and on queues of a job that takes no checkpoints.
func (r *reader[T]) ackEmitted() {
	for _, sp := range r.splits {
		if sp.ch == nil || sp.lastTag <= sp.ackedTag || (sp.st.kind == queueSplit && r.checkpointing) {
			continue
		}
		if err := sp.ch.Ack(sp.lastTag, true); err != nil {
			r.fail(fmt.Errorf("rabbitmq %q: acknowledging messages of queue %q (%s): %w", r.cfg.name, r.cfg.queue, sp.id, err))
			return
		}
		sp.ackedTag = sp.lastTag
	}
}

// handle emits the records of one message.
func (r *reader[T]) handle(out connector.Output[T], d delivery) error {
	if d.err != nil {
		return d.err
	}
	sp, m := d.sp, d.msg
	sp.lastTag = m.DeliveryTag
	sp.messages++
	var loc string
	switch sp.st.kind {
	case streamSplit:
		off, ok := streamOffset(m)
		if !ok {
			return fmt.Errorf("rabbitmq %q: a message of stream %q has no x-stream-offset header", r.cfg.name, r.cfg.queue)
		}
		if !sp.st.first && off < sp.st.next {
			return nil // before the offset the split resumes at: the start of its chunk
		}
		sp.st.first, sp.st.next = false, off+1
		loc = fmt.Sprintf("stream %s offset %d", r.cfg.queue, off)
	default:
		loc = fmt.Sprintf("queue %s delivery %d", r.cfg.queue, m.DeliveryTag)
		if m.MessageId != "" {
			loc += fmt.Sprintf(" (message-id %s)", m.MessageId)
		}
		if r.mode == readSingle {
			id := m.MessageId
			if id == "" {
				return out.BadRecord(connector.DeadLetter{Source: r.ctx.SourceName(), Location: loc, Raw: string(m.Body),
					Error: "the message has no message-id, which 'scan.deduplication' = 'message-id' needs: set a unique message-id on every message published to the queue, or set 'scan.deduplication' = 'none'"})
			}
			// Without checkpoints every message is acknowledged as it is
			// emitted and no checkpoint would let the reader forget an id:
			// it keeps none.
			if r.checkpointing {
				if m.Redelivered {
					if r.seen[id] > 0 {
						return nil // emitted by this run, delivered again
					}
					if _, ok := r.restored[id]; ok {
						// Emitted by an earlier run before its checkpoint: keep
						// the id until this delivery is acknowledged.
						delete(r.restored, id)
						r.remember(sp, id)
						return nil
					}
				}
				r.remember(sp, id)
			}
		}
	}
	connector.CountBytesIn(r.ctx, len(m.Body))
	if !r.cfg.passes(m.RoutingKey, m.Headers) {
		// Left out by the conditions on the routing key or headers,
		// undecoded, and acknowledged with the messages around it.
		return nil
	}
	r.out = out.Split(sp.id)
	r.ts = noTimestamp
	if !m.Timestamp.IsZero() {
		r.ts = m.Timestamp.UnixMilli()
	}
	if r.withDelivery != nil {
		r.withDelivery.setDelivery(m.RoutingKey, m.Headers)
	}
	if err := r.decode.Decode(m.Body, r.emit); err != nil {
		return out.BadRecord(connector.DeadLetter{Source: r.ctx.SourceName(), Location: loc, Raw: string(m.Body), Error: err.Error()})
	}
	return nil
}

// Status reports the queue and, per split the reader reads (by its id),
// the messages delivered to it ("messagesRecords") and, of a stream, the
// offset of the next message to read ("offset", absent before the first
// of a split starting at the stream's first message), of a classic or
// quorum queue the deliveries not acknowledged yet ("unackedRecords"); and
// the sum of the messages delivered ("messagesRecords").
func (r *reader[T]) Status() map[string]any {
	splits := make(map[string]any, len(r.splits))
	var messages int64
	for _, sp := range r.splits {
		ss := map[string]any{"messagesRecords": sp.messages}
		messages += sp.messages
		switch sp.st.kind {
		case streamSplit:
			if !sp.st.first {
				ss["offset"] = sp.st.next
			}
		default:
			ss["unackedRecords"] = sp.lastTag - min(sp.ackedTag, sp.lastTag)
		}
		splits[sp.id] = ss
	}
	return map[string]any{"queue": r.cfg.queue, "splits": splits, "messagesRecords": messages}
}

// remember notes that the message id was emitted by sp.
func (r *reader[T]) remember(sp *readSplit, id string) {
	r.seen[id]++
	sp.cur = append(sp.cur, id)
}

// SnapshotState returns the reader's splits: a stream's offset; a queue
// consumer's message-ids not known acknowledged. A queue split notes the
// last delivery tag the checkpoint covers, to acknowledge when it
// completes.
func (r *reader[T]) SnapshotState(id int64) ([]connector.Split, error) {
	out := make([]connector.Split, len(r.splits))
	for i, sp := range r.splits {
		st := sp.st
		if st.kind == queueSplit {
			sp.intervals = append(sp.intervals, interval{checkpoint: id, tag: sp.lastTag, ids: sp.cur})
			sp.cur = nil
			if r.mode == readSingle {
				for _, iv := range sp.intervals {
					st.ids = append(st.ids, iv.ids...)
				}
				for rid := range r.restored {
					st.ids = append(st.ids, rid)
				}
			}
		}
		out[i] = connector.Split{ID: sp.id, State: st.encode()}
	}
	return out, nil
}

// NotifyCheckpointComplete acknowledges, on each queue consumer's channel,
// every message up to the last one the checkpoint covers. Deduplicating,
// it then waits for the broker to have handled the acknowledgement before
// it forgets the message-ids.
func (r *reader[T]) NotifyCheckpointComplete(id int64) error {
	for _, sp := range r.splits {
		if sp.st.kind != queueSplit || sp.ch == nil {
			continue
		}
		n := 0
		for n < len(sp.intervals) && sp.intervals[n].checkpoint <= id {
			n++
		}
		if n == 0 {
			continue
		}
		tag := sp.intervals[n-1].tag
		if tag > sp.ackedTag {
			if err := sp.ch.Ack(tag, true); err != nil {
				return fmt.Errorf("rabbitmq %q: acknowledging the messages of queue %q (%s) up to checkpoint %d: %w", r.cfg.name, r.cfg.queue, sp.id, id, err)
			}
			sp.ackedTag = tag
		}
		if r.mode == readSingle {
			// A synchronous method on the channel returns after the broker
			// has handled the acknowledgement before it.
			if err := sp.ch.Qos(r.prefetch(sp), 0, false); err != nil {
				return fmt.Errorf("rabbitmq %q: confirming the acknowledgement of the messages of queue %q (%s) up to checkpoint %d: %w", r.cfg.name, r.cfg.queue, sp.id, id, err)
			}
			for _, iv := range sp.intervals[:n] {
				for _, mid := range iv.ids {
					if r.seen[mid]--; r.seen[mid] <= 0 {
						delete(r.seen, mid)
					}
				}
			}
		}
		sp.intervals = append(sp.intervals[:0], sp.intervals[n:]...)
	}
	now := time.Now()
	for mid, until := range r.restored {
		if !until.IsZero() && now.After(until) {
			delete(r.restored, mid)
		}
	}
	return nil
}

func (r *reader[T]) Close() error {
	r.once.Do(func() { close(r.done) })
	closeConn(r.conn)
	return nil
}
