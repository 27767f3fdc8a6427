package mqtt

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// publishTimeout is how long a writer waits for the broker to acknowledge
// a publication, on a live connection, before it fails.
var publishTimeout = time.Minute

// sink publishes records to one topic.
type sink[T any] struct {
	cfg        *config
	newEncoder func() connector.Encoder[T]
}

// ChangelogMode says which changes the format writes.
func (s *sink[T]) ChangelogMode() changelog.Mode { return s.cfg.changelogs }

func (s *sink[T]) NewWriter(ctx connector.WriterContext) (connector.Writer[T], error) {
	var suffix [3]byte
	_, _ = rand.Read(suffix[:])
	return &writer[T]{cfg: s.cfg, ctx: ctx, enc: s.newEncoder(), wait: s.cfg.guarantee == atLeastOnce,
		clientID: fmt.Sprintf("%s-w%d-%s", s.cfg.clientPrefix(ctx.SinkName()), ctx.Subtask(), hex.EncodeToString(suffix[:]))}, nil
}

// writer publishes the records of one subtask, in order, through a
// connection of its own (in a session that ends with the connection). With
// QoS 1 and 2 it keeps each publication until the broker acknowledges it,
// with at most 'sink.max-inflight' outstanding, and publishes again, in
// order, those a lost connection left unacknowledged; at least once, each
// flush waits for every acknowledgement.
type writer[T any] struct {
	cfg      *config
	ctx      connector.WriterContext
	enc      connector.Encoder[T]
	clientID string
	wait     bool // flushes wait for the acknowledgements
	buf      []byte
	conn     *connection
	inflight []*publication
}

// publication is a message awaiting the broker's acknowledgement.
type publication struct {
	payload []byte
	r       receipt
	l       link
}

func (w *writer[T]) what() string {
	return fmt.Sprintf("writer %d of %s (client id %s)", w.ctx.Subtask(), w.ctx.SinkName(), w.clientID)
}

func (w *writer[T]) Write(records []T, _ []int64) error {
	if w.conn == nil {
		w.conn = newConnection(w.cfg, w.what(), w.ctx.Log(), linkOptions{clientID: w.clientID}, false,
			func(context.Context, link, bool) error { return nil })
	}
	for _, v := range records {
		b, err := w.enc.Encode(w.buf[:0], v)
		if err != nil {
			return fmt.Errorf("%s: encoding a record for topic %q: %w", w.cfg.label(), w.cfg.topics[0], err)
		}
		w.buf = b
		if err := w.send(bytes.Clone(b)); err != nil {
			return err
		}
		connector.CountBytesOut(w.ctx, len(b))
	}
	return nil
}

// message returns the message of a payload.
func (w *writer[T]) message(payload []byte) *outgoing {
	return &outgoing{topic: w.cfg.topics[0], payload: payload, qos: w.cfg.qos, retain: w.cfg.retain, expiry: w.cfg.msgExpiry}
}

