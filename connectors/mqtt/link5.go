package mqtt

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
	"github.com/eclipse/paho.golang/paho/session"
	"github.com/eclipse/paho.golang/paho/session/state"
)

// session5 is paho's in-memory session state with two changes: the
// acknowledgement paho sends when a message's handlers return is dropped
// (the reader sends it, through the state, when the checkpoint covering
// the message completes: paho's own manual acknowledgement keeps every
// unacknowledged message in a list it searches on each arrival, which a
// checkpoint interval of 65535 messages makes quadratic, and sends from a
// timer, which a closing reader cannot wait for); and the response to a
// publication goes to the channel the publisher set for it, its receipt.
type session5 struct {
	*state.State
	next chan packets.ControlPacket // the receipt channel of the next publication
}

// Ack drops paho's automatic acknowledgement.
func (s *session5) Ack(*packets.Publish) error { return nil }

// AddToSession gives a publication the receipt channel set for it.
func (s *session5) AddToSession(ctx context.Context, p session.Packet, resp chan<- packets.ControlPacket) error {
	if p.Type() == packets.PUBLISH && s.next != nil {
		resp, s.next = s.next, nil
	}
	return s.State.AddToSession(ctx, p, resp)
}

// link5 is an MQTT 5 connection through paho.golang.
type link5 struct {
	cli      *paho.Client
	nc       *packetConn // nil for a connection of another kind
	st       *session5
	present  bool
	expiry   time.Duration // the session expiry the broker granted, if it said
	clientID string
	deliver  func(*delivery)

	doneCh  chan struct{}
	once    sync.Once
	why     error
	closing atomic.Bool
	acked   atomic.Bool // acknowledgements were sent
}

// endGrace is how long a link whose client has shut down waits for paho to
// report why, before it takes the connection as merely lost.
const endGrace = 100 * time.Millisecond

// dial5 connects to u with MQTT 5.
func (c *config) dial5(ctx context.Context, u *url.URL, o *linkOptions) (link, error) {
	nc, err := c.dialNet(ctx, u)
	if err != nil {
		return nil, err
	}
	l := &link5{st: &session5{State: state.NewInMemory()}, clientID: o.clientID, deliver: o.onMessage, doneCh: make(chan struct{})}
	l.nc, _ = nc.(*packetConn)
	l.cli = paho.NewClient(paho.ClientConfig{
		ClientID:          o.clientID,
		Conn:              nc,
		Session:           l.st,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){l.received},
		OnClientError:     func(err error) { l.end(err) },
		OnServerDisconnect: func(d *paho.Disconnect) {
			if d.ReasonCode == packets.DisconnectSessionTakenOver {
				l.end(&takenOverError{o.clientID})
				return
			}
			l.end(fmt.Errorf("the broker disconnected: %s", describeDisconnect(d)))
		},
		PacketTimeout: c.connTimeout,
	})
	cp := &paho.Connect{ClientID: o.clientID, KeepAlive: uint16(c.keepAlive / time.Second), CleanStart: o.cleanStart, Properties: &paho.ConnectProperties{}}
	if o.expiry > 0 {
		e := uint32(min(o.expiry/time.Second, maxSessionExpiry))
		cp.Properties.SessionExpiryInterval = &e
	}
	if o.receiveMax > 0 {
		rm := o.receiveMax
		cp.Properties.ReceiveMaximum = &rm
	}
	if c.username != "" {
		cp.UsernameFlag, cp.Username = true, c.username
	}
	if c.password != "" {
		cp.PasswordFlag, cp.Password = true, []byte(c.password)
	}
	ca, err := l.cli.Connect(ctx, cp)
	if err != nil {
		_ = nc.Close()
		if ca != nil && ca.ReasonCode >= 0x80 {
			return nil, connackError5(ca)
		}
		return nil, err
	}
	l.present = ca.SessionPresent
	if ca.Properties != nil && ca.Properties.SessionExpiryInterval != nil {
		l.expiry = time.Duration(*ca.Properties.SessionExpiryInterval) * time.Second
	}
	go func() {
		<-l.cli.Done()
		time.Sleep(endGrace)
		l.end(errors.New("the connection closed"))
	}()
	return l, nil
}

