package plan

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// aggCall is an aggregate call of a query, over the columns of the row the
// aggregation reads (the pre-projection: group keys, then arguments and
// FILTER conditions).
type aggCall struct {
	Name     string // upper case: COUNT, SUM, AVG, MIN, MAX, VAR_POP, ...
	Star     bool   // COUNT(*)
	Distinct bool
	Arg      int // column of the argument, -1 for none
	Filter   int // column of the FILTER condition, -1 for none
	ArgType  types.Type
	T        types.Type // the result's type
	// Params are the constant arguments after the first, of the calls
	// that take them (aggfuncs_approx.go).
	Params []float64
	// Sep is LISTAGG's separator; IgnoreNulls is ARRAY_AGG's IGNORE NULLS
	// (aggfuncs_value.go).
	Sep         string
	IgnoreNulls bool
	text        string // the call as SQL, for plans
}

func (c *aggCall) String() string { return c.text }

// aggKind is how an aggregate call accumulates.
type aggKind uint8

const (
	kCount aggKind = iota
	kSumInt
	kSumFloat
	kSumDec
	kAvgInt
	kAvgFloat
	kAvgDec
	kMinMaxInt
	kMinMaxFloat
	kMinMaxStr
	kMinMaxDec
	kMinMaxTS
	kVar
	kHLL // APPROX_COUNT_DISTINCT (aggfuncs_approx.go)
	kKLL // APPROX_PERCENTILE (aggfuncs_approx.go)
	// The aggregates of values (aggfuncs_value.go).
	kFirst      // FIRST_VALUE
	kLast       // LAST_VALUE
	kListAgg    // LISTAGG
	kArray      // ARRAY_AGG
	kCollect    // COLLECT
	kJSONArray  // JSON_ARRAYAGG
	kJSONObject // JSON_OBJECTAGG
)

// aggSlots is the place of one call in the accumulator.
type aggSlots struct {
	kind aggKind
	max  bool // for MIN/MAX
	w    int  // first word in Acc.W: the count, then the value words
	d    int  // slot in Acc.D, -1 if none
	s    int  // slot in Acc.S, -1 if none
	view int  // first view, -1 if none
	// bit, for a DISTINCT call over an insert-only input, is the call's
	// bit in the view it shares with the other DISTINCT calls of its
	// argument (see distinctGroup); 0 for a view of its own.
	bit uint64
	// group is the index of that shared view in sqlAgg.groups.
	group int
	// intView says the DISTINCT view is keyed by the argument's word
	// (integers, booleans, dates, times, timestamps of precision <= 3)
	// rather than by its key encoding.
	intView bool
	sum0    bool                                  // SUM0: 0, not NULL, for no values
	x       int                                   // slot in Acc.Syn, for kHLL and kKLL
	read    func(types.Row) (v uint64, null bool) // the argument as a word
}

// Acc is the accumulator of a SQL aggregation: per call a count of the
// values folded in and its value words (integers, float bits), decimals
// and strings. Add and Retract return a new accumulator: the old one may be
// in a snapshot. The synopses in Syn are the exception: they change in
// place (see aggfuncs_approx.go).
type Acc struct {
	W   []uint64
	D   []types.Decimal
	S   []string
	Syn []Synopsis
}

// sqlAgg aggregates the calls of one GROUP BY (or window) over the
// pre-projected rows; its result is the encoding of the row of the calls'
// results (a types.Row of resultType). It holds no state that subtasks
// share while running, other than a pool of writers.
type sqlAgg struct {
	calls   []*aggCall
	slots   []aggSlots
	words   int
	decs    int
	strs    int
	views   int
	syns    int
	retract bool
	rt      *types.RowType // the results' row type
	pre     *types.RowType // the input's row type
	pool    sync.Pool      // *types.RowWriter of rt
	keys    []*types.KeyEncoder
	// groups are the views that DISTINCT calls over an insert-only input
	// share, one per argument: each value's entry holds the bits of the
	// calls that have counted it, so that a row costs one lookup per
	// argument (not per call), and a write only when a call sees the
	// value for the first time — Flink's distinct views with FILTER do
	// the same.
	groups []distinctGroup
	// touch makes a row rewrite the shared view entry of a value it does
	// not add to, so that the entry lives as long as the group's state
	// time-to-live counts from its last write (table.exec.state.ttl).
	touch bool
	// mayKeep tells that a row may leave every call's result as it is
	// (see KeepsResult).
	mayKeep bool
}

