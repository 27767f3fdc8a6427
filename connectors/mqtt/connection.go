package mqtt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// attemptTimeout bounds one attempt to connect to one server.
const attemptTimeout = 10 * time.Second

// A connection whose links keep being lost right after they come up fails:
// flapLimit losses of links that lived less than flapLife, within
// flapWindow. Two clients with one client id take the session from each
// other so (a broker need not say that it closed a connection because
// another took its session over: Mosquitto 2.0 just closes it).
const (
	flapLimit  = 5
	flapLife   = 10 * time.Second
	flapWindow = time.Minute
)

// connection keeps a link to the broker up for a reader's split or a
// writer: it connects to each server of 'url' in turn until one answers,
// runs setup (subscribing) on every new link, and makes a new link when one
// is lost. It fails, for good, when the broker refuses it (credentials,
// authorization, a session taken over) or when no link came up for
// 'connection.timeout'.
type connection struct {
	cfg  *config
	opts linkOptions
	what string // "reader 0 of orders (client id eddy-orders-1a2b3c4d-0)", for errors and logs
	log  *slog.Logger
	dial dialer
	// setup runs on every new link before it is used; ctx ends when the
	// link does. An error closes the link; a *refusedError fails the
	// connection.
	setup func(ctx context.Context, l link, first bool) error
	// cleanFirst begins a new session on the first link only; later links
	// resume it.
	cleanFirst bool

	mu     sync.Mutex
	cur    link
	upCh   chan struct{} // closed once cur is set; replaced when it is lost
	err    error
	failed chan struct{}

	stop    chan struct{}
	stopped chan struct{}
}

// newConnection returns a connection that starts connecting at once.
func newConnection(cfg *config, what string, log *slog.Logger, opts linkOptions, cleanFirst bool, setup func(context.Context, link, bool) error) *connection {
	c := &connection{cfg: cfg, opts: opts, what: what, log: log, setup: setup, cleanFirst: cleanFirst,
		upCh: make(chan struct{}), failed: make(chan struct{}), stop: make(chan struct{}), stopped: make(chan struct{})}
	c.dial = cfg.dial5
	if cfg.version == v311 {
		c.dial = cfg.dial3
	}
	go c.run()
	return c
}

func (c *connection) run() {
	defer close(c.stopped)
	first := true
	down := time.Now() // since when no link has been up
	backoff := 50 * time.Millisecond
	var last error
	var flaps []time.Time // when short-lived links were lost
	for {
		select {
		case <-c.stop:
			return
		default:
		}
		l, err := c.connect(first)
		if err == nil {
			if err = c.runSetup(l, first); err != nil {
				l.close()
			}
		}
		if err != nil {
			select {
			case <-c.stop:
				return
			default:
			}
			var refused *refusedError
			if errors.As(err, &refused) {
				c.fail(fmt.Errorf("%s: %s: %w", c.cfg.label(), c.what, err))
				return
			}
			if time.Since(down) >= c.cfg.connTimeout {
				c.fail(fmt.Errorf("%s: %s could not connect to %s for %s ('connection.timeout'): %w; check 'url', that the broker runs and that it speaks MQTT %s ('mqtt.version')",
					c.cfg.label(), c.what, c.cfg.servers(), c.cfg.connTimeout, err, c.cfg.version))
				return
			}
			if last == nil || last.Error() != err.Error() {
				c.log.Warn(fmt.Sprintf("%s: %s cannot connect; trying again", c.cfg.label(), c.what), "error", err)
			}
			last = err
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-c.stop:
				t.Stop()
				return
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		if last != nil {
			c.log.Info(fmt.Sprintf("%s: %s connected", c.cfg.label(), c.what))
		}
		first, last, backoff = false, nil, 50*time.Millisecond
		c.mu.Lock()
		c.cur = l
		close(c.upCh)
		c.mu.Unlock()
		up := time.Now()
		select {
		case <-l.done():
		case <-c.stop:
			c.down()
			l.close()
			return
		}
		c.down()
		down = time.Now()
		var taken *takenOverError
		if errors.As(l.cause(), &taken) {
			c.fail(fmt.Errorf("%s: %s: %w: give every job, and every source reading the same topics, its own 'client-id'", c.cfg.label(), c.what, taken))
			return
		}
		if down.Sub(up) < flapLife {
			flaps = append(flaps, down)
			for len(flaps) > 0 && down.Sub(flaps[0]) > flapWindow {
				flaps = flaps[1:]
			}
			if len(flaps) >= flapLimit {
				c.fail(fmt.Errorf("%s: %s lost its connection %d times within %s, each right after it was made (last: %v): another client with the same client id (another job, or another source with the same 'client-id') probably takes the session over each time; give each its own 'client-id', or see the broker's log",
					c.cfg.label(), c.what, len(flaps), flapWindow, l.cause()))
				return
			}
		}
		c.log.Warn(fmt.Sprintf("%s: %s lost its connection; reconnecting", c.cfg.label(), c.what), "error", l.cause())
	}
}

// runSetup runs setup on l, with a context that ends when l or the
// connection does, or after 'connection.timeout'.
func (c *connection) runSetup(l link, first bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.connTimeout)
	defer cancel()
	go func() {
		select {
		case <-l.done():
		case <-c.stop:
		case <-ctx.Done():
		}
		cancel()
	}()
	err := c.setup(ctx, l, first)
	select {
	case <-l.done():
		if err != nil {
			err = fmt.Errorf("%w (the connection ended: %v)", err, l.cause())
		}
	default:
	}
	return err
}

