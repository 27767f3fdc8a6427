package state

import (
	"fmt"

	"github.com/eddystream/eddy/internal/state/codec"
)

// cell is one value per (current key, namespace), with an optional TTL. It is
// the storage of ValueHandle, ReducingHandle and AggregatingHandle. Exactly
// one of plain and timed is set.
type cell[K, N comparable, V any] struct {
	s     *Store[K]
	ns    *N
	plain ValueTable[K, N, V]
	timed ValueTable[K, N, Timed[V]]
	ttl   ttlPolicy
}

func newCell[K, N comparable, V any](s *Store[K], ns *N, nc codec.Codec[N], name string, vc codec.Codec[V], ttl TTLConfig) (cell[K, N, V], error) {
	c := cell[K, N, V]{s: s, ns: ns}
	if c.ns == nil {
		c.ns = new(N)
	}
	var err error
	if c.ttl, err = newTTLPolicy(ttl); err != nil {
		return c, fmt.Errorf("%w (table %q)", err, name)
	}
	if !ttl.Enabled() {
		c.plain, err = NewValueTable(s.backend, name, s.keyCodec, nc, vc)
		return c, err
	}
	if vc, err = codecOrDefault(vc); err != nil {
		return c, fmt.Errorf("state: table %q: value: %w", name, err)
	}
	if c.timed, err = NewValueTable(s.backend, name, s.keyCodec, nc, TimedCodec(vc)); err != nil {
		return c, err
	}
	s.addCleaner(name, valueCleaner[K, N, V]{c.timed, c.ttl})
	return c, nil
}

// get reads the value of the current namespace for the user: an expired
// value is deleted and, unless the TTL says to show it once, hidden; with
// OnReadAndWrite the read restarts the time to live.
func (c *cell[K, N, V]) get() (V, bool) {
	kc := c.s.key
	if c.timed == nil {
		return c.plain.Get(kc.KG, kc.Key, *c.ns)
	}
	return c.getTimed(*c.ns, true)
}

// load reads the value of namespace n for a read-modify-write: expired values
// are absent, and the read does not restart the time to live (the write
// will).
func (c *cell[K, N, V]) load(n N) (V, bool) {
	if c.timed == nil {
		kc := c.s.key
		return c.plain.Get(kc.KG, kc.Key, n)
	}
	return c.getTimed(n, false)
}

func (c *cell[K, N, V]) getTimed(n N, user bool) (v V, ok bool) {
	kc := c.s.key
	e, ok := c.timed.Get(kc.KG, kc.Key, n)
	if !ok {
		return v, false
	}
	now := c.s.clock()
	if c.ttl.expired(e.Stamp, now) {
		c.timed.Delete(kc.KG, kc.Key, n)
		if user && c.ttl.showExpiry {
			return e.Value, true
		}
		return v, false
	}
	if user && c.ttl.onRead {
		e.Stamp = now
		c.timed.Put(kc.KG, kc.Key, n, e)
	}
	return e.Value, true
}

// store writes v to namespace n, stamping it with the current time if the
// cell has a TTL.
func (c *cell[K, N, V]) store(n N, v V) {
	kc := c.s.key
	if c.timed == nil {
		c.plain.Put(kc.KG, kc.Key, n, v)
		return
	}
	c.timed.Put(kc.KG, kc.Key, n, Timed[V]{Value: v, Stamp: c.s.clock()})
}

// clear deletes the value of namespace n.
func (c *cell[K, N, V]) clear(n N) {
	kc := c.s.key
	if c.timed == nil {
		c.plain.Delete(kc.KG, kc.Key, n)
		return
	}
	c.timed.Delete(kc.KG, kc.Key, n)
}

// merge combines the values of the sources namespaces into target with
// combine and deletes them; target's own value comes first. Sources equal to
// target are skipped.
func (c *cell[K, N, V]) merge(target N, sources []N, combine func(a, b V) V) {
	var acc V
	have := false
	if v, ok := c.load(target); ok {
		acc, have = v, true
	}
	changed := false
	for _, src := range sources {
		if src == target {
			continue
		}
		v, ok := c.load(src)
		if !ok {
			continue
		}
		c.clear(src)
		changed = true
		if have {
			acc = combine(acc, v)
		} else {
			acc, have = v, true
		}
	}
	if changed {
		c.store(target, acc)
	}
}