// connackError5 describes a refused MQTT 5 connection.
func connackError5(ca *paho.Connack) error {
	reason := fmt.Sprintf("the broker refused the connection (reason code 0x%02X", ca.ReasonCode)
	if ca.Properties != nil && ca.Properties.ReasonString != "" {
		reason += ": " + ca.Properties.ReasonString
	}
	reason += ")"
	switch ca.ReasonCode {
	case 0x84:
		return &refusedError{reason, "the broker does not speak MQTT 5: set 'mqtt.version' = '3.1.1'"}
	case 0x85:
		return &refusedError{reason, "it does not accept the client id: set 'client-id' to a prefix it accepts"}
	case 0x86, 0x8C:
		return &refusedError{reason, "bad user name or password: check 'username' and 'password'"}
	case 0x87:
		return &refusedError{reason, "not authorized: check 'username', 'password' and the broker's access rules"}
	case 0x8A:
		return &refusedError{reason, "the broker bans this client"}
	}
	return errors.New(reason)
}

// describeDisconnect renders the reason of a broker's DISCONNECT.
func describeDisconnect(d *paho.Disconnect) string {
	s := fmt.Sprintf("reason code 0x%02X", d.ReasonCode)
	if d.Properties != nil && d.Properties.ReasonString != "" {
		s += " (" + d.Properties.ReasonString + ")"
	}
	return s
}

func (l *link5) end(err error) {
	l.once.Do(func() {
		if !l.closing.Load() {
			l.why = err
		}
		close(l.doneCh)
	})
}

func (l *link5) sessionPresent() bool         { return l.present }
func (l *link5) grantedExpiry() time.Duration { return l.expiry }
func (l *link5) done() <-chan struct{}        { return l.doneCh }
func (l *link5) cause() error                 { return l.why }

func (l *link5) received(p paho.PublishReceived) (bool, error) {
	m := p.Packet
	d := &delivery{topic: m.Topic, payload: m.Payload, qos: m.QoS, retained: m.Retain, dup: m.Duplicate(), id: m.PacketID,
		received: time.Now().UnixMilli(), link: l}
	if pr := m.Properties; pr != nil {
		d.contentType = pr.ContentType
		for _, u := range pr.User {
			d.user = append(d.user, [2]string{u.Key, u.Value})
		}
	}
	l.deliver(d)
	return true, nil
}

func (l *link5) ack(ds []*delivery) {
	// The state writes each PUBACK (or PUBREC) to the connection it holds,
	// which is this link's (a link that is down drops them), and the
	// connection sends them together.
	if l.nc != nil {
		l.nc.hold()
		defer l.nc.release()
	}
	for _, d := range ds {
		if d.qos > 0 {
			_ = l.st.State.Ack(&packets.Publish{QoS: d.qos, PacketID: d.id})
			l.acked.Store(true)
		}
	}
}

func (l *link5) subscribe(ctx context.Context, filters []string, qos byte, retained bool) error {
	s := &paho.Subscribe{}
	handling := byte(1) // retained messages when the subscription is new
	if !retained {
		handling = 2
	}
	for _, f := range filters {
		s.Subscriptions = append(s.Subscriptions, paho.SubscribeOptions{Topic: f, QoS: qos, RetainHandling: handling})
	}
	sa, err := l.cli.Subscribe(ctx, s)
	if sa == nil || len(sa.Reasons) != len(filters) {
		if err == nil {
			err = errors.New("the broker's SUBACK does not answer every filter")
		}
		return fmt.Errorf("subscribing: %w", err)
	}
	return subackError(filters, qos, sa.Reasons)
}

// subackError describes the filters a SUBACK refused (reason codes 0x80
// and above), or returns nil.
func subackError(filters []string, qos byte, reasons []byte) error {
	var refused []string
	notAuthorized, notSupported := false, false
	for i, r := range reasons {
		if r < 0x80 {
			continue
		}
		refused = append(refused, fmt.Sprintf("'%s' (%s)", filters[i], subackReason(r)))
		notAuthorized = notAuthorized || r == 0x87
		notSupported = notSupported || r == 0x9E || r == 0xA2 || r == 0x8F
	}
	if len(refused) == 0 {
		return nil
	}
	reason := "the broker refused to subscribe to " + strings.Join(refused, ", ")
	switch {
	case notAuthorized:
		return &refusedError{reason, "check 'username' and the broker's access rules, or fix 'topic'"}
	case notSupported:
		return &refusedError{reason, "the broker does not take such filters: fix 'topic' (or 'scan.shared-subscription.group')"}
	}
	return errors.New(reason)
}