// distinctGroup is a view shared by DISTINCT calls of one argument.
type distinctGroup struct {
	arg   int   // the argument's column
	view  int   // the view
	calls []int // the calls, in bit order
	// legacy are the views the calls kept each in plans that gave every
	// call a view of its own (see placeSharedViews), in bit order; nil
	// for a group of one call, whose view is its own.
	legacy []int
	// intView, read and key are those of the calls (aggSlots.intView,
	// read; sqlAgg.keys): how a value is looked up.
	intView bool
	read    func(types.Row) (uint64, bool)
	key     *types.KeyEncoder
}

// maxGroupCalls is the number of calls a shared view holds: their bits
// make a positive count.
const maxGroupCalls = 62

// distinctKeyedByWord reports whether DISTINCT values of type t are kept
// by their word (see wordReader), whose equality is the values'.
func distinctKeyedByWord(t types.Type) bool {
	switch expr.ClassOf(t) {
	case expr.ClassInt, expr.ClassBool:
		return true
	case expr.ClassTimestamp:
		return t.Precision() <= 3
	}
	return false
}

// newSQLAgg prepares the calls over rows of type pre. retract says whether
// the input retracts rows (MIN, MAX and DISTINCT then keep views).
func newSQLAgg(calls []*aggCall, pre *types.RowType, retract bool) (*sqlAgg, error) {
	a := &sqlAgg{calls: calls, pre: pre, retract: retract}
	fs := make([]types.Field, len(calls))
	for i, c := range calls {
		fs[i] = types.F(fmt.Sprintf("a%d", i), c.T)
		s := aggSlots{w: a.words, d: -1, s: -1, view: -1}
		a.words++ // the count
		class := expr.ClassOf(c.ArgType)
		switch c.Name {
		case "COUNT":
			s.kind = kCount
		case "SUM", "SUM0", "AVG":
			avg := c.Name == "AVG"
			s.sum0 = c.Name == "SUM0"
			switch class {
			case expr.ClassInt:
				s.kind = kSumInt
				if avg {
					s.kind = kAvgInt
				}
				a.words++
			case expr.ClassFloat:
				s.kind = kSumFloat
				if avg {
					s.kind = kAvgFloat
				}
				a.words++
			case expr.ClassDecimal:
				s.kind = kSumDec
				if avg {
					s.kind = kAvgDec
				}
				s.d = a.decs
				a.decs++
			default:
				return nil, fmt.Errorf("%s takes a number, not %s", c.Name, c.ArgType)
			}
		case "MIN", "MAX":
			s.max = c.Name == "MAX"
			switch {
			case class == expr.ClassInt || class == expr.ClassBool:
				s.kind = kMinMaxInt
				a.words++
			case class == expr.ClassFloat:
				s.kind = kMinMaxFloat
				a.words++
			case class == expr.ClassString:
				s.kind = kMinMaxStr
				s.s = a.strs
				a.strs++
			case class == expr.ClassDecimal:
				s.kind = kMinMaxDec
				s.d = a.decs
				a.decs++
			case class == expr.ClassTimestamp && c.ArgType.Precision() <= 3:
				s.kind = kMinMaxTS
				a.words++
			default:
				return nil, fmt.Errorf("%s of %s is not supported", c.Name, c.ArgType)
			}
			if retract {
				s.view = a.views
				a.views++
			}
		case "VAR_POP", "VAR_SAMP", "STDDEV_POP", "STDDEV_SAMP", "VARIANCE", "STDDEV":
			if class != expr.ClassInt && class != expr.ClassFloat && class != expr.ClassDecimal {
				return nil, fmt.Errorf("%s takes a number, not %s", c.Name, c.ArgType)
			}
			s.kind = kVar
			a.words += 2 // sum, sum of squares (float bits)
		case "APPROX_COUNT_DISTINCT", "APPROX_PERCENTILE":
			if err := a.approxSlots(c, &s, retract); err != nil {
				return nil, err
			}
		case "FIRST_VALUE", "LAST_VALUE", "LISTAGG", "ARRAY_AGG", "COLLECT", "JSON_ARRAYAGG", "JSON_OBJECTAGG":
			a.valueSlots(c, &s, retract)
		default:
			return nil, fmt.Errorf("aggregate %s is not supported", c.Name)
		}
		if c.Distinct {
			s.view = a.views
			a.views++
			if s.kind == kMinMaxInt || s.kind == kMinMaxFloat || s.kind == kMinMaxStr || s.kind == kMinMaxTS || s.kind == kMinMaxDec && retract {
				// DISTINCT does not change MIN and MAX; their own view
				// serves. (An insert-only MIN or MAX of DECIMALs keeps
				// its DISTINCT view, as the plans of older versions do.)
				s.view--
				a.views--
				c.Distinct = false
				if !retract {
					s.view = -1
				}
			}
		}
		if c.Arg >= 0 {
			s.read = wordReader(c.Arg, c.ArgType)
		}
		if c.Distinct {
			s.intView = distinctKeyedByWord(c.ArgType)
			if !retract {
				// The call shares its argument's view; the view it
				// reserved (s.view) is its own in the layout of older
				// plans (see placeSharedViews).
				a.shareView(len(a.slots), c.Arg, &s)
			}
		}
		a.slots = append(a.slots, s)
		var key *types.KeyEncoder // of the argument, for DISTINCT
		if c.Arg >= 0 {
			key = types.NewKeyEncoder(pre, c.Arg)
		}
		a.keys = append(a.keys, key)
	}
	a.placeSharedViews()
	a.mayKeep = a.canKeep()
	a.rt = types.MustRowType(fs...)
	a.pool.New = func() any { return types.NewRowWriter(a.rt, types.NewArena(1024)) }
	return a, nil
}