// publish sends payload on the link that is up, waiting for one if the
// last was lost. A new record (fresh) waits until the publications a lost
// link left unacknowledged have been published again on the link that is
// up, so that records reach the broker in the order they were written: a
// record published again after newer ones would, among other things, be
// left as the topic's retained message.
func (w *writer[T]) publish(payload []byte, fresh bool) (receipt, link, error) {
	for {
		l, err := w.conn.current(time.Now().Add(w.cfg.connTimeout))
		if err != nil {
			return nil, nil, err
		}
		if fresh && w.behind(l) {
			if err := w.resend(); err != nil {
				return nil, nil, err
			}
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
		r, err := l.publish(ctx, w.message(payload))
		cancel()
		switch {
		case err == nil:
			return r, l, nil
		case errors.Is(err, errLinkLost):
			w.awaitEnd(l)
		default:
			return nil, nil, fmt.Errorf("%s: publishing to topic %q: %w", w.cfg.label(), w.cfg.topics[0], err)
		}
	}
}

// awaitEnd waits until the connection has noticed that l is lost, so that
// current returns another link.
func (w *writer[T]) awaitEnd(l link) {
	t := time.NewTimer(w.cfg.connTimeout)
	defer t.Stop()
	select {
	case <-l.done():
	case <-t.C:
	}
}

// behind says whether publications of a link other than l, the one that
// is up, await acknowledgement: that link was lost, and they must be
// published again before anything new. The publications are in the order
// of the links they went out on (a new record waits for those of a lost
// link to go out again), so the first unsettled one tells.
func (w *writer[T]) behind(l link) bool {
	w.trim()
	return len(w.inflight) > 0 && w.inflight[0].l != l
}

// trim drops the acknowledged publications from the front of inflight.
func (w *writer[T]) trim() {
	n := 0
	for n < len(w.inflight) {
		if done, err := w.inflight[n].r.poll(); !done || err != nil {
			break
		}
		n++
	}
	if n > 0 {
		k := copy(w.inflight, w.inflight[n:])
		clear(w.inflight[k:])
		w.inflight = w.inflight[:k]
	}
}

func (w *writer[T]) send(payload []byte) error {
	r, l, err := w.publish(payload, true)
	if err != nil {
		return err
	}
	if w.cfg.qos == 0 {
		return nil
	}
	w.inflight = append(w.inflight, &publication{payload: payload, r: r, l: l})
	// Drop what is settled from the front, and wait once too much is
	// outstanding.
	w.trim()
	if len(w.inflight) >= w.cfg.maxInflight {
		return w.settle(w.cfg.maxInflight - 1)
	}
	return nil
}

// settle waits until at most n publications await acknowledgement,
// publishing again, in order, those whose connection was lost.
func (w *writer[T]) settle(n int) error {
	deadline := time.Now().Add(publishTimeout)
	for len(w.inflight) > n {
		p := w.inflight[0]
		switch err := p.r.wait(deadline); {
		case err == nil:
			w.inflight[0] = nil
			w.inflight = w.inflight[1:]
		case errors.Is(err, errLinkLost):
			if err := w.resend(); err != nil {
				return err
			}
			deadline = time.Now().Add(publishTimeout)
		case errors.Is(err, errTimeout):
			return fmt.Errorf("%s: the broker did not acknowledge a message published to topic %q within %s; check that the broker at %s is healthy and reachable",
				w.cfg.label(), w.cfg.topics[0], publishTimeout, w.cfg.servers())
		default:
			return fmt.Errorf("%s: publishing to topic %q: %w; check the broker's access rules for the topic, and its limits", w.cfg.label(), w.cfg.topics[0], err)
		}
	}
	if len(w.inflight) == 0 {
		w.inflight = nil // let go of the backing array
	}
	return nil
}

// resend publishes again, in order, the publications not acknowledged on
// a link that is gone.
func (w *writer[T]) resend() error {
	w.ctx.Log().Warn(fmt.Sprintf("%s: %s publishes again the messages the broker had not acknowledged when the connection was lost", w.cfg.label(), w.what()))
	for _, p := range w.inflight {
		select {
		case <-p.l.done():
		default:
			continue // on the link that is up
		}
		if done, err := p.r.poll(); done && err == nil {
			continue // acknowledged before the loss
		}
		r, l, err := w.publish(p.payload, false)
		if err != nil {
			return err
		}
		p.r, p.l = r, l
	}
	return nil
}

// Flush waits, at least once, for the broker to acknowledge every message
// published so far.
func (w *writer[T]) Flush() error {
	if w.conn != nil {
		if err := w.conn.failure(); err != nil {
			return err
		}
	}
	if !w.wait {
		return nil
	}
	return w.settle(0)
}

func (w *writer[T]) Close() error {
	if w.conn != nil {
		w.conn.close()
	}
	w.inflight = nil
	return nil
}
