package subscribe

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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
	// gone says why the table is no longer published, once it is not.
	gone error
}

// PublishStream makes a table called name, with rows of type rt, whose
// events are the messages of a JetStream stream, available to subscribers.
// A job writes the stream (the 'publish' connector with 'stream' does, with
// the nats connector's exactly-once sink); the hub only reads it. As with
// Publish, a name already published alike (same columns, options and
// stream) is returned again with one more publisher, and a name published
// otherwise is an error while that table has publishers.
func (h *Hub) PublishStream(name string, rt *types.RowType, so StreamOptions, o TopicOptions) (*Topic, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if o.Changelog == 0 {
		o.Changelog = changelog.Retract
	}
	// Retain and QueueSize do not apply: the stream keeps the events, and
	// the server paces each subscriber.
	o.Retain, o.QueueSize = 0, 0
	return h.publish(name, rt, o, &so)
}

// newStreamTopic connects to the stream of a durable table and returns
// the table.
func (h *Hub) newStreamTopic(name string, rt *types.RowType, so StreamOptions, o TopicOptions) (*Topic, error) {
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
	t := &Topic{hub: h, name: name, rt: rt, opts: o, publishers: 1}
	t.durable = &durableTopic{topic: t, o: so, stream: so.Stream, nc: nc, st: st, subs: map[*Subscription]bool{}}
	return t, nil
}

// bounds returns the sequences of the oldest message the stream keeps and
// of the last message it took, which it remembers after its limits or a
// purge removed the message: first is last+1 when it keeps none.
func (d *durableTopic) bounds() (first, last int64, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := d.st.Info(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("subscribe: table %q: reading the state of stream %q: %w", d.topic.name, d.stream, err)
	}
	last = int64(info.State.LastSeq)
	if info.State.Msgs == 0 {
		return last + 1, last, nil
	}
	return int64(info.State.FirstSeq), last, nil
}

func (d *durableTopic) subscribers() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.subs)
}

// subscribe starts the reader of a subscription: after position after,
// or at the stream's next message.
func (d *durableTopic) subscribe(s *Subscription, after *int64) (*streamReader, error) {
	first, last, err := d.bounds()
	if err != nil {
		return nil, err
	}
	// Without a position the subscription starts after the last message
	// now in the stream, which is where its subscriber resumes if it
	// ends before delivering anything.
	start := last + 1
	if after != nil {
		switch {
		case *after < 0:
			return nil, fmt.Errorf("subscribe: position %d of a subscription to %q: positions are stream sequences, from 1; resume after 0 for the whole stream", *after, d.topic.name)
		case *after > last:
			return nil, fmt.Errorf("subscribe: position %d of a subscription to %q is ahead of the last message of stream %q, %d; subscribe without a position", *after, d.topic.name, d.stream, last)
		case *after+1 < first:
			kept := fmt.Sprintf("keeps messages %d to %d", first, last)
			if first > last {
				kept = "keeps none of its messages"
			}
			return nil, fmt.Errorf("subscribe: position %d of a subscription to %q is no longer in stream %q, which %s (its limits removed the others); subscribe after position %d and accept the gap",
				*after, d.topic.name, d.stream, kept, first-1)
		}
		start = *after + 1
	}
	s.last = start - 1
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{d.o.Subject},
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: uint64(start)}
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
	r.seen.Store(start - 1)
	d.mu.Lock()
	if d.gone != nil {
		d.mu.Unlock()
		it.Stop()
		return nil, d.gone
	}
	d.subs[s] = true
	d.mu.Unlock()
	go r.pump(s)
	return r, nil
}

// unpublish ends the table's subscriptions with err and closes its
// connection.
func (d *durableTopic) unpublish(err error) {
	d.mu.Lock()
	subs := d.subs
	d.subs = map[*Subscription]bool{}
	d.gone = err
	d.mu.Unlock()
	for s := range subs {
		s.end(err)
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
	// seen is the position of the last message whose events were all
	// handed to Next or left out by the condition.
	seen atomic.Int64
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
		r.seen.Store(pos)
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