// shareView places DISTINCT call i, of argument arg, in the shared view
// of that argument, which it opens if there is none or it is full; the
// views are numbered by placeSharedViews.
func (a *sqlAgg) shareView(i, arg int, s *aggSlots) {
	g := -1
	for j := range a.groups {
		if a.groups[j].arg == arg && len(a.groups[j].calls) < maxGroupCalls {
			g = j
		}
	}
	if g < 0 {
		g = len(a.groups)
		a.groups = append(a.groups, distinctGroup{arg: arg, intView: s.intView, read: wordReader(arg, a.pre.FieldType(arg)), key: types.NewKeyEncoder(a.pre, arg)})
	}
	s.group = g
	s.bit = 1 << len(a.groups[g].calls)
	a.groups[g].calls = append(a.groups[g].calls, i)
}

// placeSharedViews numbers the shared views. Plans before the planner
// gave the DISTINCT calls of one argument one column of the
// pre-projection kept a view per DISTINCT call, numbered in call order
// among the views of the other calls, holding bit 1 per value: each call
// reserves that view number still (s.view). A group of one call keeps
// it, so that its state is as it was; a group of several takes a view
// after all the others, and keeps the views its calls reserved as its
// legacy views, which hold values only if the job was restored from a
// snapshot of an older plan (see legacyBits).
func (a *sqlAgg) placeSharedViews() {
	for gi := range a.groups {
		g := &a.groups[gi]
		if len(g.calls) == 1 {
			g.view = a.slots[g.calls[0]].view
			continue
		}
		g.legacy = make([]int, len(g.calls))
		for k, i := range g.calls {
			g.legacy[k] = a.slots[i].view
		}
		g.view = a.views
		a.views++
		for _, i := range g.calls {
			a.slots[i].view = g.view
		}
	}
}

// wordReader reads column i of type t as a word: an integer, the float
// bits, a timestamp's milliseconds, a boolean as 0/1.
func wordReader(i int, t types.Type) func(types.Row) (uint64, bool) {
	switch expr.ClassOf(t) {
	case expr.ClassFloat:
		if t.Kind() == types.KindFloat {
			return func(r types.Row) (uint64, bool) { return math.Float64bits(float64(r.Float32(i))), r.IsNull(i) }
		}
		return func(r types.Row) (uint64, bool) { return math.Float64bits(r.Float64(i)), r.IsNull(i) }
	case expr.ClassTimestamp:
		return func(r types.Row) (uint64, bool) { return uint64(r.TimestampMillis(i)), r.IsNull(i) }
	case expr.ClassBool:
		return func(r types.Row) (uint64, bool) {
			if r.Bool(i) {
				return 1, r.IsNull(i)
			}
			return 0, r.IsNull(i)
		}
	case expr.ClassInt:
		if t.Kind() == types.KindDate {
			return func(r types.Row) (uint64, bool) { return uint64(int64(r.Date(i))), r.IsNull(i) }
		}
		if t.Kind() == types.KindTime {
			return func(r types.Row) (uint64, bool) { return uint64(int64(r.Time(i))), r.IsNull(i) }
		}
		return func(r types.Row) (uint64, bool) { return uint64(r.Int64(i)), r.IsNull(i) }
	}
	return func(r types.Row) (uint64, bool) { return 0, r.IsNull(i) }
}

func (a *sqlAgg) Create() Acc {
	acc := Acc{W: make([]uint64, a.words), D: make([]types.Decimal, a.decs), S: make([]string, a.strs)}
	if a.syns > 0 {
		acc.Syn = make([]Synopsis, a.syns)
	}
	return acc
}

func (a *sqlAgg) NumViews() int { return a.views }

