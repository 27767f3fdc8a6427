package nats

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// source reads a JetStream stream (cfg.stream set) or core NATS subjects.
// Its splits are the stream's subject filters (one split for the whole
// stream without any) or the core subjects.
type source[T any] struct {
	cfg        *config
	table      *connector.Table // the table read, nil in the Go API
	newDecoder func() messageDecoder[T]
	// narrowed says that a condition on the subject (ApplyFilters) limits
	// what is read to the subject only, or, if only is "", to nothing.
	narrowed bool
	only     string
}

// ChangelogMode says what the format yields: insertions, or the changes of
// a changelog format.
func (s *source[T]) ChangelogMode() changelog.Mode { return s.cfg.changelogs }

// splitState is the state of a split: for JetStream the filter and the
// next stream sequence to read (and, for a bounded read, the last one); for
// core NATS the subject.
type splitState struct {
	filter  string
	next    uint64 // JetStream: the sequence of the next message to emit
	bounded bool
	end     uint64 // JetStream, bounded: the last sequence to read
}

const stateVersion = 1

func (s splitState) encode() []byte {
	b := []byte{stateVersion}
	b = binary.AppendUvarint(b, s.next)
	if s.bounded {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.AppendUvarint(b, s.end)
	b = binary.AppendUvarint(b, uint64(len(s.filter)))
	return append(b, s.filter...)
}

func decodeState(b []byte) (splitState, error) {
	var s splitState
	bad := errors.New("split state is corrupt or of another source")
	if len(b) < 1 || b[0] != stateVersion {
		return s, bad
	}
	b = b[1:]
	var n int
	if s.next, n = binary.Uvarint(b); n <= 0 || len(b) < n+1 {
		return s, bad
	}
	s.bounded = b[n] == 1
	b = b[n+1:]
	if s.end, n = binary.Uvarint(b); n <= 0 {
		return s, bad
	}
	b = b[n:]
	l, n := binary.Uvarint(b)
	if n <= 0 || uint64(len(b)-n) != l {
		return s, bad
	}
	s.filter = string(b[n:])
	return s, nil
}

// splitID names the split of a filter.
func (c *config) splitID(filter string) string {
	if c.stream == "" {
		return filter
	}
	if filter == "" {
		return c.stream
	}
	return c.stream + ":" + filter
}

func (s *source[T]) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) {
		filters := s.filters()
		if s.cfg.stream == "" {
			out := make([]connector.Split, len(filters))
			for i, subj := range filters {
				out[i] = connector.Split{ID: subj, State: splitState{filter: subj}.encode()}
			}
			return out, nil
		}
		return s.cfg.discover(ctx, filters)
	})
}

// filters returns the subjects (core NATS) or the subject filters of the
// stream ("" for the whole stream) to read, one split each.
func (s *source[T]) filters() []string {
	switch {
	case s.narrowed && s.only == "":
		return nil
	case s.narrowed:
		return []string{s.only}
	case s.cfg.stream != "" && len(s.cfg.subjects) == 0:
		return []string{""}
	}
	return s.cfg.subjects
}

