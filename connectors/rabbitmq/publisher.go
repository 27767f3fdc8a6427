package rabbitmq

import (
	"fmt"
	"math"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/eddystream/eddy/connector"
)

// maxInFlight is how many publications a publisher awaits confirms of at
// once.
const maxInFlight = 1024

// publishTimeout is how long a publisher waits for the broker to confirm a
// publication before it fails.
var publishTimeout = time.Minute

// publisher publishes the sink's messages on one channel, in confirm mode
// for at-least-once, and awaits the confirms.
type publisher struct {
	cfg      *config
	ctx      connector.WriterContext // counts the bytes published
	conn     *amqp.Connection
	ch       *amqp.Channel
	confirms bool
	inflight []*amqp.DeferredConfirmation
	returns  chan amqp.Return
	closed   chan *amqp.Error
	returned *amqp.Return // the first message the broker returned unroutable
}

// newPublisher connects for the writer of ctx, declares and binds the
// queue if the options say so, checks that the exchange exists, and opens
// the channel to publish on.
func newPublisher(c *config, ctx connector.WriterContext) (*publisher, error) {
	conn, err := c.dial(fmt.Sprintf("writer %d of %s", ctx.Subtask(), ctx.SinkName()), ctx.Log())
	if err != nil {
		return nil, err
	}
	p := &publisher{cfg: c, ctx: ctx, conn: conn, confirms: c.guarantee == atLeastOnce}
	if err := p.open(); err != nil {
		closeConn(conn)
		return nil, err
	}
	return p, nil
}

func (p *publisher) open() error {
	c := p.cfg
	if c.queue != "" {
		if err := c.setupQueue(p.conn, nil); err != nil {
			return err
		}
	}
	if err := c.checkExchange(p.conn); err != nil {
		return err
	}
	ch, err := p.conn.Channel()
	if err != nil {
		return fmt.Errorf("rabbitmq %q: opening a channel on %s: %w", c.name, c.broker(), err)
	}
	p.ch = ch
	p.closed = ch.NotifyClose(make(chan *amqp.Error, 1))
	if !p.confirms {
		return nil
	}
	if err := ch.Confirm(false); err != nil {
		return fmt.Errorf("rabbitmq %q: enabling publisher confirms on %s: %w", c.name, c.broker(), err)
	}
	// Room for a return of every message in flight: the channel's reader
	// never waits on it.
	p.returns = ch.NotifyReturn(make(chan amqp.Return, maxInFlight+1))
	return nil
}

// target renders where the sink publishes, for errors.
func (c *config) target() string {
	if c.exchange == "" {
		return fmt.Sprintf("queue %q (through the default exchange)", c.routingKey)
	}
	return fmt.Sprintf("exchange %q with routing key %q", c.exchange, c.routingKey)
}

// publish publishes body with the message-id id and the timestamp ts
// (milliseconds; none if math.MinInt64). The body may be reused once it
// returns.
func (p *publisher) publish(body []byte, id string, ts int64) error {
	c := p.cfg
	msg := amqp.Publishing{
		Headers:      c.headers,
		ContentType:  c.contentType,
		DeliveryMode: amqp.Persistent,
		MessageId:    id,
		AppId:        "eddy",
		Body:         body,
	}
	if ts != math.MinInt64 {
		msg.Timestamp = time.UnixMilli(ts)
	}
	if !p.confirms {
		if err := p.ch.Publish(c.exchange, c.routingKey, false, false, msg); err != nil {
			return p.publishErr(err)
		}
		connector.CountBytesOut(p.ctx, len(body))
		return nil
	}
	dc, err := p.ch.PublishWithDeferredConfirm(c.exchange, c.routingKey, c.mandatory, false, msg)
	if err != nil {
		return p.publishErr(err)
	}
	connector.CountBytesOut(p.ctx, len(body))
	p.inflight = append(p.inflight, dc)
	if len(p.inflight) >= maxInFlight {
		// Wait for the older half, keeping the rest in flight.
		half := len(p.inflight) / 2
		if err := p.await(p.inflight[:half]); err != nil {
			return err
		}
		p.inflight = append(p.inflight[:0], p.inflight[half:]...)
	}
	return nil
}

func (p *publisher) publishErr(err error) error {
	select {
	case e := <-p.closed:
		if e != nil {
			err = e
		}
	default:
	}
	return fmt.Errorf("rabbitmq %q: publishing to %s on %s: %w", p.cfg.name, p.cfg.target(), p.cfg.broker(), err)
}

// wait waits for the confirms of every message published so far.
func (p *publisher) wait() error {
	if !p.confirms {
		return nil
	}
	if err := p.await(p.inflight); err != nil {
		return err
	}
	p.inflight = p.inflight[:0]
	return nil
}

// await waits for the confirms of dcs, failing if the broker refuses a
// message, returns one unroutable, closes the channel or does not answer
// within publishTimeout.
func (p *publisher) await(dcs []*amqp.DeferredConfirmation) error {
	c := p.cfg
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
			case r := <-p.returns:
				p.noteReturn(r)
			case e := <-p.closed:
				if e == nil {
					return fmt.Errorf("rabbitmq %q: the channel publishing to %s closed before the broker confirmed every message", c.name, c.target())
				}
				return fmt.Errorf("rabbitmq %q: the channel publishing to %s closed before the broker confirmed every message: %w", c.name, c.target(), e)
			case <-timer.C:
				return fmt.Errorf("rabbitmq %q: the broker on %s did not confirm a message published to %s within %s; is it overloaded, or blocked by a memory or disk alarm?", c.name, c.broker(), c.target(), publishTimeout)
			}
		}
	}
	// A return comes before the confirm of its message.
	for drained := false; !drained; {
		select {
		case r := <-p.returns:
			p.noteReturn(r)
		default:
			drained = true
		}
	}
	if r := p.returned; r != nil {
		return fmt.Errorf("rabbitmq %q: the broker returned message %s published to exchange %q with routing key %q: %d %s: no queue takes it; "+
			"bind a queue that matches the routing key (or 'sink.headers'), or set 'sink.mandatory' = 'false' to let the broker drop such messages", c.name, r.MessageId, r.Exchange, r.RoutingKey, r.ReplyCode, r.ReplyText)
	}
	return nil
}

func (p *publisher) noteReturn(r amqp.Return) {
	if p.returned == nil {
		p.returned = &r
	}
}

func (p *publisher) close() { closeConn(p.conn) }