// clone returns a copy of acc that Add and Retract may change.
func (a *sqlAgg) clone(acc Acc) Acc {
	out := Acc{W: make([]uint64, len(acc.W))}
	copy(out.W, acc.W)
	if len(acc.D) > 0 {
		out.D = append([]types.Decimal(nil), acc.D...)
	}
	if len(acc.S) > 0 {
		out.S = append([]string(nil), acc.S...)
	}
	out.Syn = acc.Syn // synopses change in place
	if out.W == nil || len(out.W) < a.words {
		out.W = append(out.W, make([]uint64, a.words-len(out.W))...)
	}
	return out
}

func (a *sqlAgg) Add(acc Acc, in types.Row) Acc { return a.AddWith(acc, in, nil, 0) }

// Retract takes in back out of acc, for aggregations without views.
func (a *sqlAgg) Retract(acc Acc, in types.Row) Acc { return a.RetractWith(acc, in, nil, 0) }

// Merge combines two accumulators; see merged.
func (a *sqlAgg) Merge(x, y Acc) Acc { return a.merged(x, y, nil) }

func (a *sqlAgg) Result(acc Acc) string {
	w := a.pool.Get().(*types.RowWriter)
	defer a.pool.Put(w)
	w.Reset()
	a.writeResult(acc, w, 0)
	return w.Encoded()
}

// groupRows makes the result rows of an unbounded GROUP BY keyed by keys
// of type K: the group key's columns, which setKey writes, then the calls'
// results, written in one step in the chunks of arenas. The group
// aggregation keeps no result but the last row it emitted, so a chunk
// lives as long as the rows written in it are read.
type groupRows[K comparable] struct {
	fn      *sqlAgg
	keys    int
	setKey  func(K, *types.RowWriter)
	writers sync.Pool // *types.RowWriter of the output rows, over an arena of its own
}

// newGroupRows returns the groupRows of rows of rt whose first keys
// columns are the key.
func newGroupRows[K comparable](fn *sqlAgg, keys int, setKey func(K, *types.RowWriter), rt *types.RowType) *groupRows[K] {
	r := &groupRows[K]{fn: fn, keys: keys, setKey: setKey}
	r.writers.New = func() any { return types.NewRowWriter(rt, types.NewArena(0)) }
	return r
}

// row returns the row of a group: its key's columns, then its results.
func (r *groupRows[K]) row(key K, acc Acc) types.Row {
	w := r.writers.Get().(*types.RowWriter)
	w.Reset()
	r.setKey(key, w)
	r.fn.writeResult(acc, w, r.keys)
	row := w.Finish()
	r.writers.Put(w)
	return row
}

func (a *sqlAgg) AddWith(acc Acc, in types.Row, v agg.Views, first int) Acc {
	return a.AddInPlace(a.clone(acc), in, v, first)
}

func (a *sqlAgg) RetractWith(acc Acc, in types.Row, v agg.Views, first int) Acc {
	return a.RetractInPlace(a.clone(acc), in, v, first)
}

// AddInPlace adds in to acc by changing it (agg.Mutating): the group
// aggregation calls it with the accumulator it read from its state.
func (a *sqlAgg) AddInPlace(acc Acc, in types.Row, v agg.Views, first int) Acc {
	acc = a.fit(acc)
	var buf [4]uint64
	fresh := a.distinctFresh(buf[:0], in, v, first)
	a.addFresh(&acc, in, fresh, v, first)
	return acc
}

// addFresh folds in into acc for every call, the DISTINCT calls of shared
// views (or sets, in window aggregations) only where fresh, the bits per
// group of the calls that see their value for the first time, has theirs.
func (a *sqlAgg) addFresh(acc *Acc, in types.Row, fresh []uint64, v agg.Views, first int) {
	for i, c := range a.calls {
		s := &a.slots[i]
		if s.bit != 0 && fresh[s.group]&s.bit == 0 {
			continue // a value the call has counted, or a row it filters out
		}
		a.fold(i, c, s, acc, in, v, first, 1)
	}
}

// RetractInPlace takes in out of acc by changing it (agg.Mutating).
func (a *sqlAgg) RetractInPlace(acc Acc, in types.Row, v agg.Views, first int) Acc {
	if len(a.groups) > 0 {
		// Shared views keep no counts: the input was planned insert-only.
		panic(fmt.Errorf("%s: a row taken back from an aggregation whose input was planned insert-only", a.calls[a.groups[0].calls[0]].text))
	}
	acc = a.fit(acc)
	for i, c := range a.calls {
		a.fold(i, c, &a.slots[i], &acc, in, v, first, -1)
	}
	return acc
}