// discover resolves where each filter of the stream starts (and, for a
// bounded read, ends) on a job's first run.
func (c *config) discover(ectx connector.EnumeratorContext, filters []string) ([]connector.Split, error) {
	if len(filters) == 0 {
		return nil, nil
	}
	nc, js, st, err := c.jetStream("enumerator of "+ectx.SourceName(), ectx.Log())
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	info, err := st.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("nats %q: reading the state of stream %q: %w", c.name, c.stream, err)
	}
	if c.consumer != "" {
		if err := c.checkResetSupported(nc); err != nil {
			return nil, err
		}
	}
	var out []connector.Split
	for _, f := range filters {
		s := splitState{filter: f, bounded: c.bounded}
		switch c.startMode {
		case earliest:
			s.next = 1
		case latest:
			s.next = info.State.LastSeq + 1
		case specific:
			s.next = c.startSeq
		case timestamp:
			if s.next, err = c.firstAtTime(ctx, js, f, info.State.LastSeq); err != nil {
				return nil, err
			}
		}
		if c.consumer != "" {
			if s.next, err = c.openDurable(ctx, js, f, s.next); err != nil {
				return nil, err
			}
		}
		if c.bounded {
			if f == "" {
				s.end = info.State.LastSeq
			} else {
				m, err := st.GetLastMsgForSubject(ctx, f)
				switch {
				case errors.Is(err, jetstream.ErrMsgNotFound):
					s.end = 0
				case err != nil:
					return nil, fmt.Errorf("nats %q: finding the last message of %q in stream %q: %w", c.name, f, c.stream, err)
				default:
					s.end = m.Sequence
				}
			}
		}
		out = append(out, connector.Split{ID: c.splitID(f), State: s.encode()})
	}
	return out, nil
}

// firstAtTime returns the sequence of the first message of filter stored at
// or after the start time, or last+1 if there is none yet.
func (c *config) firstAtTime(ctx context.Context, js jetstream.JetStream, filter string, last uint64) (uint64, error) {
	t := time.UnixMilli(c.startTime)
	cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &t}
	if filter != "" {
		cfg.FilterSubjects = []string{filter}
	}
	cons, err := js.OrderedConsumer(ctx, c.stream, cfg)
	if err != nil {
		return 0, fmt.Errorf("nats %q: looking for the first message at %s in stream %q: %w", c.name, t.UTC().Format(time.RFC3339Nano), c.stream, err)
	}
	batch, err := cons.FetchNoWait(1)
	if err != nil {
		return 0, fmt.Errorf("nats %q: looking for the first message at %s in stream %q: %w", c.name, t.UTC().Format(time.RFC3339Nano), c.stream, err)
	}
	for m := range batch.Messages() {
		if md, err := m.Metadata(); err == nil {
			return md.Sequence.Stream, nil
		}
	}
	if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
		return 0, fmt.Errorf("nats %q: looking for the first message at %s in stream %q: %w", c.name, t.UTC().Format(time.RFC3339Nano), c.stream, err)
	}
	return last + 1, nil
}

func (s *source[T]) NewReader(ctx connector.ReaderContext) (connector.Reader[T], error) {
	r := &reader[T]{
		src:    s,
		ctx:    ctx,
		decode: s.newDecoder(),
		ch:     make(chan delivery, 1024),
		done:   make(chan struct{}),
	}
	r.emit = func(v T) {
		if r.ts >= 0 {
			r.cur.EmitAt(v, r.ts)
		} else {
			r.cur.Emit(v)
		}
	}
	return r, nil
}

// delivery is a message that arrived for a split, or the answer of a
// check whether a bounded split has anything left to read.
type delivery struct {
	sp    *readSplit
	js    jetstream.Msg
	core  *natsgo.Msg
	check *drainCheck
}

// drainCheck is the answer of a look at the stream for a bounded split:
// whether any message of its filter from sequence at up to its end remains.
type drainCheck struct {
	at      uint64
	drained bool
}

// drainIdle is how long a bounded split waits for a message before it
// looks whether the stream still holds any message up to its end: the
// message at the end may be gone (a work-queue or interest stream, a
// deleted message, max-age), and then none with a sequence at or after the
// end may ever come.
const drainIdle = 100 * time.Millisecond

// readSplit is a split a reader holds.
type readSplit struct {
	id       string
	st       splitState
	cons     jetstream.Consumer // the ordered consumer
	cc       jetstream.ConsumeContext
	sub      *natsgo.Subscription
	finished bool
	active   time.Time // bounded: when a message or a check last came
	checking bool      // bounded: a check is under way
	// For Status: the messages read, and for JetStream the number of
	// messages of the filter after the last one read (its metadata's
	// NumPending) and the time it was stored.
	messages int64
	pending  uint64
	lastTS   int64
}

