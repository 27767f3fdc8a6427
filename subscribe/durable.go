package subscribe

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/formats"
	"github.com/eddystream/eddy/sql/types"
)

// StreamOptions locate the JetStream stream behind a durable table.
type StreamOptions struct {
	// URL is the NATS servers, comma-separated.
	URL string
	// Stream is the stream's name and Subject the subject the table's
	// messages are published to.
	Stream, Subject string
	// Changes tells whether the messages are debezium-json changes (an
	// updating table); otherwise they are json rows, each an insertion.
	Changes bool
	// Options authenticate the connection (user and password, a token,
	// a credentials file).
	Options []natsgo.Option
}

// durableTopic is a table backed by a JetStream stream: its events are the
// stream's messages, positions their stream sequences, and each
// subscription reads the stream through an ordered consumer of its own, so
// it can resume after any position the stream keeps and, flow-controlled
// by the server, never holds the job back.
type durableTopic struct {
	topic  *Topic
	o      StreamOptions
	stream string
	nc     *natsgo.Conn
	st     jetstream.Stream

	mu   sync.Mutex
	subs map[*Subscription]bool
}

// PublishStream makes a table called name, with rows of type rt, whose
// events are the messages of a JetStream stream, available to subscribers.
// A job writes the stream (the 'publish' connector with 'stream' does, with
// the nats connector's exactly-once sink); the hub only reads it. As
// Publish, a name already published for the same stream is returned again
// with one more publisher.
func (h *Hub) PublishStream(name string, rt *types.RowType, so StreamOptions, o TopicOptions) (*Topic, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, ok := h.topics[name]; ok {
		if t.durable == nil || t.durable.stream != so.Stream || t.rt.String() != rt.String() {
			return nil, fmt.Errorf("subscribe: a table called %q is already published (columns %s); publish stream %q under another name", name, t.rt, so.Stream)
		}
		t.mu.Lock()
		t.publishers++
		t.mu.Unlock()
		return t, nil
	}
	nc, err := natsgo.Connect(so.URL, append([]natsgo.Option{natsgo.Name("eddy subscriptions to " + name), natsgo.MaxReconnects(-1)}, so.Options...)...)
	if err != nil {
		return nil, fmt.Errorf("subscribe: table %q: connecting to NATS at %s: %w", name, so.URL, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("subscribe: table %q: %w", name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, so.Stream)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("subscribe: table %q: stream %q on %s: %w; create the stream (nats stream add) or fix 'stream'", name, so.Stream, so.URL, err)
	}
	if o.Changelog == 0 {
		o.Changelog = changelog.Retract
	}
	t := &Topic{hub: h, name: name, rt: rt, opts: o, publishers: 1}
	t.durable = &durableTopic{topic: t, o: so, stream: so.Stream, nc: nc, st: st, subs: map[*Subscription]bool{}}
	h.topics[name] = t
	return t, nil
}

// bounds returns the positions of the oldest and the latest message the
// stream keeps (0 if it is empty).
func (d *durableTopic) bounds() (oldest, last int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := d.st.Info(ctx)
	if err != nil || info.State.Msgs == 0 {
		return 0, 0
	}
	return int64(info.State.FirstSeq), int64(info.State.LastSeq)
}

func (d *durableTopic) subscribers() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.subs)
}

