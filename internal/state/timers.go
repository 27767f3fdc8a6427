package state

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/eddystream/eddy/internal/state/codec"
	"github.com/eddystream/eddy/internal/state/kv"
)

// Timers is what a keyed operator needs of its timers: registration and
// deletion per key group, key, namespace and timestamp, in event time and
// processing time, and firing of the due ones. *TimerService keeps them in
// memory (for object backends); *kv.Timers (NewBytesTimers) keeps them in a
// BytesBackend.
//
// Both fire timers in order of timestamp; they differ in the order of timers
// of equal timestamps (see their doc comments).
type Timers[K, N comparable] interface {
	// RegisterEventTime registers an event-time timer at ts for (k, n) in
	// key group kg. Registering an existing timer does nothing.
	RegisterEventTime(kg int, k K, n N, ts int64)
	// DeleteEventTime deletes the event-time timer at ts for (k, n), if any.
	DeleteEventTime(kg int, k K, n N, ts int64)
	// RegisterProcessingTime registers a processing-time timer at ts (ms).
	RegisterProcessingTime(kg int, k K, n N, ts int64)
	// DeleteProcessingTime deletes the processing-time timer at ts, if any.
	DeleteProcessingTime(kg int, k K, n N, ts int64)
	// AdvanceWatermark fires every event-time timer at or before wm,
	// removing each before calling fire. fire may register and delete
	// timers; new ones at or before wm fire in the same call. It stops at
	// the first error fire returns and returns it.
	AdvanceWatermark(wm int64, fire func(kg int, k K, n N, ts int64) error) error
	// AdvanceProcessingTime fires every processing-time timer at or before
	// now, as AdvanceWatermark does for event time.
	AdvanceProcessingTime(now int64, fire func(kg int, k K, n N, ts int64) error) error
	// NextEventTime returns the earliest timestamp of an event-time timer,
	// or ok=false if there is none.
	NextEventTime() (ts int64, ok bool)
	// NextProcessingTime returns the earliest timestamp of a
	// processing-time timer, or ok=false if there is none.
	NextProcessingTime() (ts int64, ok bool)
	// Len returns the number of registered timers of both kinds, for
	// metrics and tests.
	Len() int
}

var (
	_ Timers[int64, VoidNamespace] = (*TimerService[int64, VoidNamespace])(nil)
	_ Timers[int64, VoidNamespace] = (*kv.Timers[int64, VoidNamespace])(nil)
)

// NewBytesTimers returns the timers stored in b under the table name (see
// kv.Timers). kc and nc encode keys and namespaces; nil means codec.Default.
// It returns an error if there is no default codec, or if name is a table
// of another kind.
func NewBytesTimers[K, N comparable](b BytesBackend, name string, kc codec.Codec[K], nc codec.Codec[N]) (*kv.Timers[K, N], error) {
	var err error
	if kc, err = codecOrDefault(kc); err != nil {
		return nil, fmt.Errorf("state: timer keys of %q: %w", name, err)
	}
	if nc, err = codecOrDefault(nc); err != nil {
		return nil, fmt.Errorf("state: timer namespaces of %q: %w", name, err)
	}
	kind := fmt.Sprintf("timers[%s,%s]", typeName[K](), typeName[N]())
	id, err := b.TableID(name, kind)
	if err != nil {
		return nil, fmt.Errorf("state: timers %q: %w", name, err)
	}
	kgs := b.KeyGroups()
	return kv.NewTimers(b, kgs.Start, kgs.End, name, id, kc, nc), nil
}

// TimerService holds the event-time and processing-time timers of one
// subtask of a keyed operator, per key, namespace and timestamp, as Flink's
// InternalTimerService does. Timers fire in order of timestamp, then of
// registration, so that runs are deterministic; registration order survives
// snapshots.
//
// It implements ObjectTable, so timers are snapshotted per key group like
// any table and can be registered on an ObjectBackend.
//
// Concurrency: used on the subtask's goroutine only (but see BeginSnapshot).
type TimerService[K, N comparable] struct {
	kgs   KeyGroupRange
	kc    codec.Codec[K]
	nc    codec.Codec[N]
	kind  string
	event timerQueue[K, N]
	proc  timerQueue[K, N]
	seq   uint64 // last registration number handed out
}

