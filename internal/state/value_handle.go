package state

import "github.com/eddystream/eddy/internal/state/codec"

// ValueHandle is a single value per key and namespace: Flink's ValueState.
// It reads the store's current key and the namespace *ns at each call.
type ValueHandle[K, N comparable, T any] struct {
	c cell[K, N, T]
}

// NewValueHandle declares value state called name on s. ns points at the
// current namespace, which the caller may change between calls (nil means
// the zero namespace, as for VoidNamespace). Nil codecs mean codec.Default.
// It returns an error if a codec is missing, ttl is invalid, or name is
// declared with other types.
func NewValueHandle[K, N comparable, T any](s *Store[K], ns *N, nc codec.Codec[N], name string, vc codec.Codec[T], ttl TTLConfig) (*ValueHandle[K, N, T], error) {
	c, err := newCell(s, ns, nc, name, vc, ttl)
	if err != nil {
		return nil, err
	}
	return &ValueHandle[K, N, T]{c}, nil
}

// Value returns the value of the current key and namespace, or ok=false.
func (h *ValueHandle[K, N, T]) Value() (T, bool) { return h.c.get() }

// Update sets the value of the current key and namespace.
func (h *ValueHandle[K, N, T]) Update(v T) { h.c.store(*h.c.ns, v) }

// Clear deletes the value of the current key and namespace.
func (h *ValueHandle[K, N, T]) Clear() { h.c.clear(*h.c.ns) }