// reader reads its splits through one connection: an ordered consumer per
// JetStream split, a subscription per core subject, all delivering into
// one channel that Read drains.
type reader[T any] struct {
	src    *source[T]
	ctx    connector.ReaderContext
	decode messageDecoder[T]
	msg    message // the message being decoded
	nc     *natsgo.Conn
	js     jetstream.JetStream
	st     jetstream.Stream
	splits []*readSplit
	ch     chan delivery
	done   chan struct{}
	once   sync.Once

	mu  sync.Mutex
	err error // a consumer's terminal error

	cur  connector.SplitOutput[T]
	ts   int64
	emit func(T)

	// With 'consumer': the durable consumers of the splits, and the last
	// positions of the splits finished.
	durables *durables
	final    map[string]uint64
	finalOf  map[string]string // consumer -> filter, of final
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

func (r *reader[T]) AddSplits(splits []connector.Split) error {
	c := r.src.cfg
	for _, s := range splits {
		st, err := decodeState(s.State)
		if err != nil {
			return fmt.Errorf("nats %q: split %s: %w", c.name, s.ID, err)
		}
		if c.consumer != "" {
			if _, ok := c.durableName(st.filter); !ok {
				r.ctx.Log().Warn(fmt.Sprintf("nats %q: split %s reads %q, which no filter of 'subject' takes (it comes from a checkpoint of other options): no durable consumer follows it", c.name, s.ID, st.filter))
			}
		}
		r.splits = append(r.splits, &readSplit{id: s.ID, st: st})
	}
	return nil
}

// start connects, if not yet connected, and starts delivering the messages
// of sp.
func (r *reader[T]) start(sp *readSplit) error {
	c := r.src.cfg
	what := fmt.Sprintf("reader %d of %s", r.ctx.Subtask(), r.ctx.SourceName())
	if r.nc == nil {
		if c.stream == "" {
			nc, err := c.connect(what, r.ctx.Log())
			if err != nil {
				return err
			}
			r.nc = nc
		} else {
			nc, js, st, err := c.jetStream(what, r.ctx.Log())
			if err != nil {
				return err
			}
			r.nc, r.js, r.st = nc, js, st
			if c.consumer != "" {
				if err := c.checkResetSupported(nc); err != nil {
					return err
				}
				r.durables = newDurables(c, js, r.ctx.Log())
			}
		}
	}
	if c.stream == "" {
		sub, err := r.nc.Subscribe(sp.st.filter, func(m *natsgo.Msg) {
			select {
			case r.ch <- delivery{sp: sp, core: m}:
			case <-r.done:
			}
		})
		if err != nil {
			return fmt.Errorf("nats %q: subscribing to %q: %w", c.name, sp.st.filter, err)
		}
		sp.sub = sub
		return nil
	}
	cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: sp.st.next}
	if sp.st.filter != "" {
		cfg.FilterSubjects = []string{sp.st.filter}
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	cons, err := r.js.OrderedConsumer(ctx, c.stream, cfg)
	if err != nil {
		return fmt.Errorf("nats %q: reading stream %q from sequence %d (split %s): %w", c.name, c.stream, sp.st.next, sp.id, err)
	}
	log := r.ctx.Log()
	cc, err := cons.Consume(func(m jetstream.Msg) {
		select {
		case r.ch <- delivery{sp: sp, js: m}:
		case <-r.done:
		}
	}, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			r.fail(fmt.Errorf("nats %q: stream %q is gone: %w", c.name, c.stream, err))
			return
		}
		log.Warn("nats: consuming a stream", "stream", c.stream, "split", sp.id, "error", err)
	}))
	if err != nil {
		return fmt.Errorf("nats %q: reading stream %q from sequence %d (split %s): %w", c.name, c.stream, sp.st.next, sp.id, err)
	}
	sp.cons, sp.cc = cons, cc
	sp.active = time.Now()
	return nil
}