// NewTimerService returns an empty timer service for the key groups kgs. kc
// and nc encode keys and namespaces in snapshots; nil means codec.Default, and
// NewTimerService panics if there is none (the runtime picks K and N).
func NewTimerService[K, N comparable](kgs KeyGroupRange, kc codec.Codec[K], nc codec.Codec[N]) *TimerService[K, N] {
	var err error
	if kc, err = codecOrDefault(kc); err != nil {
		panic(fmt.Errorf("state: timer keys: %w", err))
	}
	if nc, err = codecOrDefault(nc); err != nil {
		panic(fmt.Errorf("state: timer namespaces: %w", err))
	}
	return &TimerService[K, N]{
		kgs:   kgs,
		kc:    kc,
		nc:    nc,
		kind:  fmt.Sprintf("timers[%s,%s]", typeName[K](), typeName[N]()),
		event: newTimerQueue[K, N](kgs),
		proc:  newTimerQueue[K, N](kgs),
	}
}

// RegisterEventTime registers an event-time timer at ts for (k, n) in key
// group kg. Registering an existing timer does nothing.
func (s *TimerService[K, N]) RegisterEventTime(kg int, k K, n N, ts int64) {
	s.event.add(s.kgs, kg, timerID[K, N]{ts, k, n}, &s.seq, 0)
}

// DeleteEventTime deletes the event-time timer at ts for (k, n), if any.
func (s *TimerService[K, N]) DeleteEventTime(kg int, k K, n N, ts int64) {
	s.event.remove(s.kgs, kg, timerID[K, N]{ts, k, n})
}

// RegisterProcessingTime registers a processing-time timer at ts (ms) for
// (k, n) in key group kg. Registering an existing timer does nothing.
func (s *TimerService[K, N]) RegisterProcessingTime(kg int, k K, n N, ts int64) {
	s.proc.add(s.kgs, kg, timerID[K, N]{ts, k, n}, &s.seq, 0)
}

// DeleteProcessingTime deletes the processing-time timer at ts for (k, n), if
// any.
func (s *TimerService[K, N]) DeleteProcessingTime(kg int, k K, n N, ts int64) {
	s.proc.remove(s.kgs, kg, timerID[K, N]{ts, k, n})
}

// AdvanceWatermark fires, in order, every event-time timer with a timestamp
// at or before wm, removing each before calling fire. fire may register and
// delete timers; new ones at or before wm fire in the same call. It stops at
// the first error fire returns and returns it.
func (s *TimerService[K, N]) AdvanceWatermark(wm int64, fire func(kg int, k K, n N, ts int64) error) error {
	return s.event.fire(s.kgs, wm, fire)
}

// NextProcessingTime returns the earliest timestamp of a processing-time
// timer, or ok=false if there is none. The runtime schedules a wake-up then.
func (s *TimerService[K, N]) NextProcessingTime() (ts int64, ok bool) {
	return s.proc.next(s.kgs)
}

// NextEventTime returns the earliest timestamp of an event-time timer, or
// ok=false if there is none.
func (s *TimerService[K, N]) NextEventTime() (ts int64, ok bool) {
	return s.event.next(s.kgs)
}

// AdvanceProcessingTime fires, in order, every processing-time timer with a
// timestamp at or before now, as AdvanceWatermark does for event time.
func (s *TimerService[K, N]) AdvanceProcessingTime(now int64, fire func(kg int, k K, n N, ts int64) error) error {
	return s.proc.fire(s.kgs, now, fire)
}

// Len returns the number of registered timers of both kinds.
func (s *TimerService[K, N]) Len() int { return s.event.live + s.proc.live }

// Kind names the service and its key and namespace types.
func (s *TimerService[K, N]) Kind() string { return s.kind }

// AppendKeyGroup appends the timers of key group kg to dst: for event time,
// then processing time, a uvarint count and, in firing order, each timer's
// timestamp (8 bytes), registration number (uvarint), key and namespace.
// The encoding is deterministic.
func (s *TimerService[K, N]) AppendKeyGroup(dst []byte, kg int) []byte {
	checkKeyGroup(kg, s.kgs)
	for _, q := range []*timerQueue[K, N]{&s.event, &s.proc} {
		m := q.ids[kg-s.kgs.Start]
		ts := make([]timer[K, N], 0, len(m))
		for id, seq := range m {
			ts = append(ts, timer[K, N]{id: id, seq: seq})
		}
		slices.SortFunc(ts, func(a, b timer[K, N]) int { return a.compare(&b) })
		dst = binary.AppendUvarint(dst, uint64(len(ts)))
		for _, t := range ts {
			dst = codec.AppendInt64(dst, t.id.ts)
			dst = binary.AppendUvarint(dst, t.seq)
			dst = s.kc.Append(dst, t.id.k)
			dst = s.nc.Append(dst, t.id.n)
		}
	}
	return dst
}