// fit returns acc with as many words as the calls take: an accumulator
// restored from a savepoint of an older plan may have fewer.
func (a *sqlAgg) fit(acc Acc) Acc {
	if len(acc.W) < a.words {
		acc.W = append(acc.W, make([]uint64, a.words-len(acc.W))...)
	}
	return acc
}

// wantBits returns the bits of the calls of shared view g whose FILTER
// passes for in (all of them for calls without one).
func (a *sqlAgg) wantBits(g *distinctGroup, in types.Row) uint64 {
	var want uint64
	for _, i := range g.calls {
		c := a.calls[i]
		if c.Filter >= 0 && (in.IsNull(c.Filter) || !in.Bool(c.Filter)) {
			continue
		}
		want |= a.slots[i].bit
	}
	return want
}

// intMarker is what views of integers may offer DISTINCT calls sharing
// a view: MarkInt adds bits to a value's entry (a set of flags) with one
// read, and a write only when the entry grows, and returns the bits the
// entry had.
type intMarker interface {
	MarkInt(view int, value int64, bits int64) (before int64)
}

// restoredViews is what views may tell about where their state comes
// from: Restored reports whether the operator restored it from a
// snapshot. Views that do not tell may have been restored.
type restoredViews interface {
	Restored() bool
}

// distinctFresh looks up the argument of each shared DISTINCT view in its
// view and returns, per view, the bits of the calls that see their value
// for the first time in in (and adds those bits to the value's entry).
func (a *sqlAgg) distinctFresh(dst []uint64, in types.Row, v agg.Views, first int) []uint64 {
	m, marks := v.(intMarker)
	marks = marks && !a.touch
	restored := true
	if r, ok := v.(restoredViews); ok {
		restored = r.Restored()
	}
	for gi := range a.groups {
		g := &a.groups[gi]
		want := a.wantBits(g, in)
		if want == 0 || in.IsNull(g.arg) {
			dst = append(dst, 0)
			continue
		}
		view := first + g.view
		legacy := restored && g.legacy != nil
		var have uint64
		var key string
		var word uint64
		if g.intView {
			word, _ = g.read(in)
			if marks {
				have = uint64(m.MarkInt(view, int64(word), int64(want)))
				if have == 0 && legacy {
					if old := a.legacyBits(g, v, first, word, ""); old != 0 {
						m.MarkInt(view, int64(word), int64(old))
						have = old
					}
				}
				dst = append(dst, want&^have)
				continue
			}
			have = uint64(v.CountInt(view, int64(word)))
		} else {
			key = g.key.Key(in)
			have = uint64(v.Count(view, key))
		}
		var old uint64
		if have == 0 && legacy {
			old = a.legacyBits(g, v, first, word, key)
			have = old
		}
		fresh := want &^ have
		if add := fresh | old; add != 0 || a.touch {
			if g.intView {
				v.AddInt(view, int64(word), int64(add))
			} else {
				v.Add(view, key, int64(add))
			}
		}
		dst = append(dst, fresh)
	}
	return dst
}

// legacyBits returns the bits of the calls of g whose legacy views (those
// of older plans, see placeSharedViews) hold the value (word for a view
// of integers, else key), and takes it out of them: the caller adds the
// bits to the value's entry in the shared view, which is then the only
// one to hold it.
func (a *sqlAgg) legacyBits(g *distinctGroup, v agg.Views, first int, word uint64, key string) uint64 {
	var bits uint64
	for k, i := range g.calls {
		view := first + g.legacy[k]
		if g.intView {
			if n := v.CountInt(view, int64(word)); n > 0 {
				bits |= a.slots[i].bit
				v.AddInt(view, int64(word), -n)
			}
			continue
		}
		if n := v.Count(view, key); n > 0 {
			bits |= a.slots[i].bit
			v.Add(view, key, -n)
		}
	}
	return bits
}