// dropConsumers stops the ordered consumers of splits and deletes them on
// the server, which would otherwise keep them for minutes after the reader
// stops, holding the messages of interest and work-queue streams.
func (r *reader[T]) dropConsumers(splits ...*readSplit) {
	var names []string
	for _, sp := range splits {
		if sp.cc != nil {
			sp.cc.Stop()
		}
		if sp.cons != nil {
			if info := sp.cons.CachedInfo(); info != nil {
				names = append(names, info.Name)
			}
		}
	}
	if len(names) == 0 || r.js == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, n := range names {
		_ = r.js.DeleteConsumer(ctx, r.src.cfg.stream, n) // it goes away by itself if this fails
	}
}

// checkDrained looks, on a goroutine of its own, whether the stream holds
// any message of the split's filter from its next sequence up to its end,
// and delivers the answer.
func (r *reader[T]) checkDrained(sp *readSplit) {
	sp.checking = true
	at, end, filter := sp.st.next, sp.st.end, sp.st.filter
	if filter == "" {
		filter = ">"
	}
	c, st, log := r.src.cfg, r.st, r.ctx.Log()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		chk := &drainCheck{at: at}
		m, err := st.GetMsg(ctx, at, jetstream.WithGetMsgSubject(filter))
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			chk.drained = true
		case err != nil:
			log.Warn("nats: looking for the rest of a bounded read", "stream", c.stream, "split", sp.id, "from", at, "error", err)
		default:
			chk.drained = m.Sequence > end
		}
		select {
		case r.ch <- delivery{sp: sp, check: chk}:
		case <-r.done:
		}
	}()
}

// finish ends a split read to its bound.
func (r *reader[T]) finish(out connector.Output[T], sp *readSplit) {
	sp.finished = true
	r.dropConsumers(sp)
	if r.durables != nil {
		if name, ok := r.src.cfg.durableName(sp.st.filter); ok {
			if r.final == nil {
				r.final, r.finalOf = map[string]uint64{}, map[string]string{}
			}
			r.final[name], r.finalOf[name] = sp.st.next, sp.st.filter
		}
	}
	out.Split(sp.id).Finish()
	for i, s := range r.splits {
		if s == sp {
			r.splits = append(r.splits[:i], r.splits[i+1:]...)
			break
		}
	}
}

