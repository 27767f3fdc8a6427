package rabbitmq

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// closeTimeout bounds the closing handshake of a connection.
const closeTimeout = 5 * time.Second

// broker returns the broker's address without credentials, for errors and
// logs: scheme://host:port/vhost.
func (c *config) broker() string {
	return c.uri.Scheme + "://" + c.uri.Host + ":" + strconv.Itoa(c.uri.Port) + "/" + url.PathEscape(c.uri.Vhost)
}

// scrubbed is an error whose message has the password removed.
type scrubbed struct {
	msg string
	err error
}

func (s *scrubbed) Error() string { return s.msg }
func (s *scrubbed) Unwrap() error { return s.err }

// scrub returns err with any password of the configuration removed from
// its message.
func (c *config) scrub(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, p := range []string{c.uri.Password, c.authPassword()} {
		if p != "" {
			msg = strings.ReplaceAll(msg, p, "******")
			msg = strings.ReplaceAll(msg, url.QueryEscape(p), "******")
		}
	}
	if c.url != "" {
		msg = strings.ReplaceAll(msg, c.url, c.broker())
	}
	return &scrubbed{msg, err}
}

func (c *config) authPassword() string {
	if c.auth == nil {
		return ""
	}
	return c.auth.Password
}

// dial opens a connection for what (a reader, a writer, an enumerator),
// named so in the broker's list of connections, logging when the broker
// blocks it.
func (c *config) dial(what string, log *slog.Logger) (*amqp.Connection, error) {
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName("eddy " + what)
	cfg := amqp.Config{Properties: props}
	if c.auth != nil {
		cfg.SASL = []amqp.Authentication{c.auth}
	}
	conn, err := amqp.DialConfig(c.url, cfg)
	if err != nil {
		hint := "check 'url' and that the broker runs"
		if errors.Is(err, amqp.ErrCredentials) {
			hint = "check the user and password ('url', or 'username' and 'password')"
		} else if errors.Is(err, amqp.ErrVhost) {
			hint = fmt.Sprintf("check that the virtual host %q exists and the user may use it", c.uri.Vhost)
		}
		return nil, fmt.Errorf("rabbitmq %q: connecting %s to %s: %w; %s", c.name, what, c.broker(), c.scrub(err), hint)
	}
	if log != nil {
		blocked := conn.NotifyBlocked(make(chan amqp.Blocking, 4))
		go func() {
			for b := range blocked {
				if b.Active {
					log.Warn("rabbitmq: the broker blocks the connection (a memory or disk alarm): publishing waits until it clears", "connection", what, "broker", c.broker(), "reason", b.Reason)
				} else {
					log.Info("rabbitmq: the broker unblocked the connection", "connection", what, "broker", c.broker())
				}
			}
		}()
	}
	return conn, nil
}

// closeConn closes a connection, waiting closeTimeout at most for the
// broker to answer.
func closeConn(conn *amqp.Connection) {
	if conn != nil && !conn.IsClosed() {
		_ = conn.CloseDeadline(time.Now().Add(closeTimeout))
	}
}

// amqpCode returns the reply code of an AMQP error, 0 if err is none.
func amqpCode(err error) int {
	var ae *amqp.Error
	if errors.As(err, &ae) {
		return ae.Code
	}
	return 0
}

