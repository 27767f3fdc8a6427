package sketch

import (
	"bytes"
	"encoding/gob"
	"fmt"
)

const reservoirVersion = 1

// Reservoir keeps a uniform random sample of at most k items of a stream of
// unknown length (Vitter's Algorithm R): the first k items fill the sample,
// and item t > k replaces a uniformly chosen slot with probability k/t.
// After n items every item is in the sample with probability min(1, k/n)
// and every k-subset is equally likely.
//
// Two reservoirs of the same capacity merge into a uniform sample of the
// concatenated streams. Serialization encodes the items with encoding/gob,
// so T must be gob-encodable.
type Reservoir[T any] struct {
	k     int
	n     uint64
	items []T
	rng   splitMix64
}

// NewReservoir returns an empty reservoir of capacity k whose random
// choices derive from seed. It panics unless k ≥ 1.
func NewReservoir[T any](k int, seed uint64) *Reservoir[T] {
	if k < 1 {
		panic(fmt.Sprintf("sketch: Reservoir needs capacity k ≥ 1, got %d", k))
	}
	return &Reservoir[T]{k: k, items: make([]T, 0, min(k, 1024)), rng: newSplitMix64(seed)}
}

// Add offers one stream item to the sample.
func (r *Reservoir[T]) Add(item T) {
	r.n++
	if len(r.items) < r.k {
		r.items = append(r.items, item)
		return
	}
	if j := r.rng.intn(r.n); j < uint64(r.k) {
		r.items[j] = item
	}
}

// Sample returns the sampled items. The slice is owned by the reservoir and
// changes with later updates; copy it to keep it.
func (r *Reservoir[T]) Sample() []T { return r.items }

// Count returns n, the number of items offered so far.
func (r *Reservoir[T]) Count() uint64 { return r.n }

// Capacity returns k.
func (r *Reservoir[T]) Capacity() int { return r.k }

// Merge combines other into r so that r becomes a uniform sample of the
// union of both streams: the number of items taken from r's stream follows
// the hypergeometric law of drawing min(k, n_r + n_o) items from n_r + n_o,
// and the items themselves are drawn uniformly from each sample. Both
// reservoirs need the same capacity; other is not modified.
func (r *Reservoir[T]) Merge(other *Reservoir[T]) error {
	if other == nil {
		return nil
	}
	if r.k != other.k {
		return fmt.Errorf("%w Reservoir of capacity %d with capacity %d", ErrIncompatible, r.k, other.k)
	}
	if other.n == 0 {
		return nil
	}
	if other == r {
		c := *other
		c.items = append([]T(nil), other.items...)
		other = &c
	}
	total := r.n + other.n
	take := uint64(r.k)
	if total < take {
		take = total
	}
	// Draw take items without replacement from the two streams; each draw
	// comes from r's stream with probability (remaining in r)/(remaining).
	remR, remO := r.n, other.n
	var fromR uint64
	for i := uint64(0); i < take; i++ {
		if r.rng.intn(remR+remO) < remR {
			fromR++
			remR--
		} else {
			remO--
		}
	}
	fromO := take - fromR
	out := make([]T, 0, take)
	out = append(out, r.pick(r.items, fromR)...)
	out = append(out, r.pick(append([]T(nil), other.items...), fromO)...)
	// Shuffle so that slot positions carry no information about the origin.
	for i := len(out) - 1; i > 0; i-- {
		j := r.rng.intn(uint64(i + 1))
		out[i], out[j] = out[j], out[i]
	}
	r.items, r.n = out, total
	return nil
}

// pick returns c items chosen uniformly without replacement from s, which it
// reorders (partial Fisher–Yates).
func (r *Reservoir[T]) pick(s []T, c uint64) []T {
	for i := uint64(0); i < c; i++ {
		j := i + r.rng.intn(uint64(len(s))-i)
		s[i], s[j] = s[j], s[i]
	}
	return s[:c]
}

// MarshalBinary encodes the reservoir, including its random state; it
// implements encoding.BinaryMarshaler. Items are encoded with encoding/gob.
func (r *Reservoir[T]) MarshalBinary() ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(r.items); err != nil {
		return nil, fmt.Errorf("sketch: encode Reservoir items: %w", err)
	}
	e := newEncoder(reservoirVersion, tagReservoir, 24+buf.Len())
	e.count(r.k)
	e.uvarint(r.n)
	e.rng(r.rng)
	e.count(len(r.items))
	e.lenBytes(buf.Bytes())
	return e.bytes(), nil
}

// UnmarshalBinary restores a reservoir written by MarshalBinary for the same
// item type; it implements encoding.BinaryUnmarshaler. On error r is
// unchanged.
func (r *Reservoir[T]) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, "Reservoir", reservoirVersion, tagReservoir)
	k := d.uvarint()
	n := d.uvarint()
	rng := d.rng()
	count := d.uvarint()
	blob := d.lenBytes()
	if err := d.finish(); err != nil {
		return err
	}
	if k < 1 || k > 1<<40 || count > k || count != min(n, k) {
		return fmt.Errorf("%w Reservoir encoding: %d items for capacity %d after %d offers", ErrCorrupt, count, k, n)
	}
	var items []T
	if err := gob.NewDecoder(bytes.NewReader(blob)).Decode(&items); err != nil {
		return fmt.Errorf("%w Reservoir encoding: items: %w", ErrCorrupt, err)
	}
	if uint64(len(items)) != count {
		return fmt.Errorf("%w Reservoir encoding: declares %d items, holds %d", ErrCorrupt, count, len(items))
	}
	*r = Reservoir[T]{k: int(k), n: n, items: items, rng: rng}
	return nil
}
