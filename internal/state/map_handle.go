package state

import (
	"fmt"
	"iter"

	"github.com/eddystream/eddy/internal/state/codec"
)

// MapHandle is a map from user keys to values per key and namespace: Flink's
// MapState. Each entry is stored on its own; with a TTL each entry has its
// own time to live.
type MapHandle[K, N, UK comparable, UV any] struct {
	s     *Store[K]
	ns    *N
	plain MapTable[K, N, UK, UV]
	timed MapTable[K, N, UK, Timed[UV]]
	ttl   ttlPolicy
}

// NewMapHandle declares map state called name on s. ukc and uvc encode user
// keys and values; ns, nc and ttl are as for NewValueHandle.
func NewMapHandle[K, N, UK comparable, UV any](s *Store[K], ns *N, nc codec.Codec[N], name string, ukc codec.Codec[UK], uvc codec.Codec[UV], ttl TTLConfig) (*MapHandle[K, N, UK, UV], error) {
	h := &MapHandle[K, N, UK, UV]{s: s, ns: ns}
	if h.ns == nil {
		h.ns = new(N)
	}
	var err error
	if h.ttl, err = newTTLPolicy(ttl); err != nil {
		return nil, fmt.Errorf("%w (table %q)", err, name)
	}
	if !ttl.Enabled() {
		if h.plain, err = NewMapTable(s.backend, name, s.keyCodec, nc, ukc, uvc); err != nil {
			return nil, err
		}
		return h, nil
	}
	if uvc, err = codecOrDefault(uvc); err != nil {
		return nil, fmt.Errorf("state: table %q: user value: %w", name, err)
	}
	if h.timed, err = NewMapTable(s.backend, name, s.keyCodec, nc, ukc, TimedCodec(uvc)); err != nil {
		return nil, err
	}
	s.addCleaner(name, mapCleaner[K, N, UK, UV]{h.timed, h.ttl})
	return h, nil
}

// Get returns the value of uk in the map of the current key and namespace.
// With OnReadAndWrite it restarts the entry's time to live.
func (h *MapHandle[K, N, UK, UV]) Get(uk UK) (uv UV, ok bool) {
	kc := h.s.key
	if h.timed == nil {
		return h.plain.Get(kc.KG, kc.Key, *h.ns, uk)
	}
	e, ok := h.timed.Get(kc.KG, kc.Key, *h.ns, uk)
	if !ok {
		return uv, false
	}
	now := h.s.clock()
	if h.ttl.expired(e.Stamp, now) {
		h.timed.Delete(kc.KG, kc.Key, *h.ns, uk)
		if h.ttl.showExpiry {
			return e.Value, true
		}
		return uv, false
	}
	if h.ttl.onRead {
		h.timed.Put(kc.KG, kc.Key, *h.ns, uk, Timed[UV]{e.Value, now})
	}
	return e.Value, true
}

// Put sets uk to uv in the map of the current key and namespace.
func (h *MapHandle[K, N, UK, UV]) Put(uk UK, uv UV) {
	kc := h.s.key
	if h.timed == nil {
		h.plain.Put(kc.KG, kc.Key, *h.ns, uk, uv)
		return
	}
	h.timed.Put(kc.KG, kc.Key, *h.ns, uk, Timed[UV]{uv, h.s.clock()})
}

// Delete removes uk from the map of the current key and namespace.
func (h *MapHandle[K, N, UK, UV]) Delete(uk UK) {
	kc := h.s.key
	if h.timed == nil {
		h.plain.Delete(kc.KG, kc.Key, *h.ns, uk)
		return
	}
	h.timed.Delete(kc.KG, kc.Key, *h.ns, uk)
}

// Contains reports whether uk is in the map of the current key and namespace,
// with the same TTL rules as Get.
func (h *MapHandle[K, N, UK, UV]) Contains(uk UK) bool {
	_, ok := h.Get(uk)
	return ok
}

// Entries returns an iterator over the entries of the map of the key and
// namespace current when Entries is called, in no particular order. The
// loop body may Delete or Put the entry it is given, and should not change
// others. Expired entries are deleted as they are met and, with
// NeverReturnExpired, skipped; iterating does not restart times to live.
func (h *MapHandle[K, N, UK, UV]) Entries() iter.Seq2[UK, UV] {
	kg, k, n := h.s.key.KG, h.s.key.Key, *h.ns
	if h.timed == nil {
		return func(yield func(UK, UV) bool) { h.plain.Entries(kg, k, n, yield) }
	}
	return func(yield func(UK, UV) bool) {
		now := h.s.clock()
		h.timed.Entries(kg, k, n, func(uk UK, e Timed[UV]) bool {
			if h.ttl.expired(e.Stamp, now) {
				h.timed.Delete(kg, k, n, uk)
				if !h.ttl.showExpiry {
					return true
				}
			}
			return yield(uk, e.Value)
		})
	}
}

// Keys returns an iterator over the user keys of the map, as Entries.
func (h *MapHandle[K, N, UK, UV]) Keys() iter.Seq[UK] {
	entries := h.Entries()
	return func(yield func(UK) bool) {
		for uk := range entries {
			if !yield(uk) {
				return
			}
		}
	}
}

// IsEmpty reports whether the map of the current key and namespace has no
// unexpired entries; it deletes the expired ones it meets.
func (h *MapHandle[K, N, UK, UV]) IsEmpty() bool {
	kc := h.s.key
	if h.timed == nil {
		return h.plain.IsEmpty(kc.KG, kc.Key, *h.ns)
	}
	empty := true
	now := h.s.clock()
	h.timed.Entries(kc.KG, kc.Key, *h.ns, func(uk UK, e Timed[UV]) bool {
		if h.ttl.expired(e.Stamp, now) {
			h.timed.Delete(kc.KG, kc.Key, *h.ns, uk)
			return true
		}
		empty = false
		return false
	})
	return empty
}

// Clear deletes the map of the current key and namespace.
func (h *MapHandle[K, N, UK, UV]) Clear() {
	kc := h.s.key
	if h.timed == nil {
		h.plain.Clear(kc.KG, kc.Key, *h.ns)
		return
	}
	h.timed.Clear(kc.KG, kc.Key, *h.ns)
}