// fold adds (sign 1) or retracts (sign -1) one input row of call c.
func (a *sqlAgg) fold(i int, c *aggCall, s *aggSlots, acc *Acc, in types.Row, v agg.Views, first int, sign int64) {
	if c.Filter >= 0 && (in.IsNull(c.Filter) || !in.Bool(c.Filter)) {
		return
	}
	if c.Star {
		acc.W[s.w] += uint64(sign)
		return
	}
	if in.IsNull(c.Arg) && (s.kind != kArray || c.IgnoreNulls) {
		return
	}
	if c.Distinct && s.bit == 0 {
		var before, after int64
		if s.intView {
			x, _ := s.read(in)
			before, after = v.AddInt(first+s.view, int64(x), sign)
		} else {
			before, after = v.Add(first+s.view, a.keys[i].Key(in), sign)
		}
		if sign > 0 && before > 0 || sign < 0 && after > 0 {
			return // the value was, and stays, in the group
		}
	}
	acc.W[s.w] += uint64(sign)
	switch s.kind {
	case kCount:
	case kSumInt, kAvgInt:
		x, _ := s.read(in)
		acc.W[s.w+1] += uint64(sign) * x
	case kSumFloat, kAvgFloat:
		x, _ := s.read(in)
		acc.W[s.w+1] = math.Float64bits(math.Float64frombits(acc.W[s.w+1]) + float64(sign)*math.Float64frombits(x))
	case kSumDec, kAvgDec:
		d := in.Decimal(c.Arg, c.ArgType.Precision(), c.ArgType.Scale())
		if sign < 0 {
			d = d.Neg()
		}
		sum, err := acc.D[s.d].Add(d, types.MaxDecimalPrecision, c.ArgType.Scale())
		if err != nil {
			panic(&expr.Error{Expr: c.text, Err: err})
		}
		acc.D[s.d] = sum
	case kVar:
		x := a.float(c, in)
		f := float64(sign)
		acc.W[s.w+1] = math.Float64bits(math.Float64frombits(acc.W[s.w+1]) + f*x)
		acc.W[s.w+2] = math.Float64bits(math.Float64frombits(acc.W[s.w+2]) + f*x*x)
	case kMinMaxInt, kMinMaxTS, kMinMaxFloat:
		x, _ := s.read(in)
		a.extremumWord(c, s, acc, x, v, first, sign)
	case kHLL, kKLL:
		a.foldApprox(i, c, s, acc, in, sign)
	case kFirst, kLast, kListAgg, kArray, kCollect, kJSONArray, kJSONObject:
		acc.W[s.w] -= uint64(sign) // the fold counts the values it keeps
		a.foldValue(i, c, s, acc, in, v, first, sign)
	case kMinMaxStr:
		x := in.String(c.Arg)
		if s.view >= 0 {
			_, after := v.Add(first+s.view, x, sign)
			if sign < 0 {
				if after == 0 && acc.S[s.s] == x {
					// The closure writes through a copy of the slice
					// header, so that acc stays off the heap.
					strs := acc.S
					strs[s.s] = ""
					v.Range(first+s.view, func(val string, n int64) bool {
						strs[s.s] = val
						return s.max // the last value for MAX, the first for MIN
					})
				}
				return
			}
		}
		if acc.W[s.w] == 1 || (s.max && x > acc.S[s.s]) || (!s.max && x < acc.S[s.s]) {
			acc.S[s.s] = strings.Clone(x)
		}
	case kMinMaxDec:
		d := in.Decimal(c.Arg, c.ArgType.Precision(), c.ArgType.Scale())
		if a.retract && s.view >= 0 && a.decimalView(c, s, acc, d, v, first, sign) {
			return
		}
		if acc.W[s.w] == 1 || (s.max && d.Cmp(acc.D[s.d]) > 0) || (!s.max && d.Cmp(acc.D[s.d]) < 0) {
			acc.D[s.d] = d
		}
	}
}

// extremumWord folds a MIN or MAX of integer, timestamp or float words:
// acc.W[s.w] counts the values in the group, acc.W[s.w+1] is the extremum;
// when the input retracts, the view holds the values, to find the next
// extremum when the current one leaves.
func (a *sqlAgg) extremumWord(c *aggCall, s *aggSlots, acc *Acc, x uint64, v agg.Views, first int, sign int64) {
	less := func(p, q uint64) bool { return int64(p) < int64(q) }
	if s.kind == kMinMaxFloat {
		less = func(p, q uint64) bool { return math.Float64frombits(p) < math.Float64frombits(q) }
	}
	if s.view >= 0 {
		key := int64(x)
		if s.kind == kMinMaxFloat {
			key = floatOrder(math.Float64frombits(x))
		}
		_, after := v.AddInt(first+s.view, key, sign)
		if sign < 0 {
			if after == 0 && acc.W[s.w+1] == x {
				words := acc.W // a copy of the header: acc stays off the heap
				v.RangeInt(first+s.view, func(val int64, n int64) bool {
					if s.kind == kMinMaxFloat {
						words[s.w+1] = math.Float64bits(floatFromOrder(val))
					} else {
						words[s.w+1] = uint64(val)
					}
					return s.max // the last value for MAX, the first for MIN
				})
			}
			return
		}
	}
	if acc.W[s.w] == 1 || (s.max && less(acc.W[s.w+1], x)) || (!s.max && less(x, acc.W[s.w+1])) {
		acc.W[s.w+1] = x
	}
}

// floatOrder maps a float to an int64 of the same order.
func floatOrder(f float64) int64 {
	b := int64(math.Float64bits(f))
	if b < 0 {
		b ^= math.MaxInt64
	}
	return b
}

