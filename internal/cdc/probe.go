package cdc

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Probe asks the database about itself in the background, off the
// goroutine of the reader that wants to know (such as the server's current
// position in its log, against which a reader's lag in bytes is measured),
// at most once per interval, and keeps the latest answer.
//
// A query that fails is logged once as a warning (later ones at debug
// level) and leaves the answer unknown until one succeeds again: a
// reader's status then leaves the entry out, and the job goes on. A query
// that hangs leaves the answer unknown once it is older than Stale.
type Probe[V any] struct {
	interval time.Duration
	log      *slog.Logger
	what     string
	// release, if not nil, closes what the queries used (their
	// connection), once no query runs any more after Close.
	release func()

	mu      sync.Mutex
	running bool
	closed  bool
	started time.Time // when the latest query started
	val     V
	ok      bool
	at      time.Time // when val was answered
	warned  bool
	ctx     context.Context
	cancel  context.CancelFunc
}

// Stale is how long an answer counts: an older one is unknown.
const Stale = 15 * time.Second

// QueryTimeout bounds each query of a Probe: its context ends then.
const QueryTimeout = 10 * time.Second

// NewProbe returns a probe that queries at most once per interval; log
// says what failed, naming it what (such as "postgres-cdc: the server's
// WAL position (pg_current_wal_lsn())", which may say what fixes it);
// release, if not nil, closes what the queries used once the probe is
// closed and no query runs.
func NewProbe[V any](interval time.Duration, log *slog.Logger, what string, release func()) *Probe[V] {
	ctx, cancel := context.WithCancel(context.Background())
	return &Probe[V]{interval: interval, log: log, what: what, release: release, ctx: ctx, cancel: cancel}
}

// Poll returns the latest answer and whether there is one (fresh and
// from a query that succeeded). Unless a query runs or the latest started
// less than the interval ago, it starts query on a goroutine of its own,
// whose answer a later Poll returns; queries never run at the same time.
// Poll never waits for a query.
func (p *Probe[V]) Poll(now time.Time, query func(ctx context.Context) (V, error)) (V, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.running && !p.closed && now.Sub(p.started) >= p.interval {
		p.running, p.started = true, now
		go p.run(query)
	}
	return p.latest(now)
}

// Latest returns the latest answer and whether there is one, without
// starting a query.
func (p *Probe[V]) Latest(now time.Time) (V, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.latest(now)
}

func (p *Probe[V]) latest(now time.Time) (V, bool) {
	if !p.ok || now.Sub(p.at) > Stale {
		var zero V
		return zero, false
	}
	return p.val, true
}

func (p *Probe[V]) run(query func(ctx context.Context) (V, error)) {
	ctx, cancel := context.WithTimeout(p.ctx, QueryTimeout)
	v, err := query(ctx)
	cancel()
	p.mu.Lock()
	p.running = false
	closed := p.closed
	switch {
	case closed:
	case err != nil:
		var zero V
		p.val, p.ok = zero, false
		if !p.warned {
			p.warned = true
			p.log.Warn(p.what+" cannot be read: the reader's status leaves it out until it can (later failures are logged at debug level)", "error", err)
		} else {
			p.log.Debug(p.what+" cannot be read", "error", err)
		}
	default:
		p.val, p.ok, p.at = v, true, time.Now()
	}
	p.mu.Unlock()
	if closed && p.release != nil {
		p.release()
	}
}

// Close stops the probe: a query running is cancelled, and release is
// called once none runs. Close does not wait for it. The latest answer
// stays what Latest returns until it is stale.
func (p *Probe[V]) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	running := p.running
	p.mu.Unlock()
	p.cancel()
	if !running && p.release != nil {
		p.release()
	}
}
