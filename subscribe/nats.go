package subscribe

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
)

// Lease is how long a subscription made over NATS lasts without being
// renewed: a subscriber that goes away without unsubscribing is forgotten
// after it.
var Lease = 2 * time.Minute

// natsService answers the requests of subscribers over one NATS connection
// under one subject prefix.
type natsService struct {
	hub    *Hub
	key    string
	url    string
	prefix string
	nc     *natsgo.Conn
	users  int

	mu   sync.Mutex
	subs map[string]*natsSub
	// closed is set when the service stops: it takes no more
	// subscriptions.
	closed bool
	// forwarding counts the goroutines forwarding events, which the
	// service waits for before it closes its connection, so that their
	// subscribers receive their last message.
	forwarding sync.WaitGroup
}

// natsSub is a subscription made over NATS.
type natsSub struct {
	s       *Subscription
	deliver string
	timer   *time.Timer
}

// subscribeRequest is the body of a request on <prefix>.subscribe.<name>.
type subscribeRequest struct {
	Where   string `json:"where"`
	After   *int64 `json:"after"`
	Deliver string `json:"deliver"`
}

// ServeNATS answers subscribers over the NATS servers at url (comma-
// separated), under the subject prefix (e.g. "eddy"):
//
//	<prefix>.advertise             request → {"tables": [Info...]}
//	<prefix>.subscribe.<name>      request {"where": "...", "after": 12, "deliver": "<subject>"}
//	                               → {"id": "...", "deliver": "<subject>", "lease": "2m0s"}
//	<prefix>.renew.<id>            request → {"ok": true}: the subscription lasts another Lease
//	<prefix>.unsubscribe.<id>      request → {"ok": true}
//
// Events go to the deliver subject (by default <prefix>.events.<id>) as
// the JSON of Event.JSON, with the header Eddy-Position; a subscription
// that ends other than by unsubscribe sends a last message with the
// header Eddy-Error and the body {"error": "...", "after": <position to
// resume after>}. Core NATS delivers at most once: a subscriber that
// misses events (the server dropped them to a slow consumer) resumes
// after the last position it received. A subscription not renewed within
// Lease ends. The hub serves each URL and prefix once; stop releases it.
func (h *Hub) ServeNATS(url, prefix string, opts ...natsgo.Option) (stop func(), err error) {
	if prefix == "" || strings.ContainsAny(prefix, " *>\t") {
		return nil, fmt.Errorf("subscribe: %q cannot prefix subjects: use tokens without wildcards, such as 'eddy'", prefix)
	}
	key := url + "\x00" + prefix
	h.mu.Lock()
	defer h.mu.Unlock()
	svc := h.nats[key]
	if svc == nil {
		nc, err := natsgo.Connect(url, append([]natsgo.Option{natsgo.Name("eddy subscriptions"), natsgo.MaxReconnects(-1)}, opts...)...)
		if err != nil {
			return nil, fmt.Errorf("subscribe: serving subscriptions over NATS at %s: %w", url, err)
		}
		svc = &natsService{hub: h, key: key, url: url, prefix: prefix, nc: nc, subs: map[string]*natsSub{}}
		for subj, fn := range map[string]natsgo.MsgHandler{
			prefix + ".advertise":     svc.advertise,
			prefix + ".subscribe.*":   svc.subscribe,
			prefix + ".renew.*":       svc.renew,
			prefix + ".unsubscribe.*": svc.unsubscribe,
		} {
			if _, err := nc.Subscribe(subj, fn); err != nil {
				nc.Close()
				return nil, fmt.Errorf("subscribe: serving subscriptions over NATS at %s: %w", url, err)
			}
		}
		if err := nc.Flush(); err != nil {
			nc.Close()
			return nil, fmt.Errorf("subscribe: serving subscriptions over NATS at %s: %w", url, err)
		}
		h.nats[key] = svc
	}
	svc.users++
	var once sync.Once
	return func() { once.Do(svc.release) }, nil
}

// release drops one user of the service, closing it after the last.
func (svc *natsService) release() {
	h := svc.hub
	h.mu.Lock()
	svc.users--
	last := svc.users == 0
	if last {
		delete(h.nats, svc.key)
	}
	h.mu.Unlock()
	if !last {
		return
	}
	svc.mu.Lock()
	svc.closed = true
	subs := svc.subs
	svc.subs = map[string]*natsSub{}
	svc.mu.Unlock()
	err := fmt.Errorf("subscribe: subscriptions over NATS at %s (prefix %q) are no longer served: no table published there is any more; subscribe again once one is", svc.url, svc.prefix)
	for _, ns := range subs {
		ns.timer.Stop()
		ns.s.stop(err)
	}
	// Each subscriber is sent what was queued for it and then its last
	// message; a connection that cannot take them is not waited for long.
	done := make(chan struct{})
	go func() {
		svc.forwarding.Wait()
		close(done)
	}()
	select {
	case <-done:
		_ = svc.nc.FlushTimeout(10 * time.Second)
	case <-time.After(30 * time.Second):
	}
	svc.nc.Close()
}