// subackReason names a SUBACK reason code.
func subackReason(r byte) string {
	switch r {
	case 0x80:
		return "unspecified error"
	case 0x83:
		return "implementation specific error"
	case 0x87:
		return "not authorized"
	case 0x8F:
		return "topic filter invalid"
	case 0x91:
		return "packet identifier in use"
	case 0x97:
		return "quota exceeded"
	case 0x9E:
		return "shared subscriptions not supported"
	case 0xA1:
		return "subscription identifiers not supported"
	case 0xA2:
		return "wildcard subscriptions not supported"
	}
	return fmt.Sprintf("reason code 0x%02X", r)
}

func (l *link5) publish(ctx context.Context, m *outgoing) (receipt, error) {
	p := &paho.Publish{Topic: m.topic, QoS: m.qos, Retain: m.retain, Payload: m.payload}
	if m.expiry > 0 {
		e := uint32(min(m.expiry/time.Second, maxSessionExpiry))
		p.Properties = &paho.PublishProperties{MessageExpiry: &e}
	}
	var r *receipt5
	if m.qos > 0 {
		r = &receipt5{ch: make(chan packets.ControlPacket, 1), lost: l.doneCh}
		l.st.next = r.ch
	}
	_, err := l.cli.PublishWithOptions(ctx, p, paho.PublishOptions{Method: paho.PublishMethod_AsyncSend})
	l.st.next = nil
	switch {
	case err == nil:
	case errors.Is(err, paho.ErrNetworkErrorAfterStored):
		// Stored and failed to go out: the connection is going down, and
		// the receipt will say it was lost.
	case errors.Is(err, paho.ErrInvalidArguments):
		return nil, err
	default:
		select {
		case <-l.doneCh:
			return nil, errLinkLost
		default:
		}
		if errors.Is(err, session.ErrNoConnection) {
			return nil, errLinkLost
		}
		return nil, err
	}
	if r == nil {
		return settled{}, nil
	}
	return r, nil
}

func (l *link5) close() {
	l.closing.Store(true)
	if l.acked.Load() {
		ctx, cancel := context.WithTimeout(context.Background(), barrierTimeout)
		_, _ = l.cli.Unsubscribe(ctx, &paho.Unsubscribe{Topics: []string{barrierFilter}})
		cancel()
	}
	_ = l.cli.Disconnect(&paho.Disconnect{ReasonCode: packets.DisconnectNormalDisconnection})
	l.end(nil)
}

// receipt5 is the receipt of an MQTT 5 publication: the session sends the
// broker's response to ch, or nothing if the link is lost first.
type receipt5 struct {
	ch   chan packets.ControlPacket
	lost <-chan struct{}
	done bool
	err  error
}

func (r *receipt5) poll() (bool, error) {
	if r.done {
		return true, r.err
	}
	select {
	case p := <-r.ch:
		r.settle(p)
	default:
		select {
		case <-r.lost:
			r.settleLost()
		default:
		}
	}
	return r.done, r.err
}

func (r *receipt5) wait(deadline time.Time) error {
	if r.done {
		return r.err
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case p := <-r.ch:
		r.settle(p)
	case <-r.lost:
		r.settleLost()
	case <-t.C:
		return errTimeout
	}
	return r.err
}

// settleLost settles a publication whose link is down, unless its
// response came in just before.
func (r *receipt5) settleLost() {
	select {
	case p := <-r.ch:
		r.settle(p)
	default:
		r.done, r.err = true, errLinkLost
	}
}

func (r *receipt5) settle(p packets.ControlPacket) {
	r.done = true
	var code byte
	var text string
	switch c := p.Content.(type) {
	case *packets.Puback:
		code, text = c.ReasonCode, c.Reason()
	case *packets.Pubcomp:
		code, text = c.ReasonCode, c.Reason()
	case *packets.Pubrec:
		code, text = c.ReasonCode, c.Reason()
	default:
		// The session removed the publication: its connection is gone.
		r.err = errLinkLost
		return
	}
	if code >= 0x80 {
		r.err = fmt.Errorf("the broker refused the message: reason code 0x%02X (%s)", code, text)
	}
}

// settled is the receipt of a QoS 0 publication, settled once sent.
type settled struct{}

func (settled) poll() (bool, error)  { return true, nil }
func (settled) wait(time.Time) error { return nil }
