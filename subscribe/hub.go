package subscribe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/condition"
	"github.com/eddystream/eddy/sql/types"
)

// Hub holds the tables that running jobs publish, by name, and the
// subscriptions to them. It is safe for concurrent use. Most programs use
// Default, which the 'publish' connector publishes into and eddy's REST
// API serves.
type Hub struct {
	mu     sync.Mutex
	topics map[string]*Topic
	nats   map[string]*natsService // by URL and subject prefix
}

// NewHub returns an empty hub.
func NewHub() *Hub {
	return &Hub{topics: map[string]*Topic{}, nats: map[string]*natsService{}}
}

// Default is the hub of the process.
var Default = NewHub()

// Column is a column of a published table.
type Column struct {
	Name string `json:"name"`
	// Type is the column's SQL type, as Flink writes it.
	Type string `json:"type"`
}

// Info describes a published table: what a client needs to subscribe to
// it and read its events.
type Info struct {
	Name    string   `json:"name"`
	Columns []Column `json:"columns"`
	// PrimaryKey names the key columns, if the table has a key.
	PrimaryKey []string `json:"primaryKey,omitempty"`
	// Changelog says which kinds of change the events carry:
	// "insert-only" (+I), "upsert" (+I, +U, -D by the key) or "all"
	// (+I, -U, +U, -D).
	Changelog string `json:"changelog"`
	// Durable tells whether the table is backed by a JetStream stream: a
	// subscriber can then resume after any position the stream keeps, even
	// across restarts of the job, and no subscriber is ever cut off.
	Durable bool `json:"durable"`
	// Stream is the JetStream stream of a durable table.
	Stream string `json:"stream,omitempty"`
	// Last is the position of the latest event (0: none yet).
	Last int64 `json:"last"`
	// Oldest is the position of the oldest event a subscriber can still
	// resume from (0: none).
	Oldest int64 `json:"oldest"`
}

// changelogName names a changelog mode for Info.
func changelogName(m changelog.Mode) string {
	switch m {
	case changelog.InsertOnly:
		return "insert-only"
	case changelog.Upsert:
		return "upsert"
	}
	return "all"
}

// TopicOptions configure a published table.
type TopicOptions struct {
	// PrimaryKey are the indexes of the key columns.
	PrimaryKey []int
	// Changelog is the kinds of change the table's events carry; 0 means
	// all four.
	Changelog changelog.Mode
	// Retain is how many of the latest events the hub keeps for
	// subscribers that resume after a position; 0 means 10000.
	Retain int
	// QueueSize is how many events a subscriber may fall behind before it
	// is cut off; 0 means 10000.
	QueueSize int
}

// Publish makes a table called name, with rows of type rt, available to
// subscribers, and returns it for publishing events. A table of that name
// already published alike (same columns and options) is returned again
// (the writers of a sink's subtasks, or a restarted job, share it) with
// one more publisher; Close releases each. A table of that name published
// otherwise is an error while it has publishers; once it has none (the
// job publishing it ended) it is replaced, and its subscriptions end with
// an error saying so.
func (h *Hub) Publish(name string, rt *types.RowType, o TopicOptions) (*Topic, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	return h.publish(name, rt, o.withDefaults(), nil)
}

// withDefaults returns o with its defaults filled in.
func (o TopicOptions) withDefaults() TopicOptions {
	if o.Retain <= 0 {
		o.Retain = 10000
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 10000
	}
	if o.Changelog == 0 {
		o.Changelog = changelog.Retract
	}
	return o
}

// publish publishes a table, in the process or, with so, backed by a
// stream (see Publish and PublishStream).
func (h *Hub) publish(name string, rt *types.RowType, o TopicOptions, so *StreamOptions) (*Topic, error) {
	h.mu.Lock()
	old := h.topics[name]
	var what, was, now string
	if old != nil {
		old.mu.Lock()
		what, was, now = old.differs(rt, o, so)
		if what == "" {
			old.publishers++
			old.mu.Unlock()
			h.mu.Unlock()
			return old, nil
		}
		busy := old.publishers > 0
		old.mu.Unlock()
		if busy {
			h.mu.Unlock()
			return nil, fmt.Errorf("subscribe: a table called %q is already published, with %s %s, where this one has %s; publish this one under another name ('name'), or once the job publishing the other has ended",
				name, what, was, now)
		}
	}
	var t *Topic
	if so != nil {
		var err error
		if t, err = h.newStreamTopic(name, rt, *so, o); err != nil {
			h.mu.Unlock()
			return nil, err
		}
	} else {
		t = &Topic{hub: h, name: name, rt: rt, opts: o, publishers: 1, next: 1, subs: map[*Subscription]struct{}{}}
		t.ring = make([]Event, 0, min(o.Retain, 1024))
	}
	h.topics[name] = t
	h.mu.Unlock()
	if old != nil {
		old.retire(fmt.Errorf("subscribe: table %q was published again, with %s %s instead of %s; subscribe again", name, what, now, was))
	}
	return t, nil
}

