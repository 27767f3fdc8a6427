package redis

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/eddystream/eddy/connector"
)

// blockTime is how long one XREAD or XREADGROUP waits for new entries.
var blockTime = 500 * time.Millisecond

// retryFor is how long a reader retries failing reads before it fails the
// job.
var retryFor = time.Minute

// ackChunk is how many ids one XACK acknowledges at most.
const ackChunk = 1000

// readSplit is a split a reader holds: the stream (without a group) or a
// consumer of the group.
type readSplit struct {
	id       string
	plain    plainState
	group    groupState
	open     *idRange // group: the consumed part of the batch being read
	running  bool     // its fetcher runs
	finished bool
}

// batch is what a fetcher read: entries of one split, or the end of a
// bounded split.
type batch struct {
	sp         *readSplit
	msgs       []goredis.XMessage
	contiguous bool // every entry of the stream from the first to the last (XREADGROUP >)
	end        bool
	i          int // the next entry to consume
}

// ackSet is what a checkpoint's completion acknowledges.
type ackSet struct {
	checkpoint int64
	ids        []string
}

// reader reads its splits, one fetcher goroutine per split delivering
// batches into a channel that Read drains.
type reader[T any] struct {
	cfg   *config
	ctx   connector.ReaderContext
	dec   connector.Decoder[T]
	meta  entryMeta
	group bool

	cli    *goredis.Client
	rctx   context.Context
	cancel context.CancelFunc
	ch     chan *batch
	done   chan struct{}
	once   sync.Once
	wg     sync.WaitGroup

	splits  []*readSplit
	ready   bool     // group: the enumerator said go
	skip    rangeSet // group: entries consumed before the restore
	autoAck bool     // group: no checkpoints; acknowledge entries once emitted
	cur     *batch

	toAck []string // group: consumed since the last snapshot
	acks  []ackSet // group: consumed before snapshots not yet completed

	mu  sync.Mutex
	err error

	emitOut connector.SplitOutput[T]
	emitTS  int64
	emit    func(T)

	// For Status: the entries read, and the id of the last one.
	entries int64
	lastID  entryID
}