// BeginSnapshot implements AsyncSnapshotter simply: timers are few, so it
// encodes every key group with AppendKeyGroup at once, on the owning
// goroutine, in time proportional to the number of timers; encode copies the
// bytes so made.
func (s *TimerService[K, N]) BeginSnapshot() (encode func(dst []byte, kg int) []byte, release func()) {
	return s.beginWith(s.AppendKeyGroup)
}

// beginWith encodes every key group with appendKG now and returns the
// encode and release of a snapshot that copies the bytes so made.
func (s *TimerService[K, N]) beginWith(appendKG func(dst []byte, kg int) []byte) (encode func(dst []byte, kg int) []byte, release func()) {
	start := s.kgs.Start
	ends := make([]int, s.kgs.Len())
	var buf []byte
	for i := range ends {
		buf = appendKG(buf, start+i)
		ends[i] = len(buf)
	}
	encode = func(dst []byte, kg int) []byte {
		i := kg - start
		if uint(i) >= uint(len(ends)) {
			panic(fmt.Sprintf("state: key group %d out of range [%d,%d)", kg, start, start+len(ends)))
		}
		from := 0
		if i > 0 {
			from = ends[i-1]
		}
		return append(dst, buf[from:ends[i]]...)
	}
	return encode, func() {}
}

// RestoreKeyGroup adds the timers encoded by AppendKeyGroup to key group kg,
// keeping their registration order relative to other restored timers.
func (s *TimerService[K, N]) RestoreKeyGroup(kg int, data []byte) error {
	checkKeyGroup(kg, s.kgs)
	pos := 0
	for _, q := range []*timerQueue[K, N]{&s.event, &s.proc} {
		count, c := binary.Uvarint(data[pos:])
		if c <= 0 || count > uint64(len(data)) {
			return restoreErr(s.kind, kg, codec.Truncated("timer count"))
		}
		pos += c
		for range count {
			if len(data)-pos < 8 {
				return restoreErr(s.kind, kg, codec.Truncated("timer"))
			}
			var id timerID[K, N]
			id.ts = codec.ReadInt64(data[pos:])
			pos += 8
			seq, c := binary.Uvarint(data[pos:])
			if c <= 0 {
				return restoreErr(s.kind, kg, codec.Truncated("timer"))
			}
			pos += c
			var err error
			if pos, err = codec.DecodeAt(s.kc, data, pos, &id.k); err != nil {
				return restoreErr(s.kind, kg, err)
			}
			if pos, err = codec.DecodeAt(s.nc, data, pos, &id.n); err != nil {
				return restoreErr(s.kind, kg, err)
			}
			q.add(s.kgs, kg, id, &s.seq, seq)
		}
	}
	if pos != len(data) {
		return restoreErr(s.kind, kg, fmt.Errorf("%d trailing bytes", len(data)-pos))
	}
	return nil
}

// DropKeyGroup deletes every timer of key group kg.
func (s *TimerService[K, N]) DropKeyGroup(kg int) {
	checkKeyGroup(kg, s.kgs)
	s.event.drop(s.kgs, kg)
	s.proc.drop(s.kgs, kg)
}

// timerID identifies a timer within its key group and kind.
type timerID[K, N comparable] struct {
	ts int64
	k  K
	n  N
}

// timer is an entry of a timer heap. seq orders timers of equal timestamps
// and tells a live entry from a stale one: deletion only removes the id from
// the queue's set, and an entry is live while the set maps its id to its seq.
type timer[K, N comparable] struct {
	id  timerID[K, N]
	seq uint64
	kg  int
}

func (t *timer[K, N]) compare(o *timer[K, N]) int {
	if c := cmp.Compare(t.id.ts, o.id.ts); c != 0 {
		return c
	}
	return cmp.Compare(t.seq, o.seq)
}

// timerQueue is a binary min-heap of timers with a set per key group for
// de-duplication and lazy deletion.
type timerQueue[K, N comparable] struct {
	heap []timer[K, N]
	ids  []map[timerID[K, N]]uint64 // per key group: live id → seq
	live int
}

