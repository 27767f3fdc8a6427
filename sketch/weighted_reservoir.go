package sketch

import (
	"bytes"
	"container/heap"
	"encoding/gob"
	"fmt"
	"math"
)

const weightedReservoirVersion = 1

// WeightedReservoir keeps a weighted random sample of at most k items
// without replacement (Efraimidis and Spirakis 2006). Item i gets the key
// u_i^(1/w_i) with u_i uniform in (0, 1), and the sample is the k items with
// the largest keys (A-Res); it is the same as drawing k items one after
// another with probability proportional to weight among those not yet drawn.
// Updates use the exponential-jumps variant A-ExpJ, which draws one random
// number per sample change instead of one per item. Keys are kept as
// logarithms, ln(u)/w, so tiny weights do not underflow.
//
// Reservoirs of the same capacity merge by keeping the k largest keys of
// both. Serialization encodes the items with encoding/gob, so T must be
// gob-encodable.
type WeightedReservoir[T any] struct {
	k     int
	n     uint64
	total float64
	h     wrHeap[T]
	skip  float64 // weight still to pass before the next replacement
	rng   splitMix64
}

// WeightedItem is one sampled item with its weight.
type WeightedItem[T any] struct {
	Item   T       // the sampled item
	Weight float64 // the weight it was offered with
}

type wrEntry[T any] struct {
	item   T
	weight float64
	key    float64 // ln(u)/w, ≤ 0
}

// wrHeap is a min-heap on key.
type wrHeap[T any] []wrEntry[T]

func (h wrHeap[T]) Len() int           { return len(h) }
func (h wrHeap[T]) Less(i, j int) bool { return h[i].key < h[j].key }
func (h wrHeap[T]) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *wrHeap[T]) Push(x any)        { *h = append(*h, x.(wrEntry[T])) }
func (h *wrHeap[T]) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// NewWeightedReservoir returns an empty weighted reservoir of capacity k
// whose random choices derive from seed. It panics unless k ≥ 1.
func NewWeightedReservoir[T any](k int, seed uint64) *WeightedReservoir[T] {
	if k < 1 {
		panic(fmt.Sprintf("sketch: WeightedReservoir needs capacity k ≥ 1, got %d", k))
	}
	return &WeightedReservoir[T]{k: k, rng: newSplitMix64(seed)}
}

// Add offers item with the given weight. Items with a weight that is not
// positive and finite are ignored.
func (r *WeightedReservoir[T]) Add(item T, weight float64) {
	if !(weight > 0) || math.IsInf(weight, 1) {
		return
	}
	r.n++
	r.total += weight
	if len(r.h) < r.k {
		heap.Push(&r.h, wrEntry[T]{item: item, weight: weight, key: math.Log(r.rng.float64Open()) / weight})
		if len(r.h) == r.k {
			r.drawSkip()
		}
		return
	}
	r.skip -= weight
	if r.skip > 0 {
		return
	}
	// The item enters: its key is uniform on (T_w, 1) raised to 1/w, where
	// T_w = threshold^w.
	lt := r.h[0].key
	tw := math.Exp(weight * lt)
	u := tw + (1-tw)*r.rng.float64Open()
	r.h[0] = wrEntry[T]{item: item, weight: weight, key: math.Log(u) / weight}
	heap.Fix(&r.h, 0)
	r.drawSkip()
}

// drawSkip draws X_w = ln(u)/ln(T_w), the weight to skip before the next
// item enters, where T_w is the smallest key in the full sample.
func (r *WeightedReservoir[T]) drawSkip() {
	lt := r.h[0].key
	if lt >= 0 {
		r.skip = 0
		return
	}
	r.skip = math.Log(r.rng.float64Open()) / lt
}

// Sample returns the sampled items with their weights, in no particular
// order.
func (r *WeightedReservoir[T]) Sample() []WeightedItem[T] {
	out := make([]WeightedItem[T], len(r.h))
	for i, e := range r.h {
		out[i] = WeightedItem[T]{Item: e.item, Weight: e.weight}
	}
	return out
}

