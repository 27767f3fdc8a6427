package plan

import (
	"fmt"
	"math"

	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/sql/types"
)

// DISTINCT aggregate calls in window aggregations.
//
// An unbounded GROUP BY keeps the distinct values of its DISTINCT calls in
// views, state beside the accumulator. A window operator keeps only
// accumulators (one per pane, or per session), which it merges when a
// window spans several panes and when sessions merge; so a window
// aggregation with DISTINCT calls keeps the values in the accumulator: a
// windowAcc is the calls' Acc and, per view the calls would share in a
// GROUP BY (sqlAgg.groups, one per argument), the set of the argument's
// values with the bits of the calls that have counted each. A row adds its
// value to the set and folds it into the words of the calls that see it for
// the first time, as distinctFresh does with a view, so the result is read
// from the words as for any call. Merging two accumulators unions their
// sets and folds each value that is new to a call of x into x's words, so a
// value in two panes of a window, or in two merged sessions, counts once.
//
// Window aggregations read insert-only rows: nothing is taken back.

// windowAcc is the accumulator of a window aggregation with DISTINCT calls.
type windowAcc struct {
	Acc
	// Sets are the distinct values, one set per group of sqlAgg.groups.
	Sets []distinctSet
}

// distinctSet is the distinct values of a group's argument, each with the
// bits of the group's calls that have counted it (values that passed the
// call's FILTER; NULL is never in a set): Words holds them by their word
// (for the types distinctKeyedByWord accepts), Keys by their key encoding.
// Both are nil until the first value.
type distinctSet struct {
	Words map[uint64]uint64
	Keys  map[string]uint64
	// Own says the maps are this accumulator's own, made by a merge, which
	// may change them in place when it merges another accumulator in.
	// Otherwise they may be a pane's, which several windows merge (or a
	// snapshot holds), and a merge copies them first.
	Own bool
}

func (s *distinctSet) len() int { return len(s.Words) + len(s.Keys) }

// clone returns a copy of s that is its own.
func (s *distinctSet) clone() distinctSet {
	out := distinctSet{Own: true}
	if s.Words != nil {
		out.Words = make(map[uint64]uint64, len(s.Words))
		for k, v := range s.Words {
			out.Words[k] = v
		}
	}
	if s.Keys != nil {
		out.Keys = make(map[string]uint64, len(s.Keys))
		for k, v := range s.Keys {
			out.Keys[k] = v
		}
	}
	return out
}

// windowDistinctAgg is the aggregate function of a window aggregation
// with DISTINCT calls, over the rows of insert-only changes. It implements
// agg.Mutating: the window operator folds rows into the accumulators of its
// panes and sessions in place.
type windowDistinctAgg struct {
	f *sqlAgg
	// value holds, for each DISTINCT call whose values are kept by key,
	// the call and its slots over the row of its argument's key (KeyRow of
	// the call's key encoder, the argument in column 0), to fold a value
	// of a set into the call's words; nil for the other calls.
	value      []*aggCall
	valueSlots []aggSlots
}

// newWindowDistinctAgg returns the window aggregate function of f, whose
// calls include DISTINCT ones (len(f.groups) > 0).
func newWindowDistinctAgg(f *sqlAgg) *windowDistinctAgg {
	a := &windowDistinctAgg{f: f, value: make([]*aggCall, len(f.calls)), valueSlots: make([]aggSlots, len(f.calls))}
	for i, c := range f.calls {
		s := f.slots[i]
		if s.bit == 0 || s.intView {
			continue
		}
		vc := *c
		vc.Arg, vc.Filter, vc.Distinct = 0, -1, false
		s.read = wordReader(0, c.ArgType)
		s.view, s.bit = -1, 0
		a.value[i], a.valueSlots[i] = &vc, s
	}
	return a
}

func (a *windowDistinctAgg) Create() windowAcc {
	return windowAcc{Acc: a.f.Create(), Sets: make([]distinctSet, len(a.f.groups))}
}

// fit returns acc with its words and a set per group.
func (a *windowDistinctAgg) fit(acc windowAcc) windowAcc {
	acc.Acc = a.f.fit(acc.Acc)
	if len(acc.Sets) < len(a.f.groups) {
		acc.Sets = append(acc.Sets, make([]distinctSet, len(a.f.groups)-len(acc.Sets))...)
	}
	return acc
}

// Add returns acc with in added, leaving acc as it was.
func (a *windowDistinctAgg) Add(acc windowAcc, in Rec) windowAcc {
	out := windowAcc{Acc: a.f.clone(acc.Acc), Sets: make([]distinctSet, len(acc.Sets))}
	for i := range acc.Sets {
		out.Sets[i] = acc.Sets[i].clone()
	}
	return a.AddInPlace(out, in, nil, 0)
}

// AddInPlace adds in to acc, changing its words and sets (agg.Mutating).
func (a *windowDistinctAgg) AddInPlace(acc windowAcc, in Rec, _ agg.Views, _ int) windowAcc {
	acc = a.fit(acc)
	var buf [4]uint64
	fresh := a.fresh(buf[:0], &acc, in.Row)
	a.f.addFresh(&acc.Acc, in.Row, fresh, nil, 0)
	return acc
}

// RetractInPlace fails: window aggregations read insert-only rows, and the
// sets keep no counts.
func (a *windowDistinctAgg) RetractInPlace(windowAcc, Rec, agg.Views, int) windowAcc {
	panic(fmt.Errorf("%s: a row taken back from a window aggregation, whose input was planned insert-only", a.f.calls[a.f.groups[0].calls[0]].text))
}