// subscribe starts the reader of a subscription: after position after,
// or at the stream's next message.
func (d *durableTopic) subscribe(s *Subscription, after *int64) (*streamReader, error) {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{d.o.Subject}, DeliverPolicy: jetstream.DeliverNewPolicy}
	if after != nil {
		oldest, last := d.bounds()
		switch {
		case *after < 0:
			return nil, fmt.Errorf("subscribe: position %d of a subscription to %q: positions are stream sequences, from 1; resume after 0 for the whole stream", *after, d.topic.name)
		case *after > last:
			return nil, fmt.Errorf("subscribe: position %d of a subscription to %q is ahead of the last message of stream %q, %d; subscribe without a position", *after, d.topic.name, d.stream, last)
		case oldest > 0 && *after+1 < oldest:
			return nil, fmt.Errorf("subscribe: position %d of a subscription to %q is no longer in stream %q, which keeps messages %d to %d (its limits removed the others); subscribe after position %d and accept the gap",
				*after, d.topic.name, d.stream, oldest, last, oldest-1)
		}
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, uint64(*after+1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, err := jetstream.New(d.nc)
	if err != nil {
		return nil, err
	}
	c, err := js.OrderedConsumer(ctx, d.stream, cfg)
	if err != nil {
		return nil, fmt.Errorf("subscribe: reading stream %q for a subscription to %q: %w", d.stream, d.topic.name, err)
	}
	it, err := c.Messages(jetstream.PullMaxMessages(256))
	if err != nil {
		return nil, fmt.Errorf("subscribe: reading stream %q for a subscription to %q: %w", d.stream, d.topic.name, err)
	}
	var dec connector.Decoder[connector.TableRecord]
	if d.o.Changes {
		dec, err = formats.NewDebeziumDecoder(d.topic.rt, nil, false)
	} else {
		dec, err = formats.NewJSONRowDecoder(d.topic.rt, nil)
	}
	if err != nil {
		it.Stop()
		return nil, err
	}
	r := &streamReader{d: d, it: it, dec: dec, out: make(chan readerItem, 64), stop: make(chan struct{})}
	d.mu.Lock()
	d.subs[s] = true
	d.mu.Unlock()
	go r.pump(s)
	return r, nil
}

// unpublish ends the table's subscriptions and closes its connection.
func (d *durableTopic) unpublish() {
	d.mu.Lock()
	subs := d.subs
	d.subs = map[*Subscription]bool{}
	d.mu.Unlock()
	for s := range subs {
		s.end(fmt.Errorf("subscribe: table %q is no longer published", d.topic.name))
	}
	d.nc.Close()
}

// readerItem is what a stream reader's pump hands Next: an event or the
// error that ends the subscription.
type readerItem struct {
	e   Event
	err error
}

// streamReader reads a durable table's stream for one subscription.
type streamReader struct {
	d    *durableTopic
	it   jetstream.MessagesContext
	dec  connector.Decoder[connector.TableRecord]
	out  chan readerItem
	stop chan struct{}
	once sync.Once
}

// pump reads messages, decodes them into events and hands those the
// subscription wants to Next, until the subscription ends.
func (r *streamReader) pump(s *Subscription) {
	defer close(r.out)
	send := func(it readerItem) bool {
		select {
		case r.out <- it:
			return true
		case <-r.stop:
			return false
		}
	}
	for {
		m, err := r.it.Next()
		if err != nil {
			if !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				send(readerItem{err: fmt.Errorf("subscribe: reading stream %q of table %q: %w", r.d.stream, r.d.topic.name, err)})
			}
			return
		}
		md, err := m.Metadata()
		if err != nil {
			send(readerItem{err: fmt.Errorf("subscribe: a message of stream %q of table %q: %w", r.d.stream, r.d.topic.name, err)})
			return
		}
		pos := int64(md.Sequence.Stream)
		var evs []Event
		err = r.dec.Decode(m.Data(), func(c connector.TableRecord) {
			rowJSON, jerr := types.AppendJSON(nil, r.d.topic.rt, c.Row, nil)
			if jerr != nil {
				err = jerr
				return
			}
			evs = append(evs, Event{Position: pos, Kind: c.Kind, Row: c.Row.Clone(), JSON: appendEventJSON(nil, c.Kind, pos, rowJSON)})
		})
		if err != nil {
			send(readerItem{err: fmt.Errorf("subscribe: message %d of stream %q is not a row of table %q (%w): the stream holds messages the 'publish' connector did not write; subscribe after position %d to skip it",
				pos, r.d.stream, r.d.topic.name, err, pos)})
			return
		}
		for _, e := range evs {
			ok, err := s.matches(e)
			if err != nil {
				send(readerItem{err: err})
				return
			}
			if ok && !send(readerItem{e: e}) {
				return
			}
		}
	}
}

// next returns the subscription's next event.
func (r *streamReader) next(ctx context.Context, s *Subscription) (Event, error) {
	select {
	case it, ok := <-r.out:
		if !ok {
			if err := s.Err(); err != nil {
				return Event{}, err
			}
			return Event{}, ErrClosed
		}
		if it.err != nil {
			s.stop(it.err)
			return Event{}, it.err
		}
		return it.e, nil
	case <-s.done:
		return Event{}, s.Err()
	case <-ctx.Done():
		return Event{}, ctx.Err()
	}
}

// close stops the reader.
func (r *streamReader) close() {
	r.once.Do(func() {
		close(r.stop)
		r.it.Stop()
	})
}

func (d *durableTopic) remove(s *Subscription) {
	d.mu.Lock()
	delete(d.subs, s)
	d.mu.Unlock()
}