func floatFromOrder(v int64) float64 {
	if v < 0 {
		v ^= math.MaxInt64
	}
	return math.Float64frombits(uint64(v))
}

// float reads the argument of c as a float64.
func (a *sqlAgg) float(c *aggCall, in types.Row) float64 {
	switch expr.ClassOf(c.ArgType) {
	case expr.ClassFloat:
		if c.ArgType.Kind() == types.KindFloat {
			return float64(in.Float32(c.Arg))
		}
		return in.Float64(c.Arg)
	case expr.ClassDecimal:
		return in.Decimal(c.Arg, c.ArgType.Precision(), c.ArgType.Scale()).Float64()
	}
	return float64(in.Int64(c.Arg))
}

// result writes the result of call k into field i.
func (a *sqlAgg) result(k int, acc Acc, w *types.RowWriter, i int) {
	c, s := a.calls[k], &a.slots[k]
	switch s.kind {
	case kHLL, kKLL:
		a.resultApprox(c, s, acc, w, i)
		return
	case kFirst, kLast, kListAgg, kArray, kCollect, kJSONArray, kJSONObject:
		a.resultValue(k, i, c, s, acc, w)
		return
	}
	n := int64(acc.W[s.w])
	if s.kind == kCount {
		w.SetInt64(i, n)
		return
	}
	if n <= 0 && !s.sum0 {
		w.SetNull(i)
		return
	}
	switch s.kind {
	case kSumInt:
		w.SetInt64(i, int64(acc.W[s.w+1]))
	case kSumFloat:
		setFloat(w, i, c.T, math.Float64frombits(acc.W[s.w+1]))
	case kSumDec:
		d, err := acc.D[s.d].Fit(c.T.Precision(), c.T.Scale())
		if err == nil {
			err = w.SetDecimal(i, d)
		}
		if err != nil {
			panic(&expr.Error{Expr: c.text, Err: err})
		}
	case kAvgInt:
		// AVG of integers is an integer, as in Flink.
		w.SetInt64(i, int64(acc.W[s.w+1])/n)
	case kAvgFloat:
		setFloat(w, i, c.T, math.Float64frombits(acc.W[s.w+1])/float64(n))
	case kAvgDec:
		d, err := acc.D[s.d].Div(types.DecimalFromInt64(n), c.T.Precision(), c.T.Scale())
		if err == nil {
			err = w.SetDecimal(i, d)
		}
		if err != nil {
			panic(&expr.Error{Expr: c.text, Err: err})
		}
	case kVar:
		sum, sq := math.Float64frombits(acc.W[s.w+1]), math.Float64frombits(acc.W[s.w+2])
		nf := float64(n)
		den := nf
		if strings.HasSuffix(c.Name, "SAMP") || c.Name == "VARIANCE" || c.Name == "STDDEV" {
			den = nf - 1
		}
		if den <= 0 {
			w.SetNull(i)
			return
		}
		v := (sq - sum*sum/nf) / den
		if v < 0 {
			v = 0
		}
		if strings.HasPrefix(c.Name, "STDDEV") {
			v = math.Sqrt(v)
		}
		setFloat(w, i, c.T, v)
	case kMinMaxInt, kMinMaxTS:
		x := acc.W[s.w+1]
		switch {
		case c.T.Kind() == types.KindBoolean:
			w.SetBool(i, x != 0)
		case s.kind == kMinMaxTS:
			w.SetTimestampMillis(i, int64(x))
		case c.T.Kind() == types.KindDate:
			w.SetDate(i, types.Date(int64(x)))
		case c.T.Kind() == types.KindTime:
			w.SetTime(i, types.Time(int64(x)))
		default:
			w.SetInt64(i, int64(x))
		}
	case kMinMaxFloat:
		setFloat(w, i, c.T, math.Float64frombits(acc.W[s.w+1]))
	case kMinMaxStr:
		w.SetString(i, acc.S[s.s])
	case kMinMaxDec:
		if err := w.SetDecimal(i, acc.D[s.d]); err != nil {
			panic(&expr.Error{Expr: c.text, Err: err})
		}
	}
}

func setFloat(w *types.RowWriter, i int, t types.Type, f float64) {
	if t.Kind() == types.KindFloat {
		w.SetFloat32(i, float32(f))
		return
	}
	w.SetFloat64(i, f)
}