// differs compares the table with one of rows rt and options o (backed by
// the stream so, if not nil): it returns what differs, as it is and as it
// would be, or "" if they are alike. t.mu is held.
func (t *Topic) differs(rt *types.RowType, o TopicOptions, so *StreamOptions) (what, was, now string) {
	key := func(pk []int, rt *types.RowType) string {
		if len(pk) == 0 {
			return "none"
		}
		names := make([]string, len(pk))
		for i, k := range pk {
			names[i] = rt.Field(k).Name
		}
		return "(" + strings.Join(names, ", ") + ")"
	}
	where := func(d *durableTopic, so *StreamOptions) string {
		switch {
		case d != nil:
			return fmt.Sprintf("stream %q at %s, subject %q", d.stream, d.o.URL, d.o.Subject)
		case so != nil:
			return fmt.Sprintf("stream %q at %s, subject %q", so.Stream, so.URL, so.Subject)
		}
		return "none (kept in the process)"
	}
	switch {
	case t.rt.String() != rt.String():
		return "the columns", t.rt.String(), rt.String()
	case t.opts.Changelog != o.Changelog:
		return "the changelog", changelogName(t.opts.Changelog), changelogName(o.Changelog)
	case !slices.Equal(t.opts.PrimaryKey, o.PrimaryKey):
		return "the primary key", key(t.opts.PrimaryKey, t.rt), key(o.PrimaryKey, rt)
	case (t.durable == nil) != (so == nil),
		so != nil && (t.durable.stream != so.Stream || t.durable.o.URL != so.URL || t.durable.o.Subject != so.Subject):
		return "the stream", where(t.durable, nil), where(nil, so)
	case so != nil && t.durable.o.Changes != so.Changes:
		format := map[bool]string{true: "debezium-json changes", false: "json rows"}
		return "the stream's messages", format[t.durable.o.Changes], format[so.Changes]
	case so == nil && t.opts.Retain != o.Retain:
		return "'retain'", strconv.Itoa(t.opts.Retain), strconv.Itoa(o.Retain)
	case so == nil && t.opts.QueueSize != o.QueueSize:
		return "'subscriber.queue-size'", strconv.Itoa(t.opts.QueueSize), strconv.Itoa(o.QueueSize)
	}
	return "", "", ""
}

// checkName checks the name of a published table: letters, digits, '_'
// and '-', starting with a letter or digit, so that it is one element
// of a URL path and one token of a NATS subject.
func checkName(name string) error {
	if name == "" || len(name) > 200 {
		return fmt.Errorf("subscribe: the name of a published table must have 1 to 200 characters, not %d", len(name))
	}
	for i, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case i > 0 && (c == '_' || c == '-'):
		default:
			return fmt.Errorf("subscribe: %q cannot name a published table: use letters, digits, '_' and '-', starting with a letter or digit", name)
		}
	}
	return nil
}

