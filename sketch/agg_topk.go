package sketch

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/eddystream/eddy/agg"
)

const (
	topKVersion      = 1
	tagTopK     byte = 'T'
)

// ItemCount is an item and its estimated count, as TopK reports them.
type ItemCount struct {
	Item  string // the item
	Count uint64 // its estimated count (an overestimate, as Count-Min's)
}

// TopK tracks the most frequent items of a stream approximately: a
// Count-Min sketch estimates the frequency of every item, and a candidate
// set keeps the k items with the largest estimates seen so far. An item
// enters the candidates when its estimate after an addition exceeds the
// smallest candidate's (ties keep the candidate, and the smallest
// candidate with the largest item is evicted), so the result is
// deterministic. TopK sketches with equal parameters merge: the Count-Min
// sketches add up and the union of the candidates is re-estimated and cut
// to k. As with any such scheme, an item whose occurrences are spread
// thinly before it becomes frequent may be missed, and counts are
// Count-Min overestimates.
type TopK struct {
	k    int
	cm   *CountMin
	cand map[string]uint64 // candidate → estimate at its last update
}

// NewTopK returns an empty tracker of the k most frequent items over a
// Count-Min sketch of width × depth counters. It panics unless k ≥ 1 and
// width and depth are positive.
func NewTopK(k, width, depth int, seed uint64) *TopK {
	if k < 1 {
		panic(fmt.Sprintf("sketch: NewTopK k=%d, want ≥ 1", k))
	}
	return &TopK{k: k, cm: NewCountMin(width, depth, seed), cand: make(map[string]uint64, k+1)}
}

// K returns the number of items tracked.
func (t *TopK) K() int { return t.k }

// Sketch returns the Count-Min sketch underneath, to estimate any item's
// count. It must not be changed.
func (t *TopK) Sketch() *CountMin { return t.cm }

// Add counts count occurrences of item.
func (t *TopK) Add(item string, count uint64) {
	if count == 0 {
		return
	}
	t.cm.AddString(item, count)
	est := t.cm.EstimateString(item)
	if _, ok := t.cand[item]; ok || len(t.cand) < t.k {
		t.cand[item] = est
		return
	}
	minItem, minEst := t.smallest()
	if est > minEst {
		delete(t.cand, minItem)
		t.cand[item] = est
	}
}

// smallest returns the candidate to evict: the smallest estimate, and of
// those the largest item.
func (t *TopK) smallest() (string, uint64) {
	var minItem string
	var minEst uint64
	first := true
	for it, e := range t.cand {
		if first || e < minEst || (e == minEst && it > minItem) {
			minItem, minEst, first = it, e, false
		}
	}
	return minItem, minEst
}

// Top returns the candidates with their current estimates, largest first,
// ties by item.
func (t *TopK) Top() []ItemCount {
	out := make([]ItemCount, 0, len(t.cand))
	for it := range t.cand {
		out = append(out, ItemCount{it, t.cm.EstimateString(it)})
	}
	sortItemCounts(out)
	return out
}

func sortItemCounts(s []ItemCount) {
	slices.SortFunc(s, func(a, b ItemCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(a.Item, b.Item)
	})
}

// Merge adds other's counts to t and keeps the k best of both candidate
// sets by the merged estimates. It returns an error wrapping
// ErrIncompatible unless both have the same k and Count-Min shape and seed.
// other is not changed.
func (t *TopK) Merge(other *TopK) error {
	if other == nil {
		return nil
	}
	if t.k != other.k {
		return fmt.Errorf("%w TopK of %d items with %d items", ErrIncompatible, t.k, other.k)
	}
	if other == t {
		return t.cm.Merge(other.cm) // doubles every count; the candidates stay
	}
	if err := t.cm.Merge(other.cm); err != nil {
		return err
	}
	all := make([]ItemCount, 0, len(t.cand)+len(other.cand))
	for it := range t.cand {
		all = append(all, ItemCount{it, t.cm.EstimateString(it)})
	}
	for it := range other.cand {
		if _, ok := t.cand[it]; !ok {
			all = append(all, ItemCount{it, t.cm.EstimateString(it)})
		}
	}
	sortItemCounts(all)
	clear(t.cand)
	for _, ic := range all[:min(t.k, len(all))] {
		t.cand[ic.Item] = ic.Count
	}
	return nil
}

// MarshalBinary encodes the tracker: k, the Count-Min sketch and the
// candidates in item order. It implements encoding.BinaryMarshaler.
func (t *TopK) MarshalBinary() ([]byte, error) {
	cm, err := t.cm.MarshalBinary()
	if err != nil {
		return nil, err
	}
	items := make([]string, 0, len(t.cand))
	for it := range t.cand {
		items = append(items, it)
	}
	slices.Sort(items)
	e := newEncoder(topKVersion, tagTopK, 16+len(cm)+16*len(items))
	e.count(t.k)
	e.lenBytes(cm)
	e.count(len(items))
	for _, it := range items {
		e.lenBytes([]byte(it))
		e.uvarint(t.cand[it])
	}
	return e.bytes(), nil
}

// UnmarshalBinary restores a tracker written by MarshalBinary; it
// implements encoding.BinaryUnmarshaler. On error t is unchanged.
func (t *TopK) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, "TopK", topKVersion, tagTopK)
	k := d.uvarint()
	cmBytes := d.lenBytes()
	if d.err == nil && (k < 1 || k > 1<<31) {
		d.fail("k=%d", k)
	}
	if d.err != nil {
		return d.err
	}
	cm := new(CountMin)
	if err := cm.UnmarshalBinary(cmBytes); err != nil {
		return fmt.Errorf("TopK encoding: %w", err)
	}
	n := d.count(2)
	if d.err == nil && uint64(n) > k {
		d.fail("%d candidates for k=%d", n, k)
	}
	cand := make(map[string]uint64, n)
	prev := ""
	for i := 0; i < n && d.err == nil; i++ {
		it := string(d.lenBytes())
		est := d.uvarint()
		if i > 0 && it <= prev {
			d.fail("candidates out of order at %q", it)
		}
		cand[it], prev = est, it
	}
	if err := d.finish(); err != nil {
		return err
	}
	*t = TopK{k: int(k), cm: cm, cand: cand}
	return nil
}

// TopKAgg returns an aggregate function reporting the (at most) k most
// frequent keys of its inputs with their estimated counts, largest first,
// tracked by a TopK over a Count-Min sketch of width × depth counters. A
// window merges the candidates of its panes, so a key that is among the k
// most frequent of no pane is not reported. It panics on invalid
// parameters.
func TopKAgg[T any](k, width, depth int, seed uint64, key func(T) string) agg.Function[T, *TopK, []ItemCount] {
	proto := NewTopK(k, width, depth, seed)
	return agg.Of(
		func() *TopK { return &TopK{k: k, cm: cloneCountMin(proto.cm), cand: make(map[string]uint64, k+1)} },
		func(acc *TopK, in T) *TopK { acc.Add(key(in), 1); return acc },
		func(a, b *TopK) *TopK { mustMerge("TopK", a.Merge(b)); return a },
		func(acc *TopK) []ItemCount { return acc.Top() },
	)
}