func newTimerQueue[K, N comparable](kgs KeyGroupRange) timerQueue[K, N] {
	return timerQueue[K, N]{ids: make([]map[timerID[K, N]]uint64, kgs.Len())}
}

// add registers id in kg unless it is there. seq is the registration number
// to use, or 0 for the next one from *last.
func (q *timerQueue[K, N]) add(kgs KeyGroupRange, kg int, id timerID[K, N], last *uint64, seq uint64) {
	checkKeyGroup(kg, kgs)
	i := kg - kgs.Start
	m := q.ids[i]
	if m == nil {
		m = make(map[timerID[K, N]]uint64)
		q.ids[i] = m
	}
	if _, ok := m[id]; ok {
		return
	}
	if seq == 0 {
		*last++
		seq = *last
	} else {
		*last = max(*last, seq)
	}
	m[id] = seq
	q.live++
	q.push(timer[K, N]{id: id, seq: seq, kg: kg})
}

func (q *timerQueue[K, N]) remove(kgs KeyGroupRange, kg int, id timerID[K, N]) {
	checkKeyGroup(kg, kgs)
	m := q.ids[kg-kgs.Start]
	if _, ok := m[id]; !ok {
		return
	}
	delete(m, id)
	q.live--
	q.compact(kgs)
}

func (q *timerQueue[K, N]) drop(kgs KeyGroupRange, kg int) {
	i := kg - kgs.Start
	q.live -= len(q.ids[i])
	q.ids[i] = nil
	q.compact(kgs)
}

// isLive reports whether heap entry t is still registered.
func (q *timerQueue[K, N]) isLive(kgs KeyGroupRange, t *timer[K, N]) bool {
	seq, ok := q.ids[t.kg-kgs.Start][t.id]
	return ok && seq == t.seq
}

// compact rebuilds the heap without stale entries once they outnumber the
// live ones, so that deleted timers do not accumulate.
func (q *timerQueue[K, N]) compact(kgs KeyGroupRange) {
	if len(q.heap) <= 2*q.live+64 {
		return
	}
	live := q.heap[:0]
	for _, t := range q.heap {
		if q.isLive(kgs, &t) {
			live = append(live, t)
		}
	}
	clear(q.heap[len(live):])
	q.heap = live
	for i := len(live)/2 - 1; i >= 0; i-- {
		q.down(i)
	}
}

// next drops stale entries from the top and returns the earliest timestamp.
func (q *timerQueue[K, N]) next(kgs KeyGroupRange) (int64, bool) {
	for len(q.heap) > 0 {
		if q.isLive(kgs, &q.heap[0]) {
			return q.heap[0].id.ts, true
		}
		q.pop()
	}
	return 0, false
}

func (q *timerQueue[K, N]) fire(kgs KeyGroupRange, limit int64, fire func(kg int, k K, n N, ts int64) error) error {
	for len(q.heap) > 0 && q.heap[0].id.ts <= limit {
		t := q.pop()
		if !q.isLive(kgs, &t) {
			continue
		}
		delete(q.ids[t.kg-kgs.Start], t.id)
		q.live--
		if err := fire(t.kg, t.id.k, t.id.n, t.id.ts); err != nil {
			return err
		}
	}
	return nil
}

func (q *timerQueue[K, N]) push(t timer[K, N]) {
	q.heap = append(q.heap, t)
	q.up(len(q.heap) - 1)
}

func (q *timerQueue[K, N]) pop() timer[K, N] {
	h := q.heap
	t := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = timer[K, N]{}
	q.heap = h[:last]
	if last > 0 {
		q.down(0)
	}
	return t
}

// less orders heap entries by timestamp, then registration.
func less[K, N comparable](a, b *timer[K, N]) bool {
	return a.id.ts < b.id.ts || (a.id.ts == b.id.ts && a.seq < b.seq)
}

// up and down move an entry through a hole rather than by swaps: each level
// costs one copy instead of three.
func (q *timerQueue[K, N]) up(i int) {
	h := q.heap
	t := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if !less(&t, &h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = t
}

func (q *timerQueue[K, N]) down(i int) {
	h := q.heap
	n := len(h)
	t := h[i]
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && less(&h[r], &h[c]) {
			c = r
		}
		if !less(&h[c], &t) {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = t
}

// restoreErr is the error of a restore of key group kg of a table of kind.
func restoreErr(kind string, kg int, err error) error {
	return fmt.Errorf("state: restoring key group %d of %s: %w", kg, kind, err)
}