// Advertise lists the published tables, by name.
func (h *Hub) Advertise() []Info {
	h.mu.Lock()
	ts := make([]*Topic, 0, len(h.topics))
	for _, t := range h.topics {
		ts = append(ts, t)
	}
	h.mu.Unlock()
	out := make([]Info, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Topic returns the published table called name.
func (h *Hub) Topic(name string) (*Topic, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, ok := h.topics[name]
	return t, ok
}

// ErrUnknownTable is wrapped by the error of a subscription to a table
// that is not published.
var ErrUnknownTable = errors.New("no such published table")

// Subscribe subscribes to the published table called name.
func (h *Hub) Subscribe(name string, o Options) (*Subscription, error) {
	t, ok := h.Topic(name)
	if !ok {
		return nil, h.unknown(name)
	}
	return t.Subscribe(o)
}

// unknown is the error of a subscription to name, which is not published:
// it wraps ErrUnknownTable and names the tables that are.
func (h *Hub) unknown(name string) error {
	h.mu.Lock()
	names := make([]string, 0, len(h.topics))
	for n := range h.topics {
		names = append(names, n)
	}
	h.mu.Unlock()
	if len(names) == 0 {
		return fmt.Errorf("subscribe: %q: %w; no table is published", name, ErrUnknownTable)
	}
	sort.Strings(names)
	return fmt.Errorf("subscribe: %q: %w; the published tables are %s", name, ErrUnknownTable, strings.Join(names, ", "))
}

// Event is a change of a published table.
type Event struct {
	// Position orders the events of a table: a subscriber that resumes
	// after a position receives the events that follow it. The two changes
	// of an update from a durable table share a position (that of their
	// stream message).
	Position int64
	Kind     changelog.Kind
	Row      types.Row
	// JSON is the event as subscribers receive it: {"op": "+I",
	// "position": 12, "row": {...}}.
	JSON []byte
}

// Options configure a subscription.
type Options struct {
	// Where, if set, is a SQL condition over the table's columns: only
	// the events whose row it holds for are delivered.
	Where string
	// After, if set, resumes after that position: the events after it
	// that the table still keeps are delivered first. Without it the
	// subscription starts with the next event.
	After *int64
	// Filter, if set, is a condition of Go code applied after Where.
	Filter func(Event) bool
}

// Subscription receives the events of a published table.
type Subscription struct {
	topic *Topic
	cond  *condition.Condition
	fn    func(Event) bool
	ch    chan Event
	done  chan struct{}
	once  sync.Once
	mu    sync.Mutex
	err   error
	// last is the position of the last event delivered (read by Next).
	last int64
	// queued is the position of the last event queued in ch, and seen
	// that of the last event checked against the condition, queued or
	// not (both guarded by the topic's mutex).
	queued, seen int64
	// durable is the reader of a durable table's stream.
	durable *streamReader
}

// Next returns the next event, waiting for one until ctx ends. After the
// subscription ends (Close, a cut-off, the table's end) it returns the
// reason: ErrClosed, or an error saying what happened and where to resume.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	if err := s.Err(); err == ErrClosed {
		return Event{}, err // closed by its subscriber: nothing more
	}
	if s.durable != nil {
		e, err := s.durable.next(ctx, s)
		if err == nil {
			s.last = e.Position
		}
		return e, err
	}
	select {
	case e, ok := <-s.ch:
		if ok {
			s.last = e.Position
			return e, nil
		}
		return Event{}, s.Err()
	case <-ctx.Done():
		return Event{}, ctx.Err()
	}
}

// ErrClosed is the error of a subscription closed by its subscriber.
var ErrClosed = errors.New("subscribe: the subscription is closed")

// Err returns why the subscription ended, nil while it lasts.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Last returns the position of the last event Next returned.
func (s *Subscription) Last() int64 { return s.last }

// Close ends the subscription.
func (s *Subscription) Close() { s.stop(ErrClosed) }

// stop removes the subscription from its table and ends it with err.
func (s *Subscription) stop(err error) {
	if s.durable != nil {
		s.topic.durable.remove(s)
	} else {
		s.topic.remove(s)
	}
	s.end(err)
}

// Done is closed when the subscription ends.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// end ends the subscription with err, once, after it is removed from its
// topic (so that nothing is sent on ch any more). Events already queued
// are still delivered.
func (s *Subscription) end(err error) {
	s.once.Do(func() {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(s.done)
		if s.ch != nil {
			close(s.ch)
		}
		if s.durable != nil {
			s.durable.close()
		}
	})
}

// caughtUp returns the position the subscription has been checked
// through (every event up to it delivered by Next or left out by the
// condition), if no event waits for Next: a subscriber can resume after
// it without missing anything.
func (s *Subscription) caughtUp() (int64, bool) {
	if s.durable != nil {
		p := s.durable.seen.Load() // before looking at what waits
		return p, len(s.durable.out) == 0
	}
	t := s.topic
	t.mu.Lock()
	defer t.mu.Unlock()
	return s.seen, len(s.ch) == 0
}

// matches tells whether the subscription wants e. A condition that
// cannot be evaluated on e's row (a failing CAST, say) is an error, which
// ends the subscription.
func (s *Subscription) matches(e Event) (bool, error) {
	if s.cond != nil {
		ok, err := s.cond.Holds(e.Row)
		if err != nil {
			return false, fmt.Errorf("subscribe: the condition %q of a subscription to %q fails on the event at position %d: %w; subscribe again with a condition that holds or fails for every row",
				s.cond, s.topic.name, e.Position, err)
		}
		if !ok {
			return false, nil
		}
	}
	return s.fn == nil || s.fn(e), nil
}
