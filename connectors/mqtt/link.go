package mqtt

import (
	"context"
	"errors"
	"net/url"
	"time"
)

// link is one network connection to a broker, in one protocol version:
// link5 (paho.golang) or link3 (paho.mqtt.golang). It does not reconnect:
// connection (connection.go) makes a new link when one is lost, and what
// is tied to a link (acknowledgements of the messages it received,
// receipts of what it published) ends with it.
type link interface {
	// sessionPresent says whether the broker resumed a session it kept
	// under the client id.
	sessionPresent() bool
	// grantedExpiry is the session expiry the broker said it uses instead
	// of the one asked for (MQTT 5), or 0.
	grantedExpiry() time.Duration
	// subscribe subscribes to filters, failing with the broker's reason if
	// it refuses one. retained says whether the broker is to send the
	// retained messages of the filters (MQTT 5: when the subscription is
	// new).
	subscribe(ctx context.Context, filters []string, qos byte, retained bool) error
	// publish sends a message without waiting for the broker's
	// acknowledgement; with QoS 1 or 2 the receipt reports it. Calls from
	// one goroutine are sent in order.
	publish(ctx context.Context, m *outgoing) (receipt, error)
	// ack acknowledges messages the link received, in the order given
	// (PUBACK, or PUBREC with QoS 2; nothing for QoS 0). Messages must be
	// acknowledged in the order they arrived. A link that is down drops the
	// acknowledgements: the broker delivers the messages again on the next
	// connection.
	ack(ds []*delivery)
	// done is closed when the connection is lost or closed.
	done() <-chan struct{}
	// cause returns why the connection ended, once done is closed; nil if
	// it was closed on purpose.
	cause() error
	// close disconnects gracefully, keeping the session if it has an
	// expiry. A link that sent acknowledgements first waits until the
	// broker has processed them (see barrierFilter).
	close()
}

// barrierFilter is what a closing link that sent acknowledgements
// unsubscribes from (it never subscribed to it), waiting for the answer:
// the broker handles a connection's packets in order, so the answer means
// it has the acknowledgements too. A broker that takes a session over
// (the next run of a job connecting with the same client id) drops what
// it has not read of the old connection, acknowledgements included, and
// would deliver those messages again.
const barrierFilter = "eddy/acknowledgement-barrier"

// barrierTimeout bounds the wait for the barrier.
const barrierTimeout = 5 * time.Second

// linkOptions configure a link.
type linkOptions struct {
	clientID   string
	cleanStart bool          // begin a new session, discarding any kept one
	expiry     time.Duration // how long the broker keeps the session after the connection (MQTT 5)
	persistent bool          // keep the session after the connection (MQTT 3.1.1: clean session off)
	receiveMax uint16        // MQTT 5: the receive maximum; 0 leaves the broker's default
	// onMessage receives every message, on the link's goroutine, in the
	// order they arrived. It may block to slow the connection down.
	onMessage func(*delivery)
}

// delivery is a message a link received.
type delivery struct {
	topic    string
	payload  []byte
	qos      byte
	retained bool
	dup      bool
	id       uint16 // the packet identifier; 0 with QoS 0
	received int64  // when it arrived, in milliseconds since the Unix epoch
	// MQTT 5 properties.
	contentType string
	user        [][2]string
	link        link
	ref         any        // what the link needs to acknowledge it
	split       *readSplit // the split whose session received it
}

// outgoing is a message to publish.
type outgoing struct {
	topic   string
	payload []byte
	qos     byte
	retain  bool
	expiry  time.Duration // MQTT 5 message expiry; 0 for none
}

// receipt reports the broker's acknowledgement of a publication.
type receipt interface {
	// poll says, without waiting, whether the publication is settled, and
	// if so how (nil: acknowledged).
	poll() (settled bool, err error)
	// wait waits until the publication is settled or the deadline passes
	// (errTimeout).
	wait(deadline time.Time) error
}

var (
	// errLinkLost settles a publication whose link was lost before the
	// broker acknowledged it: it must be published again.
	errLinkLost = errors.New("the connection was lost before the broker acknowledged the message")
	// errTimeout is the error of a receipt that was not settled in time.
	errTimeout = errors.New("no acknowledgement within the time allowed")
)

// refusedError is the broker's refusal of a connection that trying again
// will not change: bad credentials, a client id or protocol version it
// does not accept.
type refusedError struct {
	reason string
	hint   string
}

func (e *refusedError) Error() string { return e.reason + "; " + e.hint }

// takenOverError ends a link whose session another client took over by
// connecting with the same client id.
type takenOverError struct{ clientID string }

func (e *takenOverError) Error() string {
	return "another client connected with client id " + e.clientID + " and took the session over"
}

// dialer makes links to one server.
type dialer func(ctx context.Context, u *url.URL, o *linkOptions) (link, error)
