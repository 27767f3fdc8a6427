package subscribe

import (
	"fmt"
	"strconv"
	"sync"

	natsgo "github.com/nats-io/nats.go"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/condition"
	"github.com/eddystream/eddy/sql/types"
)

// Topic is a published table: the events its publishers add, the latest
// of them kept for subscribers that resume, and its subscriptions.
type Topic struct {
	hub  *Hub
	name string
	rt   *types.RowType
	opts TopicOptions
	// durable, for a table backed by a JetStream stream, reads the
	// stream; the topic then keeps no events of its own.
	durable *durableTopic

	mu         sync.Mutex
	publishers int
	next       int64   // the position of the next event
	ring       []Event // the latest events, oldest at ring[start]
	start      int
	subs       map[*Subscription]struct{}
	// gone says why the table is no longer published, once it is not:
	// subscriptions to it are refused with it.
	gone error

	// serveMu guards served and retired. It is taken before the hub's
	// mutex (serveNATS starts services, which takes it), so never while
	// mu is held: Hub.Publish takes the hub's mutex and then mu.
	serveMu sync.Mutex
	// served holds the stop functions of the NATS services serving the
	// hub for this table, by URL and prefix.
	served  map[string]func()
	retired bool
}

// serveNATS serves the hub over NATS at url under prefix for as long as
// the table is published (see Hub.ServeNATS).
func (t *Topic) serveNATS(url, prefix string, opts ...natsgo.Option) error {
	key := url + "\x00" + prefix
	t.serveMu.Lock()
	defer t.serveMu.Unlock()
	if t.retired {
		return fmt.Errorf("subscribe: table %q is no longer published", t.name)
	}
	if _, ok := t.served[key]; ok {
		return nil
	}
	stop, err := t.hub.ServeNATS(url, prefix, opts...)
	if err != nil {
		return err
	}
	if t.served == nil {
		t.served = map[string]func(){}
	}
	t.served[key] = stop
	return nil
}

// Name returns the table's name.
func (t *Topic) Name() string { return t.name }

// RowType returns the type of the table's rows.
func (t *Topic) RowType() *types.RowType { return t.rt }

