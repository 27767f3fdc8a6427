package plan

import (
	"math"

	"github.com/eddystream/eddy/sql/types"
)

// KeepsResult tells whether adding in to acc leaves every call's result as
// it is (agg.ResultKeeper), so that the group aggregation need not make the
// group's row again: each call either does not see the row (its FILTER
// does not hold, its argument is NULL) or is a MIN or MAX that already
// holds a value at least as good as the row's. It says false for every
// other call, whose result a row may change.
func (a *sqlAgg) KeepsResult(acc Acc, in types.Row) bool {
	if !a.mayKeep || len(acc.W) < a.words {
		return false
	}
	for i, c := range a.calls {
		s := &a.slots[i]
		if c.Filter >= 0 && (in.IsNull(c.Filter) || !in.Bool(c.Filter)) {
			continue
		}
		if c.Star {
			return false
		}
		if in.IsNull(c.Arg) && (s.kind != kArray || c.IgnoreNulls) {
			continue
		}
		if acc.W[s.w] == 0 {
			return false // the call's first value
		}
		if !a.extremumKeeps(c, s, acc, in) {
			return false
		}
	}
	return true
}

// canKeep tells whether a row may leave every call's result as it is:
// each call is a MIN or MAX, or may not see some rows (it has a FILTER, or
// its argument may be NULL). An aggregation with a COUNT(*), or a SUM of a
// column never NULL, changes its result at every row.
func (a *sqlAgg) canKeep() bool {
	for i, c := range a.calls {
		switch a.slots[i].kind {
		case kMinMaxInt, kMinMaxFloat, kMinMaxStr, kMinMaxDec, kMinMaxTS:
			continue
		}
		if c.Filter >= 0 || !c.Star && c.Arg >= 0 && a.pre.FieldType(c.Arg).IsNullable() {
			continue
		}
		return false
	}
	return true
}

// extremumKeeps tells whether call c, a MIN or MAX holding a value, keeps
// it when given the non-NULL argument of in, as fold and extremumWord
// decide; false for any other call.
func (a *sqlAgg) extremumKeeps(c *aggCall, s *aggSlots, acc Acc, in types.Row) bool {
	switch s.kind {
	case kMinMaxInt, kMinMaxTS:
		x, _ := s.read(in)
		cur := int64(acc.W[s.w+1])
		return !(s.max && cur < int64(x) || !s.max && int64(x) < cur)
	case kMinMaxFloat:
		x, _ := s.read(in)
		f, cur := math.Float64frombits(x), math.Float64frombits(acc.W[s.w+1])
		return !(s.max && cur < f || !s.max && f < cur)
	case kMinMaxStr:
		x := in.String(c.Arg)
		return !(s.max && x > acc.S[s.s] || !s.max && x < acc.S[s.s])
	case kMinMaxDec:
		d := in.Decimal(c.Arg, c.ArgType.Precision(), c.ArgType.Scale())
		return !(s.max && d.Cmp(acc.D[s.d]) > 0 || !s.max && d.Cmp(acc.D[s.d]) < 0)
	}
	return false
}