// setupQueue makes sure the queue exists, declaring it if it does not and
// 'queue.declare' says so, and binds it to the exchange if there is one.
// A source narrowed to a routing key or header values (ApplyFilters) that declares the
// queue binds it as narrowly as the exchange allows (config.binding), and
// says so in log; a queue that existed is bound as configured, whatever
// its other bindings, which belong to whoever made them.
func (c *config) setupQueue(conn *amqp.Connection, log *slog.Logger) error {
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("rabbitmq %q: opening a channel on %s: %w", c.name, c.broker(), err)
	}
	created := false
	_, err = ch.QueueDeclarePassive(c.queue, true, false, false, false, nil)
	if err == nil {
		_ = ch.Close()
	} else {
		if amqpCode(err) != amqp.NotFound {
			return fmt.Errorf("rabbitmq %q: looking up queue %q in virtual host %q on %s: %w; check that the user may configure it", c.name, c.queue, c.uri.Vhost, c.broker(), err)
		}
		if !c.declare {
			return fmt.Errorf("rabbitmq %q: queue %q does not exist in virtual host %q on %s: %w; declare it, fix 'queue', or set 'queue.declare' = 'true'", c.name, c.queue, c.uri.Vhost, c.broker(), err)
		}
		// The failed passive declaration closed the channel.
		if ch, err = conn.Channel(); err != nil {
			return fmt.Errorf("rabbitmq %q: opening a channel on %s: %w", c.name, c.broker(), err)
		}
		args := amqp.Table{"x-queue-type": c.queueType}
		for k, v := range c.queueArgs {
			args[k] = v
		}
		if _, err := ch.QueueDeclare(c.queue, true, false, false, false, args); err != nil {
			return fmt.Errorf("rabbitmq %q: declaring %s queue %q in virtual host %q on %s: %w; check 'queue.type' and 'queue.arguments'", c.name, c.queueType, c.queue, c.uri.Vhost, c.broker(), err)
		}
		_ = ch.Close()
		created = true
	}
	if c.exchange == "" {
		return nil
	}
	key, args := c.routingKey, c.bindingArgs
	if created && (c.narrowed || len(c.headerEq) > 0 || c.headersNone) {
		var bound bool
		key, args, bound = c.binding(conn)
		if log != nil {
			log.Info(fmt.Sprintf("rabbitmq %q: a condition on the routing key or headers narrows the binding of the queue the source declared: %s", c.name, c.describeBinding(key, args, bound)))
		}
		if !bound {
			return nil
		}
	}
	if ch, err = conn.Channel(); err != nil {
		return fmt.Errorf("rabbitmq %q: opening a channel on %s: %w", c.name, c.broker(), err)
	}
	defer ch.Close()
	if err := ch.QueueBind(c.queue, key, c.exchange, false, args); err != nil {
		if amqpCode(err) == amqp.NotFound {
			return fmt.Errorf("rabbitmq %q: binding queue %q to exchange %q: %w; declare the exchange or fix 'exchange'", c.name, c.queue, c.exchange, err)
		}
		return fmt.Errorf("rabbitmq %q: binding queue %q to exchange %q with routing key %q: %w; check 'routing-key' and 'binding.arguments'", c.name, c.queue, c.exchange, key, err)
	}
	return nil
}

// checkExchange checks that the sink's exchange exists.
func (c *config) checkExchange(conn *amqp.Connection) error {
	if c.exchange == "" {
		return nil
	}
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("rabbitmq %q: opening a channel on %s: %w", c.name, c.broker(), err)
	}
	if err := ch.ExchangeDeclarePassive(c.exchange, "", true, false, false, false, nil); err != nil {
		if amqpCode(err) == amqp.NotFound {
			return fmt.Errorf("rabbitmq %q: exchange %q does not exist in virtual host %q on %s: %w; declare it or fix 'exchange'", c.name, c.exchange, c.uri.Vhost, c.broker(), err)
		}
		return fmt.Errorf("rabbitmq %q: looking up exchange %q on %s: %w", c.name, c.exchange, c.broker(), err)
	}
	return ch.Close()
}

// isStream tells whether the queue is a stream queue: a consumer with a
// stream offset is refused by classic and quorum queues.
func (c *config) isStream(conn *amqp.Connection) (bool, error) {
	ch, err := conn.Channel()
	if err != nil {
		return false, fmt.Errorf("rabbitmq %q: opening a channel on %s: %w", c.name, c.broker(), err)
	}
	defer ch.Close()
	if err := ch.Qos(1, 0, false); err != nil {
		return false, fmt.Errorf("rabbitmq %q: setting the prefetch count on %s: %w", c.name, c.broker(), err)
	}
	tag := "eddy-probe-" + randomID()
	_, err = ch.Consume(c.queue, tag, false, false, false, false, amqp.Table{"x-stream-offset": "next"})
	if err == nil {
		_ = ch.Cancel(tag, false)
		return true, nil
	}
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.PreconditionFailed && strings.Contains(ae.Reason, "x-stream-offset") {
		return false, nil
	}
	return false, fmt.Errorf("rabbitmq %q: consuming from queue %q on %s: %w", c.name, c.queue, c.broker(), err)
}

// randomID returns 16 random hexadecimal digits.
func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
