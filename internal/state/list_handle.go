package state

import (
	"fmt"
	"slices"

	"github.com/eddystream/eddy/internal/state/codec"
)

// ListHandle is a list of values per key and namespace: Flink's ListState.
// The list is stored as one value; with a TTL each element has its own time
// to live.
type ListHandle[K, N comparable, T any] struct {
	s     *Store[K]
	ns    *N
	plain ValueTable[K, N, []T]
	timed ValueTable[K, N, []Timed[T]]
	ttl   ttlPolicy
}

// NewListHandle declares list state called name on s. ec encodes elements;
// ns, nc and ttl are as for NewValueHandle.
func NewListHandle[K, N comparable, T any](s *Store[K], ns *N, nc codec.Codec[N], name string, ec codec.Codec[T], ttl TTLConfig) (*ListHandle[K, N, T], error) {
	h := &ListHandle[K, N, T]{s: s, ns: ns}
	if h.ns == nil {
		h.ns = new(N)
	}
	var err error
	if h.ttl, err = newTTLPolicy(ttl); err != nil {
		return nil, fmt.Errorf("%w (table %q)", err, name)
	}
	if ec, err = codecOrDefault(ec); err != nil {
		return nil, fmt.Errorf("state: table %q: element: %w", name, err)
	}
	if !ttl.Enabled() {
		if h.plain, err = NewValueTable(s.backend, name, s.keyCodec, nc, codec.List(ec)); err != nil {
			return nil, err
		}
		return h, nil
	}
	if h.timed, err = NewValueTable(s.backend, name, s.keyCodec, nc, codec.List(TimedCodec(ec))); err != nil {
		return nil, err
	}
	s.addCleaner(name, listCleaner[K, N, T]{h.timed, h.ttl})
	return h, nil
}

// Get returns the list of the current key and namespace (nil if empty). The
// caller must not change its elements; appending to it is safe.
func (h *ListHandle[K, N, T]) Get() []T {
	kc := h.s.key
	if h.timed == nil {
		l, _ := h.plain.Get(kc.KG, kc.Key, *h.ns)
		return l[:len(l):len(l)]
	}
	l, ok := h.timed.Get(kc.KG, kc.Key, *h.ns)
	if !ok {
		return nil
	}
	now := h.s.clock()
	kept := unexpired(l, h.ttl, now)
	shown := kept
	if h.ttl.showExpiry {
		shown = l
	}
	out := make([]T, len(shown))
	for i, e := range shown {
		out[i] = e.Value
	}
	switch {
	case len(kept) == 0:
		h.timed.Delete(kc.KG, kc.Key, *h.ns)
	case h.ttl.onRead:
		h.timed.Put(kc.KG, kc.Key, *h.ns, stamp(kept, now))
	case len(kept) < len(l):
		h.timed.Put(kc.KG, kc.Key, *h.ns, kept)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// stamp returns a copy of l with every element stamped with now.
func stamp[T any](l []Timed[T], now int64) []Timed[T] {
	out := make([]Timed[T], len(l))
	for i, e := range l {
		out[i] = Timed[T]{e.Value, now}
	}
	return out
}

// Add appends v to the list of the current key and namespace.
func (h *ListHandle[K, N, T]) Add(v T) { h.AddAll([]T{v}) }

// AddAll appends vs to the list of the current key and namespace.
func (h *ListHandle[K, N, T]) AddAll(vs []T) {
	if len(vs) == 0 {
		return
	}
	h.appendTo(*h.ns, vs)
}

func (h *ListHandle[K, N, T]) appendTo(n N, vs []T) {
	kc := h.s.key
	if h.timed == nil {
		l, _ := h.plain.Get(kc.KG, kc.Key, n)
		h.plain.Put(kc.KG, kc.Key, n, append(l, vs...))
		return
	}
	now := h.s.clock()
	l, _ := h.timed.Get(kc.KG, kc.Key, n)
	l = unexpired(l, h.ttl, now)
	for _, v := range vs {
		l = append(l, Timed[T]{v, now})
	}
	h.timed.Put(kc.KG, kc.Key, n, l)
}

// Update replaces the list of the current key and namespace by a copy of vs;
// an empty vs clears it.
func (h *ListHandle[K, N, T]) Update(vs []T) {
	if len(vs) == 0 {
		h.Clear()
		return
	}
	kc := h.s.key
	if h.timed == nil {
		h.plain.Put(kc.KG, kc.Key, *h.ns, slices.Clone(vs))
		return
	}
	now := h.s.clock()
	l := make([]Timed[T], len(vs))
	for i, v := range vs {
		l[i] = Timed[T]{v, now}
	}
	h.timed.Put(kc.KG, kc.Key, *h.ns, l)
}

// Clear deletes the list of the current key and namespace.
func (h *ListHandle[K, N, T]) Clear() { h.clearAt(*h.ns) }

func (h *ListHandle[K, N, T]) clearAt(n N) {
	kc := h.s.key
	if h.timed == nil {
		h.plain.Delete(kc.KG, kc.Key, n)
		return
	}
	h.timed.Delete(kc.KG, kc.Key, n)
}

// MergeNamespaces appends the lists of the sources namespaces of the current
// key to the list of target and deletes them, as session windows merge.
// Elements keep their time to live.
func (h *ListHandle[K, N, T]) MergeNamespaces(target N, sources ...N) {
	kc := h.s.key
	for _, src := range sources {
		if src == target {
			continue
		}
		if h.timed == nil {
			if l, ok := h.plain.Get(kc.KG, kc.Key, src); ok {
				h.plain.Delete(kc.KG, kc.Key, src)
				h.appendTo(target, l)
			}
			continue
		}
		l, ok := h.timed.Get(kc.KG, kc.Key, src)
		if !ok {
			continue
		}
		h.timed.Delete(kc.KG, kc.Key, src)
		now := h.s.clock()
		if l = unexpired(l, h.ttl, now); len(l) == 0 {
			continue
		}
		t, _ := h.timed.Get(kc.KG, kc.Key, target)
		t = unexpired(t, h.ttl, now)
		h.timed.Put(kc.KG, kc.Key, target, append(t, l...))
	}
}
