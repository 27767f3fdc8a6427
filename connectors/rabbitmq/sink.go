package rabbitmq

import (
	"fmt"
	"math"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// maxInFlight is how many publications a writer awaits confirms of at
// once.
const maxInFlight = 1024

// publishTimeout is how long a writer waits for the broker to confirm a
// publication before it fails.
var publishTimeout = time.Minute

// sink publishes records to an exchange.
type sink[T any] struct {
	cfg        *config
	newEncoder func() connector.Encoder[T]
}

// ChangelogMode says which changes the format writes.
func (s *sink[T]) ChangelogMode() changelog.Mode { return s.cfg.changelogs }

// NewWriter connects, declares and binds the queue if the options say so,
// checks that the exchange exists, and opens the channel to publish on.
func (s *sink[T]) NewWriter(ctx connector.WriterContext) (connector.Writer[T], error) {
	c := s.cfg
	w := &writer[T]{cfg: c, ctx: ctx, enc: s.newEncoder(), confirms: c.guarantee == atLeastOnce, prefix: randomID()}
	what := fmt.Sprintf("writer %d of %s", ctx.Subtask(), ctx.SinkName())
	conn, err := c.dial(what, ctx.Log())
	if err != nil {
		return nil, err
	}
	w.conn = conn
	if err := w.open(); err != nil {
		closeConn(conn)
		return nil, err
	}
	return w, nil
}

// writer publishes records as they come and, at least once, waits for the
// broker's confirms at every flush.
type writer[T any] struct {
	cfg      *config
	ctx      connector.WriterContext
	enc      connector.Encoder[T]
	buf      []byte
	conn     *amqp.Connection
	ch       *amqp.Channel
	confirms bool
	inflight []*amqp.DeferredConfirmation
	returns  chan amqp.Return
	closed   chan *amqp.Error
	returned *amqp.Return // the first message the broker returned unroutable
	prefix   string       // of the message-ids of the current checkpoint interval
	n        int          // the index of the next message in the interval
}

// open prepares the topology and opens the channel, in confirm mode for
// at-least-once.
func (w *writer[T]) open() error {
	c := w.cfg
	if c.queue != "" {
		if err := c.setupQueue(w.conn); err != nil {
			return err
		}
	}
	if err := c.checkExchange(w.conn); err != nil {
		return err
	}
	ch, err := w.conn.Channel()
	if err != nil {
		return fmt.Errorf("rabbitmq %q: opening a channel on %s: %w", c.name, c.broker(), err)
	}
	w.ch = ch
	w.closed = ch.NotifyClose(make(chan *amqp.Error, 1))
	if !w.confirms {
		return nil
	}
	if err := ch.Confirm(false); err != nil {
		return fmt.Errorf("rabbitmq %q: enabling publisher confirms on %s: %w", c.name, c.broker(), err)
	}
	// Room for a return of every message in flight: the channel's reader
	// never waits on it.
	w.returns = ch.NotifyReturn(make(chan amqp.Return, maxInFlight+1))
	return nil
}

// target renders where the writer publishes, for errors.
func (c *config) target() string {
	if c.exchange == "" {
		return fmt.Sprintf("queue %q (through the default exchange)", c.routingKey)
	}
	return fmt.Sprintf("exchange %q with routing key %q", c.exchange, c.routingKey)
}

func (w *writer[T]) Write(records []T, timestamps []int64) error {
	c := w.cfg
	for i, v := range records {
		b, err := w.enc.Encode(w.buf[:0], v)
		if err != nil {
			return fmt.Errorf("rabbitmq %q: encoding a record for %s: %w", c.name, c.target(), err)
		}
		w.buf = b
		msg := amqp.Publishing{
			Headers:      c.headers,
			ContentType:  c.contentType,
			DeliveryMode: amqp.Persistent,
			MessageId:    w.prefix + "-" + strconv.Itoa(w.n),
			AppId:        "eddy",
			Body:         b,
		}
		if i < len(timestamps) && timestamps[i] != math.MinInt64 {
			msg.Timestamp = time.UnixMilli(timestamps[i])
		}
		w.n++
		if !w.confirms {
			if err := w.ch.Publish(c.exchange, c.routingKey, false, false, msg); err != nil {
				return w.publishErr(err)
			}
			continue
		}
		dc, err := w.ch.PublishWithDeferredConfirm(c.exchange, c.routingKey, c.mandatory, false, msg)
		if err != nil {
			return w.publishErr(err)
		}
		w.inflight = append(w.inflight, dc)
		if len(w.inflight) >= maxInFlight {
			// Wait for the older half, keeping the rest in flight.
			half := len(w.inflight) / 2
			if err := w.await(w.inflight[:half]); err != nil {
				return err
			}
			w.inflight = append(w.inflight[:0], w.inflight[half:]...)
		}
	}
	return nil
}

func (w *writer[T]) publishErr(err error) error {
	select {
	case e := <-w.closed:
		if e != nil {
			err = e
		}
	default:
	}
	return fmt.Errorf("rabbitmq %q: publishing to %s on %s: %w", w.cfg.name, w.cfg.target(), w.cfg.broker(), err)
}

// await waits for the confirms of dcs, failing if the broker refuses a
// message, returns one unroutable, closes the channel or does not answer
// within publishTimeout.
func (w *writer[T]) await(dcs []*amqp.DeferredConfirmation) error {
	c := w.cfg
	timer := time.NewTimer(publishTimeout)
	defer timer.Stop()
	for _, dc := range dcs {
	wait:
		for {
			select {
			case <-dc.Done():
				if !dc.Acked() {
					return fmt.Errorf("rabbitmq %q: the broker refused (nack) a message published to %s: the queue may be full (x-overflow = reject-publish) or unavailable", c.name, c.target())
				}
				break wait
			case r := <-w.returns:
				if w.returned == nil {
					w.returned = &r
				}
			case e := <-w.closed:
				if e == nil {
					return fmt.Errorf("rabbitmq %q: the channel publishing to %s closed before the broker confirmed every message", c.name, c.target())
				}
				return fmt.Errorf("rabbitmq %q: the channel publishing to %s closed before the broker confirmed every message: %w", c.name, c.target(), e)
			case <-timer.C:
				return fmt.Errorf("rabbitmq %q: the broker on %s did not confirm a message published to %s within %s; is it overloaded, or blocked by a memory or disk alarm?", c.name, c.broker(), c.target(), publishTimeout)
			}
		}
	}
	for {
		select {
		case r := <-w.returns:
			if w.returned == nil {
				w.returned = &r
			}
			continue
		default:
		}
		break
	}
	if r := w.returned; r != nil {
		return fmt.Errorf("rabbitmq %q: the broker returned message %s published to exchange %q with routing key %q: %d %s: no queue takes it; "+
			"bind a queue that matches the routing key (or 'sink.headers'), or set 'sink.mandatory' = 'false' to let the broker drop such messages", c.name, r.MessageId, r.Exchange, r.RoutingKey, r.ReplyCode, r.ReplyText)
	}
	return nil
}

// Flush waits for the confirms of every message published so far; the
// next messages' ids start a new interval.
func (w *writer[T]) Flush() error {
	if w.confirms {
		if err := w.await(w.inflight); err != nil {
			return err
		}
		w.inflight = w.inflight[:0]
	}
	if w.n > 0 {
		w.prefix, w.n = randomID(), 0
	}
	return nil
}

func (w *writer[T]) Close() error {
	closeConn(w.conn)
	return nil
}