func respond(m *natsgo.Msg, v any) {
	b, _ := json.Marshal(v)
	_ = m.Respond(b)
}

func (svc *natsService) advertise(m *natsgo.Msg) {
	respond(m, map[string]any{"tables": svc.hub.Advertise()})
}

// lastToken returns the last token of a subject.
func lastToken(subject string) string {
	return subject[strings.LastIndexByte(subject, '.')+1:]
}

func (svc *natsService) subscribe(m *natsgo.Msg) {
	name := lastToken(m.Subject)
	var req subscribeRequest
	if len(m.Data) > 0 {
		if err := json.Unmarshal(m.Data, &req); err != nil {
			respond(m, map[string]string{"error": fmt.Sprintf(`the request is not JSON (%v): send {"where": "<condition>", "after": <position>, "deliver": "<subject>"}, each optional`, err)})
			return
		}
	}
	if len(req.Where) > maxWhere {
		respond(m, map[string]string{"error": fmt.Sprintf("the condition has %d bytes; at most %d are accepted", len(req.Where), maxWhere)})
		return
	}
	id := nuid.Next()
	if req.Deliver == "" {
		req.Deliver = svc.prefix + ".events." + id
	} else if strings.ContainsAny(req.Deliver, " *>\t") {
		respond(m, map[string]string{"error": fmt.Sprintf("deliver %q is not a subject to publish to: give one without wildcards", req.Deliver)})
		return
	}
	s, err := svc.hub.Subscribe(name, Options{Where: req.Where, After: req.After})
	if err != nil {
		respond(m, map[string]string{"error": err.Error()})
		return
	}
	ns := &natsSub{s: s, deliver: req.Deliver}
	ns.timer = time.AfterFunc(Lease, func() {
		svc.drop(id, fmt.Errorf("subscribe: the subscription was not renewed within %s (request %s.renew.%s)", Lease, svc.prefix, id))
	})
	svc.mu.Lock()
	if svc.closed {
		svc.mu.Unlock()
		ns.timer.Stop()
		s.Close()
		respond(m, map[string]string{"error": "subscriptions are no longer served here"})
		return
	}
	svc.subs[id] = ns
	svc.forwarding.Add(1)
	svc.mu.Unlock()
	respond(m, map[string]string{"id": id, "deliver": req.Deliver, "lease": Lease.String()})
	go svc.forward(id, ns)
}

// forward publishes a subscription's events to its deliver subject until
// it ends, then says why.
func (svc *natsService) forward(id string, ns *natsSub) {
	defer svc.forwarding.Done()
	for {
		e, err := ns.s.Next(context.Background())
		if err != nil {
			svc.mu.Lock()
			delete(svc.subs, id)
			svc.mu.Unlock()
			ns.timer.Stop()
			if err == ErrClosed {
				return
			}
			b, _ := json.Marshal(map[string]any{"error": err.Error(), "after": ns.s.Last()})
			msg := natsgo.NewMsg(ns.deliver)
			msg.Header.Set("Eddy-Error", "true")
			msg.Data = b
			_ = svc.nc.PublishMsg(msg)
			return
		}
		msg := natsgo.NewMsg(ns.deliver)
		msg.Header.Set("Eddy-Position", strconv.FormatInt(e.Position, 10))
		msg.Data = e.JSON
		if err := svc.nc.PublishMsg(msg); err != nil {
			ns.s.stop(fmt.Errorf("subscribe: publishing to %s: %w", ns.deliver, err))
		}
	}
}

// take removes subscription id from those served and returns it, or nil
// if there is none. Once it returns, renewing or ending id is refused,
// though its forwarder may still be sending its last messages.
func (svc *natsService) take(id string) *natsSub {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	ns := svc.subs[id]
	delete(svc.subs, id)
	return ns
}

// drop ends subscription id with err.
func (svc *natsService) drop(id string, err error) {
	ns := svc.take(id)
	if ns == nil {
		return
	}
	ns.s.stop(err)
}

func (svc *natsService) renew(m *natsgo.Msg) {
	id := lastToken(m.Subject)
	svc.mu.Lock()
	ns := svc.subs[id]
	svc.mu.Unlock()
	if ns == nil {
		respond(m, map[string]string{"error": fmt.Sprintf("no subscription %s: it ended (see its last message) or never was; subscribe again", id)})
		return
	}
	ns.timer.Reset(Lease)
	respond(m, map[string]bool{"ok": true})
}

func (svc *natsService) unsubscribe(m *natsgo.Msg) {
	id := lastToken(m.Subject)
	ns := svc.take(id)
	if ns == nil {
		respond(m, map[string]string{"error": fmt.Sprintf("no subscription %s", id)})
		return
	}
	ns.timer.Stop()
	ns.s.Close()
	respond(m, map[string]bool{"ok": true})
}