// fresh adds the argument of each group of in to the group's set and
// returns, per group, the bits of the calls that see their value for the
// first time (those whose FILTER in passes and that had not counted it).
func (a *windowDistinctAgg) fresh(dst []uint64, acc *windowAcc, in types.Row) []uint64 {
	f := a.f
	for gi := range f.groups {
		g := &f.groups[gi]
		want := f.wantBits(g, in)
		if want == 0 || in.IsNull(g.arg) {
			dst = append(dst, 0)
			continue
		}
		set := &acc.Sets[gi]
		s := &f.slots[g.calls[0]]
		var fresh uint64
		if s.intView {
			word, _ := s.read(in)
			have := set.Words[word]
			if fresh = want &^ have; fresh != 0 {
				if set.Words == nil {
					set.Words = map[uint64]uint64{}
				}
				set.Words[word] = have | fresh
			}
		} else {
			var kb [64]byte
			key := f.keys[g.calls[0]].AppendKey(kb[:0], in)
			have := set.Keys[string(key)]
			if fresh = want &^ have; fresh != 0 {
				if set.Keys == nil {
					set.Keys = map[string]uint64{}
				}
				set.Keys[string(key)] = have | fresh
			}
		}
		dst = append(dst, fresh)
	}
	return dst
}

// Merge returns the combination of x and y: the plain calls merged, each
// group's set the union of theirs, and the words of each DISTINCT call x's
// with the values of y that x's call had not counted folded in. x and y
// are left as they were, but for x's sets that x owns (made by an earlier
// merge), into which y's are merged in place.
func (a *windowDistinctAgg) Merge(x, y windowAcc) windowAcc {
	if len(x.W) == 0 {
		return y
	}
	if len(y.W) == 0 {
		return x
	}
	f := a.f
	x, y = a.fit(x), a.fit(y)
	// The DISTINCT calls of a group that x has values of keep x's words;
	// those of a group x has none of take y's (y's set with them).
	var keepBuf [16]bool
	keep := keepBuf[:0]
	if len(f.calls) > len(keepBuf) {
		keep = make([]bool, 0, len(f.calls))
	}
	for i := range f.calls {
		s := &f.slots[i]
		keep = append(keep, s.bit != 0 && x.Sets[s.group].len() > 0)
	}
	out := windowAcc{Acc: f.merged(x.Acc, y.Acc, keep), Sets: make([]distinctSet, len(f.groups))}
	for gi := range f.groups {
		xs, ys := &x.Sets[gi], &y.Sets[gi]
		switch {
		case xs.len() == 0:
			// y's maps, which this merge does not own: a later merge
			// into out copies them first.
			out.Sets[gi] = *ys
			out.Sets[gi].Own = false
			continue
		case ys.len() == 0:
			out.Sets[gi] = *xs
			continue
		case xs.Own:
			out.Sets[gi] = *xs
		default:
			out.Sets[gi] = xs.clone()
		}
		a.union(gi, &out, ys)
	}
	return out
}

// union adds the values of ys to group gi's set of out, which out owns,
// folding each into the words of the calls that had not counted it.
func (a *windowDistinctAgg) union(gi int, out *windowAcc, ys *distinctSet) {
	f := a.f
	g := &f.groups[gi]
	set := &out.Sets[gi]
	for word, bits := range ys.Words {
		have := set.Words[word]
		fresh := bits &^ have
		if fresh == 0 {
			continue
		}
		if set.Words == nil {
			set.Words = map[uint64]uint64{}
		}
		set.Words[word] = have | fresh
		for _, i := range g.calls {
			if fresh&f.slots[i].bit != 0 {
				a.foldWord(i, &out.Acc, word)
			}
		}
	}
	for key, bits := range ys.Keys {
		have := set.Keys[key]
		fresh := bits &^ have
		if fresh == 0 {
			continue
		}
		if set.Keys == nil {
			set.Keys = map[string]uint64{}
		}
		set.Keys[key] = have | fresh
		for _, i := range g.calls {
			if fresh&f.slots[i].bit != 0 {
				row := f.keys[i].KeyRow(key)
				f.fold(i, a.value[i], &a.valueSlots[i], &out.Acc, row, nil, 0, 1)
			}
		}
	}
}

// foldWord folds the value word, a value of a set kept by word, into the
// words of DISTINCT call i. The calls over such values (integers,
// booleans, dates, times, timestamps) are COUNT, SUM, AVG and the
// variances of integers (MIN and MAX do not keep their values).
func (a *windowDistinctAgg) foldWord(i int, acc *Acc, word uint64) {
	c, s := a.f.calls[i], &a.f.slots[i]
	acc.W[s.w]++
	switch s.kind {
	case kCount:
	case kSumInt, kAvgInt:
		acc.W[s.w+1] += word
	case kVar:
		x := float64(int64(word))
		acc.W[s.w+1] = math.Float64bits(math.Float64frombits(acc.W[s.w+1]) + x)
		acc.W[s.w+2] = math.Float64bits(math.Float64frombits(acc.W[s.w+2]) + x*x)
	default:
		panic(fmt.Errorf("%s: merging the distinct values of a window aggregation: unexpected aggregate kind %d", c.text, s.kind))
	}
}

func (a *windowDistinctAgg) Result(acc windowAcc) string { return a.f.Result(acc.Acc) }