// aggResultType returns the type of an aggregate call's result, as Flink
// derives it.
func aggResultType(name string, arg types.Type, star bool) (types.Type, error) {
	switch name {
	case "COUNT":
		return types.BigInt().NotNull(), nil
	case "SUM", "SUM0":
		if !arg.IsNumeric() {
			return types.Type{}, fmt.Errorf("%s takes a number, not %s", name, arg)
		}
		t := arg
		if arg.Kind() == types.KindDecimal {
			t = types.DecimalSumType(arg.Precision(), arg.Scale())
		}
		if name == "SUM0" {
			return t.NotNull(), nil
		}
		return t.Nullable(), nil
	case "AVG":
		if !arg.IsNumeric() {
			return types.Type{}, fmt.Errorf("AVG takes a number, not %s", arg)
		}
		if arg.Kind() == types.KindDecimal {
			return types.DecimalAvgType(arg.Precision(), arg.Scale()).Nullable(), nil
		}
		return arg.Nullable(), nil
	case "MIN", "MAX":
		if arg.IsConstructed() {
			return types.Type{}, fmt.Errorf("%s takes a comparable value, not %s", name, arg)
		}
		return arg.Nullable(), nil
	case "VAR_POP", "VAR_SAMP", "STDDEV_POP", "STDDEV_SAMP", "VARIANCE", "STDDEV":
		if !arg.IsNumeric() {
			return types.Type{}, fmt.Errorf("%s takes a number, not %s", name, arg)
		}
		if arg.IsApproximateNumeric() {
			return arg.Nullable(), nil
		}
		return types.Double().Nullable(), nil
	case "APPROX_COUNT_DISTINCT", "APPROX_PERCENTILE":
		return approxResultType(name, arg)
	case "FIRST_VALUE", "LAST_VALUE", "LISTAGG", "ARRAY_AGG", "COLLECT", "JSON_ARRAYAGG", "JSON_OBJECTAGG":
		return valueResultType(name, arg)
	}
	return types.Type{}, fmt.Errorf("aggregate %s is not supported", name)
}

// merged combines the accumulators of two parts of a group's rows (panes
// of sliding windows, merged sessions). Aggregates with views are not
// merged: they run only in unbounded GROUP BY, which does not merge.
// keep, if not nil, marks the calls whose words stay x's: the DISTINCT
// calls of a window aggregation, into which windowDistinctAgg.Merge folds
// the values of y that x has not counted (window_distinct.go).
func (a *sqlAgg) merged(x, y Acc, keep []bool) Acc {
	if len(x.W) == 0 {
		return y
	}
	if len(y.W) == 0 {
		return x
	}
	out := a.clone(x)
	for i, c := range a.calls {
		s := &a.slots[i]
		nx, ny := int64(x.W[s.w]), int64(y.W[s.w])
		if keep != nil && keep[i] {
			continue
		}
		out.W[s.w] = uint64(nx + ny)
		if ny == 0 {
			continue
		}
		switch s.kind {
		case kSumInt, kAvgInt:
			out.W[s.w+1] = x.W[s.w+1] + y.W[s.w+1]
		case kSumFloat, kAvgFloat:
			out.W[s.w+1] = math.Float64bits(math.Float64frombits(x.W[s.w+1]) + math.Float64frombits(y.W[s.w+1]))
		case kVar:
			for k := 1; k <= 2; k++ {
				out.W[s.w+k] = math.Float64bits(math.Float64frombits(x.W[s.w+k]) + math.Float64frombits(y.W[s.w+k]))
			}
		case kSumDec, kAvgDec:
			sum, err := x.D[s.d].Add(y.D[s.d], types.MaxDecimalPrecision, c.ArgType.Scale())
			if err != nil {
				panic(&expr.Error{Expr: c.text, Err: err})
			}
			out.D[s.d] = sum
		case kMinMaxInt, kMinMaxTS:
			if nx == 0 || s.max == (int64(y.W[s.w+1]) > int64(x.W[s.w+1])) {
				out.W[s.w+1] = y.W[s.w+1]
			}
		case kMinMaxFloat:
			fx, fy := math.Float64frombits(x.W[s.w+1]), math.Float64frombits(y.W[s.w+1])
			if nx == 0 || s.max == (fy > fx) {
				out.W[s.w+1] = y.W[s.w+1]
			}
		case kMinMaxStr:
			if nx == 0 || s.max == (y.S[s.s] > x.S[s.s]) {
				out.S[s.s] = y.S[s.s]
			}
		case kMinMaxDec:
			if nx == 0 || s.max == (y.D[s.d].Cmp(x.D[s.d]) > 0) {
				out.D[s.d] = y.D[s.d]
			}
		case kHLL, kKLL:
			a.mergeApprox(s, &out, y)
		case kFirst, kLast, kListAgg, kArray, kCollect, kJSONArray, kJSONObject:
			mergeValue(s, &out, x, y)
		}
	}
	return out
}