func newReader[T any](s *source[T], ctx connector.ReaderContext) *reader[T] {
	r := &reader[T]{cfg: s.cfg, ctx: ctx, group: s.cfg.group != "", done: make(chan struct{}), ch: make(chan *batch, 4)}
	r.meta.stream = s.cfg.stream
	r.dec = s.newDecoder(&r.meta)
	r.ready = !r.group
	r.rctx, r.cancel = context.WithCancel(context.Background())
	r.emit = func(v T) { r.emitOut.EmitAt(v, r.emitTS) }
	return r
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

func (r *reader[T]) stopped() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// AddSplits takes the stream's split or consumers. A reader of a group
// sends the states of consumers restored from a checkpoint to the
// enumerator, which resets the group once it has them all.
func (r *reader[T]) AddSplits(splits []connector.Split) error {
	c := r.cfg
	var restored []connector.Split
	for _, s := range splits {
		sp := &readSplit{id: s.ID}
		switch k := stateKind(s.State); {
		case !r.group && k == kindPlain:
			st, err := decodePlain(s.State)
			if err != nil {
				return fmt.Errorf("redis %q: split %s: %w", c.name, s.ID, err)
			}
			if st.stream != c.stream {
				return fmt.Errorf("redis %q: the checkpoint was taken reading stream %q, not %q: restore it with its stream, or start the job without restoring", c.name, st.stream, c.stream)
			}
			sp.plain = st
		case r.group && k == kindGroup:
			st, err := decodeGroup(s.State)
			if err != nil {
				return fmt.Errorf("redis %q: consumer %s: %w", c.name, s.ID, err)
			}
			sp.group = st
			if st.flags&flagFresh == 0 {
				restored = append(restored, s)
			}
		case k == kindGroup:
			return fmt.Errorf("redis %q: the checkpoint was taken reading stream %q through a consumer group; the source now has no 'group': set it again, or start the job without restoring", c.name, c.stream)
		case k == kindPlain:
			return fmt.Errorf("redis %q: the checkpoint was taken reading stream %q without a consumer group; the source now has 'group' = %q: remove it, or start the job without restoring", c.name, c.stream, c.group)
		default:
			return fmt.Errorf("redis %q: split %s: %w", c.name, s.ID, errCorrupt)
		}
		r.splits = append(r.splits, sp)
	}
	if len(restored) > 0 {
		r.ctx.SendEvent(append([]byte{eventRestored}, connector.EncodeSplits(restored)...))
	}
	return nil
}

// HandleEvent takes the enumerator's go and new floors.
func (r *reader[T]) HandleEvent(event []byte) error {
	kind, g, err := decodeEvent(event)
	if err != nil {
		return fmt.Errorf("redis %q: %w", r.cfg.name, err)
	}
	switch kind {
	case eventGo:
		// The enumerator's state holds the ranges consumed before the
		// restore: the consumers start again from the floor.
		r.ready, r.skip, r.autoAck = true, g.skip, g.autoAck
		for _, sp := range r.splits {
			sp.group.floor, sp.group.ranges = g.floor, nil
		}
	case eventFloor:
		r.skip = r.skip.above(g.floor)
		for _, sp := range r.splits {
			if sp.group.floor.less(g.floor) {
				sp.group.floor = g.floor
				sp.group.ranges = sp.group.ranges.above(g.floor)
			}
		}
	}
	return nil
}

// start starts the fetcher of sp.
func (r *reader[T]) start(sp *readSplit) {
	if r.cli == nil {
		cli, err := r.cfg.client()
		if err != nil {
			r.fail(err)
			return
		}
		r.cli = cli
	}
	sp.running = true
	r.wg.Add(1)
	if r.group {
		go r.fetchGroup(sp, sp.group.flags&flagReadPending != 0)
	} else {
		go r.fetchPlain(sp, sp.plain)
	}
}

// deliver hands a batch to Read; it returns false once the reader closes.
func (r *reader[T]) deliver(b *batch) bool {
	select {
	case r.ch <- b:
		return true
	case <-r.done:
		return false
	}
}

// retrier paces the retries of a failing fetcher.
type retrier struct {
	since   time.Time
	backoff time.Duration
}

// failed notes a failure; it returns false once the failures have lasted
// retryFor, after waiting before the next try otherwise.
func (t *retrier) failed(log func(), done <-chan struct{}) bool {
	if t.since.IsZero() {
		t.since, t.backoff = time.Now(), 50*time.Millisecond
		log()
	}
	if time.Since(t.since) > retryFor {
		return false
	}
	select {
	case <-time.After(t.backoff):
	case <-done:
	}
	t.backoff = min(2*t.backoff, 2*time.Second)
	return true
}

func (t *retrier) ok() { t.since = time.Time{} }

// fetchPlain reads the stream after st.pos with XREAD (or, bounded, XRANGE
// up to st.end).
func (r *reader[T]) fetchPlain(sp *readSplit, st plainState) {
	defer r.wg.Done()
	c := r.cfg
	pos := st.pos
	var rt retrier
	for !r.stopped() {
		var msgs []goredis.XMessage
		var err error
		if st.bounded {
			start := "(" + pos.String()
			if pos.isZero() {
				start = "-"
			}
			msgs, err = r.cli.XRangeN(r.rctx, c.stream, start, st.end.String(), c.fetchSize).Result()
		} else {
			var res []goredis.XStream
			res, err = r.cli.XRead(r.rctx, &goredis.XReadArgs{Streams: []string{c.stream, pos.String()}, Count: c.fetchSize, Block: blockTime}).Result()
			if errors.Is(err, goredis.Nil) {
				rt.ok()
				continue
			}
			if err == nil && len(res) > 0 {
				msgs = res[0].Messages
			}
		}
		if err != nil {
			if r.stopped() {
				return
			}
			if isWrongType(err) {
				r.fail(fmt.Errorf("redis %q: reading stream %q on %s: %w; the key is not a stream: fix 'stream'", c.name, c.stream, c.server(), err))
				return
			}
			if !rt.failed(func() {
				r.ctx.Log().Warn("redis: reading the stream failed; retrying", "stream", c.stream, "server", c.server(), "error", c.scrub(err))
			}, r.done) {
				r.fail(fmt.Errorf("redis %q: reading stream %q on %s after entry %s: %w (failing for %s)", c.name, c.stream, c.server(), pos, c.scrub(err), retryFor))
				return
			}
			continue
		}
		rt.ok()
		if len(msgs) == 0 {
			if st.bounded {
				r.deliver(&batch{sp: sp, end: true})
				return
			}
			continue
		}
		last, err := parseID(msgs[len(msgs)-1].ID)
		if err != nil {
			r.fail(fmt.Errorf("redis %q: stream %q: %w", c.name, c.stream, err))
			return
		}
		if !r.deliver(&batch{sp: sp, msgs: msgs}) {
			return
		}
		pos = last
	}
}

// fetchGroup reads the consumer sp.id's new entries with XREADGROUP (its
// pending ones first if pending says so). After a failed read, whose reply
// may have been lost with entries it delivered, it reads the consumer's
// pending entries after the last one it received before going on.
func (r *reader[T]) fetchGroup(sp *readSplit, pending bool) {
	defer r.wg.Done()
	c := r.cfg
	var last entryID
	pelFrom := ""
	if pending {
		pelFrom = "0-0"
	}
	var rt retrier
	for !r.stopped() {
		args := &goredis.XReadGroupArgs{Group: c.group, Consumer: sp.id, Count: c.fetchSize, Block: blockTime, Streams: []string{c.stream, ">"}}
		if pelFrom != "" {
			args.Streams[1], args.Block = pelFrom, -1
		}
		res, err := r.cli.XReadGroup(r.rctx, args).Result()
		if errors.Is(err, goredis.Nil) {
			rt.ok()
			continue
		}
		if err != nil {
			if r.stopped() {
				return
			}
			if isWrongType(err) {
				r.fail(fmt.Errorf("redis %q: reading consumer group %q of stream %q on %s: %w; the key is not a stream: fix 'stream'", c.name, c.group, c.stream, c.server(), err))
				return
			}
			if isNoGroup(err) {
				r.fail(fmt.Errorf("redis %q: consumer group %q of stream %q on %s is gone: %w; it was deleted while the job read it (the job restores it when it restarts)", c.name, c.group, c.stream, c.server(), err))
				return
			}
			if !rt.failed(func() {
				r.ctx.Log().Warn("redis: reading the consumer group failed; retrying", "group", c.group, "consumer", sp.id, "stream", c.stream, "server", c.server(), "error", c.scrub(err))
			}, r.done) {
				r.fail(fmt.Errorf("redis %q: reading consumer group %q of stream %q on %s as %s: %w (failing for %s)", c.name, c.group, c.stream, c.server(), sp.id, c.scrub(err), retryFor))
				return
			}
			if pelFrom == "" {
				pelFrom = last.String()
			}
			continue
		}
		rt.ok()
		var msgs []goredis.XMessage
		if len(res) > 0 {
			msgs = res[0].Messages
		}
		if len(msgs) == 0 {
			pelFrom = ""
			continue
		}
		id, err := parseID(msgs[len(msgs)-1].ID)
		if err != nil {
			r.fail(fmt.Errorf("redis %q: stream %q: %w", c.name, c.stream, err))
			return
		}
		if !r.deliver(&batch{sp: sp, msgs: msgs, contiguous: pelFrom == ""}) {
			return
		}
		if pelFrom != "" {
			pelFrom = id.String()
		}
		if last.less(id) {
			last = id
		}
	}
}

// finish ends a split read to its bound.
func (r *reader[T]) finish(out connector.Output[T], sp *readSplit) {
	sp.finished = true
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
	if !r.ready {
		time.Sleep(time.Millisecond)
		return nil
	}
	for _, sp := range append([]*readSplit(nil), r.splits...) {
		if sp.running {
			continue
		}
		if !r.group && sp.plain.bounded && !sp.plain.pos.less(sp.plain.end) {
			r.finish(out, sp) // nothing to read
			continue
		}
		r.start(sp)
	}
	if err := r.failed(); err != nil {
		return err
	}
	if len(r.splits) == 0 {
		return nil
	}
	if r.cur == nil {
		timer := time.NewTimer(5 * time.Millisecond)
		select {
		case r.cur = <-r.ch:
		case <-timer.C:
		}
		timer.Stop()
	}
	for r.cur != nil && out.Room() > 0 {
		if err := r.consume(out, r.cur); err != nil {
			return err
		}
		if r.cur.i < len(r.cur.msgs) {
			return nil // out of room
		}
		r.cur = nil
		select {
		case r.cur = <-r.ch:
		default:
		}
	}
	if r.autoAck && len(r.toAck) > 0 {
		ids := r.toAck
		r.toAck = nil
		if err := r.ack(ids); err != nil {
			return fmt.Errorf("redis %q: acknowledging %d entries of consumer group %q of stream %q on %s: %w", r.cfg.name, len(ids), r.cfg.group, r.cfg.stream, r.cfg.server(), r.cfg.scrub(err))
		}
	}
	return nil
}

// consume emits the entries of b while out has room.
func (r *reader[T]) consume(out connector.Output[T], b *batch) error {
	sp := b.sp
	if sp.finished {
		b.i = len(b.msgs)
		return nil
	}
	if b.end {
		r.finish(out, sp)
		return nil
	}
	r.emitOut = out.Split(sp.id)
	for b.i < len(b.msgs) && out.Room() > 0 {
		m := &b.msgs[b.i]
		b.i++
		id, err := parseID(m.ID)
		if err != nil {
			return fmt.Errorf("redis %q: stream %q: %w", r.cfg.name, r.cfg.stream, err)
		}
		if !r.group {
			st := &sp.plain
			if !st.pos.less(id) {
				continue // read again after the fetcher restarted
			}
			if st.bounded && st.end.less(id) {
				r.finish(out, sp)
				return nil
			}
			st.pos = id
			if err := r.decode(out, m, id); err != nil {
				return err
			}
			if st.bounded && !id.less(st.end) {
				r.finish(out, sp)
				return nil
			}
			continue
		}
		r.consumed(sp, b, id)
		r.toAck = append(r.toAck, m.ID)
		if m.Values == nil || r.skip.contains(id) {
			continue // deleted since it was delivered, or consumed before the restore
		}
		if err := r.decode(out, m, id); err != nil {
			return err
		}
	}
	if r.group && b.i == len(b.msgs) && sp.open != nil {
		sp.group.ranges = appendRange(sp.group.ranges, *sp.open)
		sp.open = nil
	}
	return nil
}

// consumed notes that the consumer sp consumed entry id of b.
func (r *reader[T]) consumed(sp *readSplit, b *batch, id entryID) {
	if !b.contiguous {
		sp.group.ranges = appendRange(sp.group.ranges, idRange{id, id})
		return
	}
	if sp.open == nil {
		first, _ := parseID(b.msgs[0].ID)
		sp.open = &idRange{lo: first}
	}
	sp.open.hi = id
}

// appendRange adds r to s, whose ranges all come before r in the common
// case of a consumer's next batch.
func appendRange(s rangeSet, r idRange) rangeSet {
	if n := len(s); n == 0 || s[n-1].hi.less(r.lo) {
		if n > 0 && s[n-1].hi.next() == r.lo {
			s[n-1].hi = r.hi
			return s
		}
		return append(s, r)
	}
	return s.union(rangeSet{r})
}

// decode emits the records of an entry, or reports it as malformed.
func (r *reader[T]) decode(out connector.Output[T], m *goredis.XMessage, id entryID) error {
	c := r.cfg
	r.entries++
	if r.lastID.less(id) {
		r.lastID = id
	}
	v, ok := m.Values[c.field]
	if !ok {
		return out.BadRecord(connector.DeadLetter{Source: r.ctx.SourceName(), Location: fmt.Sprintf("stream %s entry %s", c.stream, m.ID), Raw: renderFields(m.Values),
			Error: fmt.Sprintf("the entry has no field %q (it has %s); set 'value.field' to the field that holds the record", c.field, fieldNames(m.Values))})
	}
	s, _ := v.(string)
	connector.CountBytesIn(r.ctx, len(s))
	r.meta.id, r.meta.ms = m.ID, int64(id.ms)
	r.emitTS = int64(id.ms)
	if err := r.dec.Decode([]byte(s), r.emit); err != nil {
		return out.BadRecord(connector.DeadLetter{Source: r.ctx.SourceName(), Location: fmt.Sprintf("stream %s entry %s field %s", c.stream, m.ID, c.field), Raw: s, Error: err.Error()})
	}
	return nil
}

func fieldNames(values map[string]any) string {
	if len(values) == 0 {
		return "no fields"
	}
	names := make([]string, 0, len(values))
	for k := range values {
		names = append(names, fmt.Sprintf("%q", k))
	}
	sort.Strings(names)
	return "fields " + strings.Join(names, ", ")
}

func renderFields(values map[string]any) string {
	names := make([]string, 0, len(values))
	for k := range values {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, k := range names {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%v", k, values[k])
	}
	return b.String()
}

func (r *reader[T]) SnapshotState(checkpointID int64) ([]connector.Split, error) {
	out := make([]connector.Split, len(r.splits))
	for i, sp := range r.splits {
		if !r.group {
			out[i] = connector.Split{ID: sp.id, State: sp.plain.encode()}
			continue
		}
		st := sp.group
		st.flags = 0
		if sp.open != nil {
			st.ranges = appendRange(append(rangeSet(nil), st.ranges...), *sp.open)
		}
		out[i] = connector.Split{ID: sp.id, State: st.encode()}
	}
	if len(r.toAck) > 0 {
		r.acks = append(r.acks, ackSet{checkpointID, r.toAck})
		r.toAck = nil
	}
	return out, nil
}

// NotifyCheckpointComplete acknowledges the entries consumed before the
// checkpoint's snapshot. An acknowledgement that fails is tried again at
// the next checkpoint: until then the entries only stay pending.
func (r *reader[T]) NotifyCheckpointComplete(checkpointID int64) error {
	n := 0
	for n < len(r.acks) && r.acks[n].checkpoint <= checkpointID {
		n++
	}
	if n == 0 || r.cli == nil {
		return nil
	}
	var ids []string
	for _, a := range r.acks[:n] {
		ids = append(ids, a.ids...)
	}
	if err := r.ack(ids); err != nil {
		if !r.stopped() {
			r.ctx.Log().Warn("redis: acknowledging entries failed; trying again at the next checkpoint", "group", r.cfg.group, "stream", r.cfg.stream, "entries", len(ids), "error", r.cfg.scrub(err))
		}
		return nil
	}
	r.acks = append(r.acks[:0], r.acks[n:]...)
	return nil
}

// ack acknowledges entries, ackChunk per XACK, in one pipeline.
func (r *reader[T]) ack(ids []string) error {
	ctx, cancel := context.WithTimeout(r.rctx, requestTimeout)
	defer cancel()
	_, err := r.cli.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i := 0; i < len(ids); i += ackChunk {
			p.XAck(ctx, r.cfg.stream, r.cfg.group, ids[i:min(i+ackChunk, len(ids))]...)
		}
		return nil
	})
	return err
}

// Status reports the stream, the consumer group if any, the entries the
// reader read ("entriesRecords") and the id of the last one
// ("lastEntryId", the highest it read).
func (r *reader[T]) Status() map[string]any {
	m := map[string]any{"stream": r.cfg.stream, "entriesRecords": r.entries}
	if r.group {
		m["group"] = r.cfg.group
	}
	if !r.lastID.isZero() {
		m["lastEntryId"] = r.lastID.String()
	}
	return m
}

// Close stops the fetchers, letting a blocked read end by itself (closing
// the client under it would cut its connection), and closes the client.
func (r *reader[T]) Close() error {
	r.once.Do(func() {
		close(r.done)
		r.cancel()
		stopped := make(chan struct{})
		go func() {
			r.wg.Wait()
			close(stopped)
		}()
		select {
		case <-stopped:
		case <-time.After(blockTime + 5*time.Second):
		}
		if r.cli != nil {
			r.cli.Close()
		}
		<-stopped
	})
	return nil
}