// Count returns the number of items offered with a positive weight.
func (r *WeightedReservoir[T]) Count() uint64 { return r.n }

// TotalWeight returns the sum of the weights offered.
func (r *WeightedReservoir[T]) TotalWeight() float64 { return r.total }

// Capacity returns k.
func (r *WeightedReservoir[T]) Capacity() int { return r.k }

// Merge combines other into r: the result keeps the k largest keys of both
// samples, which is a weighted sample of the union of the two streams. Both
// reservoirs need the same capacity; other is not modified.
func (r *WeightedReservoir[T]) Merge(other *WeightedReservoir[T]) error {
	if other == nil || other == r {
		return nil
	}
	if r.k != other.k {
		return fmt.Errorf("%w WeightedReservoir of capacity %d with capacity %d", ErrIncompatible, r.k, other.k)
	}
	if other.n == 0 {
		return nil
	}
	for _, e := range other.h {
		if len(r.h) < r.k {
			heap.Push(&r.h, e)
		} else if e.key > r.h[0].key {
			r.h[0] = e
			heap.Fix(&r.h, 0)
		}
	}
	r.n += other.n
	r.total += other.total
	if len(r.h) == r.k {
		r.drawSkip() // memoryless: a fresh jump is distributed correctly
	}
	return nil
}

// MarshalBinary encodes the reservoir, including its random state; it
// implements encoding.BinaryMarshaler. Items are encoded with encoding/gob.
func (r *WeightedReservoir[T]) MarshalBinary() ([]byte, error) {
	items := make([]T, len(r.h))
	for i, e := range r.h {
		items[i] = e.item
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(items); err != nil {
		return nil, fmt.Errorf("sketch: encode WeightedReservoir items: %w", err)
	}
	e := newEncoder(weightedReservoirVersion, tagWeightedReservoir, 48+16*len(r.h)+buf.Len())
	e.count(r.k)
	e.uvarint(r.n)
	e.f64(r.total)
	e.f64(r.skip)
	e.rng(r.rng)
	e.count(len(r.h))
	for _, x := range r.h {
		e.f64(x.weight)
		e.f64(x.key)
	}
	e.lenBytes(buf.Bytes())
	return e.bytes(), nil
}

// UnmarshalBinary restores a reservoir written by MarshalBinary for the
// same item type; it implements encoding.BinaryUnmarshaler. On error r is
// unchanged.
func (r *WeightedReservoir[T]) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, "WeightedReservoir", weightedReservoirVersion, tagWeightedReservoir)
	k := d.uvarint()
	n := d.uvarint()
	total := d.f64()
	skip := d.f64()
	rng := d.rng()
	count := d.count(16)
	ents := make([]wrEntry[T], count)
	for i := range ents {
		ents[i].weight = d.f64()
		ents[i].key = d.f64()
		if d.err == nil && (!(ents[i].weight > 0) || !(ents[i].key <= 0)) {
			d.fail("entry %d has weight %g and key %g", i, ents[i].weight, ents[i].key)
		}
	}
	blob := d.lenBytes()
	if err := d.finish(); err != nil {
		return err
	}
	if k < 1 || k > 1<<40 || uint64(count) != min(n, k) {
		return fmt.Errorf("%w WeightedReservoir encoding: %d items for capacity %d after %d offers", ErrCorrupt, count, k, n)
	}
	var items []T
	if err := gob.NewDecoder(bytes.NewReader(blob)).Decode(&items); err != nil {
		return fmt.Errorf("%w WeightedReservoir encoding: items: %w", ErrCorrupt, err)
	}
	if len(items) != count {
		return fmt.Errorf("%w WeightedReservoir encoding: declares %d items, holds %d", ErrCorrupt, count, len(items))
	}
	for i := range ents {
		ents[i].item = items[i]
	}
	h := wrHeap[T](ents)
	heap.Init(&h)
	*r = WeightedReservoir[T]{k: int(k), n: n, total: total, skip: skip, h: h, rng: rng}
	return nil
}