func (r *reader[T]) Read(out connector.Output[T]) error {
	if err := r.failed(); err != nil {
		return err
	}
	for _, sp := range append([]*readSplit(nil), r.splits...) {
		if sp.cc != nil || sp.sub != nil {
			continue
		}
		if sp.st.bounded && sp.st.next > sp.st.end {
			r.finish(out, sp) // nothing to read
			continue
		}
		if err := r.start(sp); err != nil {
			return err
		}
	}
	if len(r.splits) == 0 {
		return nil
	}
	now := time.Now()
	for _, sp := range r.splits {
		if sp.st.bounded && sp.cc != nil && !sp.checking && now.Sub(sp.active) >= drainIdle {
			r.checkDrained(sp)
		}
	}
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

// handle emits the records of one message.
func (r *reader[T]) handle(out connector.Output[T], d delivery) error {
	sp := d.sp
	if sp.finished {
		return nil
	}
	if d.check != nil {
		sp.checking, sp.active = false, time.Now()
		if d.check.drained && d.check.at == sp.st.next {
			r.finish(out, sp) // what remained up to the end is gone
		}
		return nil
	}
	r.cur = out.Split(sp.id)
	sp.messages++
	if d.core != nil {
		r.ts = -1
		r.msg = message{subject: d.core.Subject, ts: time.Now().UnixMilli(), header: d.core.Header, data: d.core.Data}
		connector.CountBytesIn(r.ctx, len(d.core.Data))
		if err := r.decode.decode(&r.msg, r.emit); err != nil {
			return out.BadRecord(connector.DeadLetter{Source: r.ctx.SourceName(), Location: r.src.cfg.location(&r.msg), Raw: string(d.core.Data), Error: err.Error()})
		}
		return nil
	}
	md, err := d.js.Metadata()
	if err != nil {
		return fmt.Errorf("nats %q: a message of stream %q has no JetStream metadata: %w", r.src.cfg.name, r.src.cfg.stream, err)
	}
	seq := md.Sequence.Stream
	if seq < sp.st.next {
		return nil // delivered again after the consumer was recreated
	}
	if sp.st.bounded && seq > sp.st.end {
		r.finish(out, sp)
		return nil
	}
	r.ts = md.Timestamp.UnixMilli()
	sp.pending, sp.lastTS = md.NumPending, r.ts
	sp.st.next = seq + 1
	sp.active = time.Now()
	r.msg = message{subject: d.js.Subject(), seq: seq, ts: r.ts, header: d.js.Headers(), data: d.js.Data()}
	connector.CountBytesIn(r.ctx, len(r.msg.data))
	if err := r.decode.decode(&r.msg, r.emit); err != nil {
		if berr := out.BadRecord(connector.DeadLetter{Source: r.ctx.SourceName(), Location: r.src.cfg.location(&r.msg), Raw: string(d.js.Data()), Error: err.Error()}); berr != nil {
			return berr
		}
	}
	if sp.st.bounded && seq >= sp.st.end {
		r.finish(out, sp)
	}
	return nil
}

// Status reports, per split the reader reads (by its id), the messages
// read ("messagesRecords") and, of a JetStream stream, the stream sequence
// of the next message to read ("nextSequence"), the messages of its
// filter after the last one read, as that message's metadata told
// ("pendingRecords"), and when that message was stored
// ("lastMessageTime"); and the sums over the splits ("messagesRecords",
// "pendingRecords").
func (r *reader[T]) Status() map[string]any {
	splits := make(map[string]any, len(r.splits))
	var messages int64
	var pending uint64
	for _, sp := range r.splits {
		ss := map[string]any{"messagesRecords": sp.messages}
		messages += sp.messages
		if r.src.cfg.stream != "" { // JetStream
			ss["nextSequence"] = sp.st.next
			ss["pendingRecords"] = sp.pending
			pending += sp.pending
			if sp.lastTS != 0 {
				ss["lastMessageTime"] = time.UnixMilli(sp.lastTS).UTC().Format(time.RFC3339Nano)
			}
		}
		splits[sp.id] = ss
	}
	m := map[string]any{"splits": splits, "messagesRecords": messages}
	if r.src.cfg.stream != "" {
		m["stream"] = r.src.cfg.stream
		m["pendingRecords"] = pending
	}
	return m
}

func (r *reader[T]) SnapshotState(cp int64) ([]connector.Split, error) {
	out := make([]connector.Split, len(r.splits))
	for i, sp := range r.splits {
		out[i] = connector.Split{ID: sp.id, State: sp.st.encode()}
	}
	if r.durables != nil {
		pos, filters := map[string]uint64{}, map[string]string{}
		for name, next := range r.final {
			pos[name], filters[name] = next, r.finalOf[name]
		}
		for _, sp := range r.splits {
			if name, ok := r.src.cfg.durableName(sp.st.filter); ok {
				pos[name], filters[name] = sp.st.next, sp.st.filter
			}
		}
		r.durables.snapshot(cp, pos, filters)
	}
	return out, nil
}

// NotifyCheckpointComplete moves the durable consumers, with 'consumer',
// to the positions of the checkpoint.
func (r *reader[T]) NotifyCheckpointComplete(cp int64) error {
	if r.durables != nil {
		r.durables.completed(cp)
	}
	return nil
}

func (r *reader[T]) Close() error {
	r.once.Do(func() { close(r.done) })
	if r.durables != nil {
		r.durables.close()
	}
	r.dropConsumers(r.splits...)
	for _, sp := range r.splits {
		if sp.sub != nil {
			_ = sp.sub.Unsubscribe()
		}
	}
	if r.nc != nil {
		r.nc.Close()
	}
	return nil
}