// down forgets the current link.
func (c *connection) down() {
	c.mu.Lock()
	c.cur = nil
	c.upCh = make(chan struct{})
	c.mu.Unlock()
}

// connect makes one attempt at each server, in turn.
func (c *connection) connect(first bool) (link, error) {
	o := c.opts
	o.cleanStart = !o.persistent || (c.cleanFirst && first)
	var errs []string
	for _, u := range c.cfg.urls {
		ctx, cancel := context.WithTimeout(context.Background(), min(attemptTimeout, c.cfg.connTimeout))
		go func() {
			select {
			case <-c.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		l, err := c.dial(ctx, u, &o)
		cancel()
		if err == nil {
			return l, nil
		}
		var refused *refusedError
		if errors.As(err, &refused) {
			return nil, fmt.Errorf("%s: %w", u, err)
		}
		errs = append(errs, fmt.Sprintf("%s: %v", u, err))
	}
	return nil, errors.New(strings.Join(errs, "; "))
}

func (c *connection) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
		close(c.failed)
	}
	c.mu.Unlock()
}

// failure returns the error the connection failed with, or nil.
func (c *connection) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// current returns the link that is up, waiting for one until deadline.
func (c *connection) current(deadline time.Time) (link, error) {
	for {
		c.mu.Lock()
		l, up, err := c.cur, c.upCh, c.err
		c.mu.Unlock()
		if err != nil {
			return nil, err
		}
		wait := up
		if l != nil {
			select {
			case <-l.done():
				// Lost, and the connection is about to forget it.
				wait = nil
			default:
				return l, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: %s had no connection to %s for %s", c.cfg.label(), c.what, c.cfg.servers(), c.cfg.connTimeout)
		}
		var retry <-chan time.Time
		if wait == nil {
			retry = time.After(time.Millisecond)
		}
		t := time.NewTimer(time.Until(deadline))
		select {
		case <-wait:
		case <-retry:
		case <-c.failed:
		case <-c.stop:
			t.Stop()
			return nil, fmt.Errorf("%s: %s is closed", c.cfg.label(), c.what)
		case <-t.C:
			return nil, fmt.Errorf("%s: %s had no connection to %s for %s", c.cfg.label(), c.what, c.cfg.servers(), c.cfg.connTimeout)
		}
		t.Stop()
	}
}

// close disconnects and stops reconnecting.
func (c *connection) close() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	<-c.stopped
}
