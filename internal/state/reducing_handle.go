package state

import (
	"errors"

	"github.com/eddystream/eddy/internal/state/codec"
)

// ReducingHandle keeps, per key and namespace, the reduction of the values
// added to it: Flink's ReducingState. The reduction is stored in a value
// table.
type ReducingHandle[K, N comparable, T any] struct {
	c      cell[K, N, T]
	reduce func(a, b T) T
}

// NewReducingHandle declares reducing state called name on s, combining
// values with reduce. ns, nc, vc and ttl are as for NewValueHandle.
func NewReducingHandle[K, N comparable, T any](s *Store[K], ns *N, nc codec.Codec[N], name string, vc codec.Codec[T], reduce func(a, b T) T, ttl TTLConfig) (*ReducingHandle[K, N, T], error) {
	if reduce == nil {
		return nil, errors.New("state: reducing state needs a reduce function")
	}
	c, err := newCell(s, ns, nc, name, vc, ttl)
	if err != nil {
		return nil, err
	}
	return &ReducingHandle[K, N, T]{c, reduce}, nil
}

// Get returns the reduction of the current key and namespace, or ok=false if
// nothing was added.
func (h *ReducingHandle[K, N, T]) Get() (T, bool) { return h.c.get() }

// Add reduces v into the current key and namespace.
func (h *ReducingHandle[K, N, T]) Add(v T) {
	n := *h.c.ns
	if cur, ok := h.c.load(n); ok {
		v = h.reduce(cur, v)
	}
	h.c.store(n, v)
}

// Clear deletes the reduction of the current key and namespace.
func (h *ReducingHandle[K, N, T]) Clear() { h.c.clear(*h.c.ns) }

// MergeNamespaces reduces the values of the sources namespaces of the current
// key into target and deletes them, as session windows merge.
func (h *ReducingHandle[K, N, T]) MergeNamespaces(target N, sources ...N) {
	h.c.merge(target, sources, h.reduce)
}