// Info describes the table.
func (t *Topic) Info() Info {
	i := Info{Name: t.name, Changelog: changelogName(t.opts.Changelog)}
	for _, f := range t.rt.Fields() {
		i.Columns = append(i.Columns, Column{Name: f.Name, Type: f.Type.String()})
	}
	for _, k := range t.opts.PrimaryKey {
		i.PrimaryKey = append(i.PrimaryKey, t.rt.Field(k).Name)
	}
	if t.durable != nil {
		i.Durable, i.Stream = true, t.durable.stream
		if first, last, err := t.durable.bounds(); err == nil {
			i.Last = last
			if first <= last {
				i.Oldest = first
			}
		}
		return i
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	i.Last = t.next - 1
	if len(t.ring) > 0 {
		i.Oldest = t.ring[t.start].Position
	}
	return i
}

// appendEventJSON appends the JSON of an event: {"op": "+I", "position":
// 12, "row": {...}}, the row's JSON given.
func appendEventJSON(dst []byte, kind changelog.Kind, pos int64, row []byte) []byte {
	dst = append(dst, `{"op":"`...)
	dst = append(dst, kind.String()...)
	dst = append(dst, `","position":`...)
	dst = strconv.AppendInt(dst, pos, 10)
	dst = append(dst, `,"row":`...)
	dst = append(dst, row...)
	return append(dst, '}')
}

// Publish adds an event: a change of kind to row (of the table's row
// type, copied). Subscribers whose condition holds for the row receive it;
// one that has fallen QueueSize events behind is cut off instead, so that
// no subscriber slows the publisher.
func (t *Topic) Publish(kind changelog.Kind, row types.Row) error {
	if t.durable != nil {
		return fmt.Errorf("subscribe: table %q is backed by stream %q: its events are what the stream holds, not published directly", t.name, t.durable.stream)
	}
	rowJSON, err := types.AppendJSON(nil, t.rt, row, nil)
	if err != nil {
		return fmt.Errorf("subscribe: publishing a row of %q: %w", t.name, err)
	}
	e := Event{Kind: kind, Row: row.Clone()}
	t.mu.Lock()
	defer t.mu.Unlock()
	e.Position = t.next
	t.next++
	e.JSON = appendEventJSON(make([]byte, 0, len(rowJSON)+48), kind, e.Position, rowJSON)
	if len(t.ring) < t.opts.Retain {
		t.ring = append(t.ring, e)
	} else {
		t.ring[t.start] = e
		t.start = (t.start + 1) % len(t.ring)
	}
	for s := range t.subs {
		ok, err := s.matches(e)
		if err != nil {
			t.cutLocked(s, err)
			continue
		}
		if !ok {
			s.seen = e.Position
			continue
		}
		select {
		case s.ch <- e:
			s.queued, s.seen = e.Position, e.Position
		default:
			t.cutLocked(s, fmt.Errorf("subscribe: the subscriber to %q fell %d events behind and was cut off, so as not to slow the job; subscribe again after position %d (the last event it was sent) to resume",
				t.name, cap(s.ch), s.queued))
		}
	}
	return nil
}

// cutLocked ends subscription s with err; t.mu is held.
func (t *Topic) cutLocked(s *Subscription, err error) {
	delete(t.subs, s)
	s.end(err)
}

// Subscribe subscribes to the table.
func (t *Topic) Subscribe(o Options) (*Subscription, error) {
	s := &Subscription{topic: t, fn: o.Filter, done: make(chan struct{})}
	if o.Where != "" {
		c, err := condition.Compile(t.rt, o.Where)
		if err != nil {
			return nil, fmt.Errorf("subscribe: the condition of a subscription to %q: %w", t.name, err)
		}
		s.cond = c
	}
	if t.durable != nil {
		r, err := t.durable.subscribe(s, o.After)
		if err != nil {
			return nil, err
		}
		s.durable = r
		return s, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone != nil {
		return nil, t.gone
	}
	var replay []Event
	if o.After != nil {
		after := *o.After
		switch {
		case after < 0:
			return nil, fmt.Errorf("subscribe: position %d of a subscription to %q: positions start at 1; resume after 0 for every event the table keeps", after, t.name)
		case after >= t.next:
			return nil, fmt.Errorf("subscribe: position %d of a subscription to %q is ahead of its last event, %d: the job publishing it restarted, or the position is of another table; subscribe without a position",
				after, t.name, t.next-1)
		}
		oldest := t.next
		if len(t.ring) > 0 {
			oldest = t.ring[t.start].Position
		}
		if after+1 < oldest {
			return nil, fmt.Errorf("subscribe: position %d of a subscription to %q is no longer kept: the table keeps its last %d events, from position %d on; subscribe after position %d and accept the gap, or back the table with a JetStream stream ('stream') to resume from any position",
				after, t.name, t.opts.Retain, oldest, oldest-1)
		}
		for i := range t.ring {
			e := t.ring[(t.start+i)%len(t.ring)]
			if e.Position <= after {
				continue
			}
			ok, err := s.matches(e)
			if err != nil {
				return nil, err
			}
			if ok {
				replay = append(replay, e)
			}
		}
		s.queued = after
	} else {
		s.queued = t.next - 1
	}
	// Until it delivers an event, the subscription stands where it
	// started: a subscriber it ends resumes there.
	s.last, s.seen = s.queued, t.next-1
	s.ch = make(chan Event, t.opts.QueueSize+len(replay))
	for _, e := range replay {
		s.ch <- e
		s.queued = e.Position
	}
	t.subs[s] = struct{}{}
	return s, nil
}

// remove removes subscription s.
func (t *Topic) remove(s *Subscription) {
	t.mu.Lock()
	delete(t.subs, s)
	t.mu.Unlock()
}

// Subscribers returns the number of subscriptions.
func (t *Topic) Subscribers() int {
	if t.durable != nil {
		return t.durable.subscribers()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.subs)
}

// Close releases the table for one publisher. The table stays published,
// with its subscriptions and the events it keeps, for a restarted job to
// go on publishing; Hub.Unpublish removes it.
func (t *Topic) Close() {
	t.mu.Lock()
	if t.publishers > 0 {
		t.publishers--
	}
	t.mu.Unlock()
}

// Unpublish removes the table called name, ending its subscriptions.
func (h *Hub) Unpublish(name string) {
	h.mu.Lock()
	t, ok := h.topics[name]
	delete(h.topics, name)
	h.mu.Unlock()
	if ok {
		t.retire(fmt.Errorf("subscribe: table %q is no longer published", name))
	}
}

// retire ends a table its hub no longer holds: its subscriptions end with
// err, and then the NATS services kept for it are released (so that
// their subscribers are told err first).
func (t *Topic) retire(err error) {
	t.serveMu.Lock()
	served := t.served
	t.served, t.retired = nil, true
	t.serveMu.Unlock()
	if t.durable != nil {
		t.durable.unpublish(err)
	} else {
		t.mu.Lock()
		subs := t.subs
		t.subs = map[*Subscription]struct{}{}
		t.gone = err
		for s := range subs {
			s.end(err)
		}
		t.mu.Unlock()
	}
	for _, stop := range served {
		stop()
	}
}
