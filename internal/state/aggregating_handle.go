package state

import (
	"errors"

	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/internal/state/codec"
)

// AggregatingHandle keeps, per key and namespace, an accumulator of an
// aggregate function: Flink's AggregatingState. The accumulator is stored in
// a value table.
type AggregatingHandle[K, N comparable, IN, ACC, OUT any] struct {
	c cell[K, N, ACC]
	f agg.Function[IN, ACC, OUT]
}

// NewAggregatingHandle declares aggregating state called name on s with the
// aggregate function f. accc encodes accumulators (nil means codec.Default);
// ns, nc and ttl are as for NewValueHandle.
func NewAggregatingHandle[K, N comparable, IN, ACC, OUT any](s *Store[K], ns *N, nc codec.Codec[N], name string, f agg.Function[IN, ACC, OUT], accc codec.Codec[ACC], ttl TTLConfig) (*AggregatingHandle[K, N, IN, ACC, OUT], error) {
	if f == nil {
		return nil, errors.New("state: aggregating state needs an aggregate function")
	}
	c, err := newCell(s, ns, nc, name, accc, ttl)
	if err != nil {
		return nil, err
	}
	return &AggregatingHandle[K, N, IN, ACC, OUT]{c, f}, nil
}

// Get returns the result for the current key and namespace, or ok=false if
// nothing was added.
func (h *AggregatingHandle[K, N, IN, ACC, OUT]) Get() (OUT, bool) {
	acc, ok := h.c.get()
	if !ok {
		var zero OUT
		return zero, false
	}
	return h.f.Result(acc), true
}

// Add adds in to the accumulator of the current key and namespace.
func (h *AggregatingHandle[K, N, IN, ACC, OUT]) Add(in IN) {
	n := *h.c.ns
	acc, ok := h.c.load(n)
	if !ok {
		acc = h.f.Create()
	}
	h.c.store(n, h.f.Add(acc, in))
}

// Clear deletes the accumulator of the current key and namespace.
func (h *AggregatingHandle[K, N, IN, ACC, OUT]) Clear() { h.c.clear(*h.c.ns) }

// MergeNamespaces merges the accumulators of the sources namespaces of the
// current key into target and deletes them, as session windows merge.
func (h *AggregatingHandle[K, N, IN, ACC, OUT]) MergeNamespaces(target N, sources ...N) {
	h.c.merge(target, sources, h.f.Merge)
}
