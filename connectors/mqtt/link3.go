package mqtt

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mqtt3 "github.com/eclipse/paho.mqtt.golang"
	packets3 "github.com/eclipse/paho.mqtt.golang/packets"
)

// link3 is an MQTT 3.1.1 connection through paho.mqtt.golang, with its
// automatic reconnection and acknowledgement turned off: connection
// reconnects with a new link, and the reader acknowledges.
type link3 struct {
	cli      mqtt3.Client
	present  bool
	clientID string
	deliver  func(*delivery)

	doneCh  chan struct{}
	once    sync.Once
	why     error
	closing atomic.Bool
	acked   atomic.Bool // acknowledgements were sent
}

// quiesce is how long a closing link lets the client send what it has
// queued (acknowledgements) and the DISCONNECT, in milliseconds.
const quiesce = 250

// dial3 connects to u with MQTT 3.1.1.
func (c *config) dial3(ctx context.Context, u *url.URL, o *linkOptions) (link, error) {
	if o.cleanStart && o.persistent {
		// 3.1.1 has no "new session that outlives the connection": end
		// any kept session with a clean connection, then open a
		// persistent one.
		tmp, err := c.connect3(ctx, u, o, true, nil)
		if err != nil {
			return nil, err
		}
		tmp.cli.Disconnect(quiesce)
	}
	l, err := c.connect3(ctx, u, o, !o.persistent, o.onMessage)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (c *config) connect3(ctx context.Context, u *url.URL, o *linkOptions, clean bool, deliver func(*delivery)) (*link3, error) {
	l := &link3{clientID: o.clientID, deliver: deliver, doneCh: make(chan struct{})}
	opts := mqtt3.NewClientOptions().
		AddBroker(u.String()).
		SetClientID(o.clientID).
		SetProtocolVersion(4).
		SetCleanSession(clean).
		SetAutoReconnect(false).
		SetConnectRetry(false).
		SetResumeSubs(false).
		SetKeepAlive(c.keepAlive).
		SetConnectTimeout(min(attemptTimeout, c.connTimeout)).
		SetOrderMatters(true).
		SetAutoAckDisabled(true).
		SetDefaultPublishHandler(l.received).
		SetConnectionLostHandler(func(_ mqtt3.Client, err error) { l.end(err) })
	if c.username != "" {
		opts.SetUsername(c.username)
	}
	if c.password != "" {
		opts.SetPassword(c.password)
	}
	// The connector dials (TCP, TLS or WebSocket) as for MQTT 5, reading
	// through a buffer: paho.mqtt.golang reads each packet in several
	// small reads.
	opts.SetCustomOpenConnectionFn(func(*url.URL, mqtt3.ClientOptions) (net.Conn, error) { return c.dialNet(ctx, u) })
	l.cli = mqtt3.NewClient(opts)
	tok := l.cli.Connect()
	select {
	case <-tok.Done():
	case <-ctx.Done():
		// paho gives up within its connect timeout, no longer than the
		// attempt's: wait for it, so that no connection of this client id
		// comes up behind the next attempt's back.
		<-tok.Done()
		if tok.Error() == nil {
			l.cli.Disconnect(0)
		}
		return nil, ctx.Err()
	}
	if err := tok.Error(); err != nil {
		return nil, connackError3(err)
	}
	if ct, ok := tok.(*mqtt3.ConnectToken); ok {
		l.present = ct.SessionPresent()
	}
	return l, nil
}

// connackError3 describes a refused MQTT 3.1.1 connection.
func connackError3(err error) error {
	switch {
	case errors.Is(err, packets3.ErrorRefusedBadProtocolVersion):
		return &refusedError{"the broker refused the connection: " + err.Error(), "the broker does not speak MQTT 3.1.1: set 'mqtt.version' to one it speaks"}
	case errors.Is(err, packets3.ErrorRefusedIDRejected):
		return &refusedError{"the broker refused the connection: " + err.Error(), "it does not accept the client id: set 'client-id' to a prefix it accepts (3.1.1 brokers need only take 23 characters)"}
	case errors.Is(err, packets3.ErrorRefusedBadUsernameOrPassword):
		return &refusedError{"the broker refused the connection: " + err.Error(), "check 'username' and 'password'"}
	case errors.Is(err, packets3.ErrorRefusedNotAuthorised):
		return &refusedError{"the broker refused the connection: " + err.Error(), "not authorized: check 'username', 'password' and the broker's access rules"}
	}
	return err
}

func (l *link3) end(err error) {
	l.once.Do(func() {
		if !l.closing.Load() {
			l.why = err
		}
		close(l.doneCh)
	})
}

func (l *link3) sessionPresent() bool         { return l.present }
func (l *link3) grantedExpiry() time.Duration { return 0 }
func (l *link3) done() <-chan struct{}        { return l.doneCh }
func (l *link3) cause() error                 { return l.why }

func (l *link3) received(_ mqtt3.Client, m mqtt3.Message) {
	if l.deliver == nil {
		return
	}
	l.deliver(&delivery{topic: m.Topic(), payload: m.Payload(), qos: m.Qos(), retained: m.Retained(), dup: m.Duplicate(), id: m.MessageID(),
		received: time.Now().UnixMilli(), link: l, ref: m})
}

// ack acknowledges through the message: paho.mqtt.golang sends it on the
// connection the message came on, and drops it once that is gone.
func (l *link3) ack(ds []*delivery) {
	for _, d := range ds {
		if m, ok := d.ref.(mqtt3.Message); ok && d.qos > 0 {
			m.Ack()
			l.acked.Store(true)
		}
	}
}

func (l *link3) subscribe(ctx context.Context, filters []string, qos byte, _ bool) error {
	m := make(map[string]byte, len(filters))
	for _, f := range filters {
		m[f] = qos
	}
	tok := l.cli.SubscribeMultiple(m, nil)
	select {
	case <-tok.Done():
	case <-ctx.Done():
		return fmt.Errorf("subscribing: no SUBACK: %w", ctx.Err())
	}
	if err := tok.Error(); err != nil {
		return fmt.Errorf("subscribing: %w", err)
	}
	st, ok := tok.(*mqtt3.SubscribeToken)
	if !ok {
		return nil
	}
	var refused []string
	for _, f := range filters {
		if st.Result()[f] >= 0x80 {
			refused = append(refused, "'"+f+"'")
		}
	}
	if len(refused) > 0 {
		return &refusedError{"the broker refused to subscribe to " + strings.Join(refused, ", "), "check 'username' and the broker's access rules, or fix 'topic'"}
	}
	return nil
}

func (l *link3) publish(ctx context.Context, m *outgoing) (receipt, error) {
	select {
	case <-l.doneCh:
		return nil, errLinkLost
	default:
	}
	tok := l.cli.Publish(m.topic, m.qos, m.retain, m.payload)
	if m.qos == 0 {
		return settled{}, nil
	}
	return &receipt3{tok: tok, lost: l.doneCh}, nil
}

func (l *link3) close() {
	l.closing.Store(true)
	if l.acked.Load() {
		l.cli.Unsubscribe(barrierFilter).WaitTimeout(barrierTimeout)
	}
	l.cli.Disconnect(quiesce)
	l.end(nil)
}

// receipt3 is the receipt of an MQTT 3.1.1 publication: its token.
type receipt3 struct {
	tok  mqtt3.Token
	lost <-chan struct{}
	done bool
	err  error
}

func (r *receipt3) poll() (bool, error) {
	if !r.done {
		select {
		case <-r.tok.Done():
			r.settle()
		default:
		}
	}
	return r.done, r.err
}

func (r *receipt3) wait(deadline time.Time) error {
	if r.done {
		return r.err
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-r.tok.Done():
		r.settle()
	case <-t.C:
		return errTimeout
	}
	return r.err
}

// settle reads the outcome of a completed token: a token that failed with
// its connection gone was lost. paho.mqtt.golang fails the tokens of a lost
// connection before it reports the loss, so a failed token waits a moment
// for the link to end.
func (r *receipt3) settle() {
	r.done = true
	if err := r.tok.Error(); err != nil {
		t := time.NewTimer(lostGrace)
		defer t.Stop()
		select {
		case <-r.lost:
			r.err = errLinkLost
		case <-t.C:
			r.err = fmt.Errorf("publishing: %w", err)
		}
	}
}

// lostGrace is how long a failed publication waits to learn whether its
// connection was lost.
const lostGrace = time.Second
