package kafka

import (
	"fmt"
	"sync"
)

// prefixes holds the transactional-id prefixes of the exactly-once sinks
// running in the process, each with the sink that uses it and how many of
// its committers are open. Two sinks must not share a prefix: when its job
// starts, a sink aborts the open transactions of its prefix that its own
// checkpoint does not hold (abortLingering), which would abort those the
// other sink's checkpoint must still commit, and the ids of their
// transactions could collide.
var prefixes = prefixRegistry{owners: map[string]*prefixOwner{}}

type prefixRegistry struct {
	mu     sync.Mutex
	owners map[string]*prefixOwner
}

type prefixOwner struct {
	cfg *config
	n   int
}

// claim records that a committer of the sink cfg describes uses its
// prefix; it is an error if another sink of the process uses it.
// Committers of one sink (its subtasks, and those of a restarted run of
// its job) share it.
func (r *prefixRegistry) claim(cfg *config) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := r.owners[cfg.txPrefix]
	switch {
	case o == nil:
		r.owners[cfg.txPrefix] = &prefixOwner{cfg: cfg, n: 1}
	case o.cfg == cfg:
		o.n++
	default:
		return cfg.optErr("sink.transactional-id-prefix", fmt.Sprintf(
			"'%s' is also the prefix of the running exactly-once sink %q (topic %q): each sink aborts, when its job starts, the open transactions of its prefix that its own checkpoint does not hold, which would lose records the other must still commit; give every exactly-once sink its own prefix (two INSERTs into one table are two sinks: write their UNION ALL instead)",
			cfg.txPrefix, o.cfg.name, o.cfg.topicName()))
	}
	return nil
}

// release undoes one claim of cfg.
func (r *prefixRegistry) release(cfg *config) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if o := r.owners[cfg.txPrefix]; o != nil && o.cfg == cfg {
		if o.n--; o.n == 0 {
			delete(r.owners, cfg.txPrefix)
		}
	}
}
