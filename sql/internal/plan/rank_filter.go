package plan

import (
	"github.com/eddystream/eddy/sql/internal/expr"
)

// withoutImplied returns cond, the condition of a Calc over in, without
// the conjuncts that always hold for the rows of in (nil if none is left):
// a comparison of a Top-N's row number with a constant that its range of
// row numbers satisfies (rn <= 10 over a Rank of rows 1 to 10), or of a
// constant column with a constant (1 <= 1, where the row number of a
// Top-1 or a deduplication is the constant 1). The Top-N already keeps
// just those rows, so the filter that asked for them is absorbed into it,
// as in Flink's planner, and a Calc left with no condition and projecting
// its input as it is runs no operator at all. Without the filter, the Calc
// over an updating Top-N keeps its input's changelog mode from the start:
// it never turns an update into a deletion, for EXPLAIN and for the
// sink's check alike.
func withoutImplied(cond expr.Expr, in Rel) expr.Expr {
	if cond == nil {
		return nil
	}
	all := conjuncts(cond)
	var kept []expr.Expr
	for _, e := range all {
		if !alwaysHolds(e, in) {
			kept = append(kept, e)
		}
	}
	switch {
	case len(kept) == 0:
		return nil
	case len(kept) < len(all):
		return andOf(kept)
	}
	return cond
}

// alwaysHolds tells whether e, a comparison of a column of in with an
// integer constant, is TRUE for every row of in: the column's values, all
// within a known range (intRange), satisfy it.
func alwaysHolds(e expr.Expr, in Rel) bool {
	call, ok := e.(*expr.Call)
	if !ok || len(call.Args) != 2 {
		return false
	}
	op := call.Name
	col, ok := call.Args[0].(*expr.Column)
	k, kok := intConst(call.Args[1])
	if !ok || !kok {
		col, ok = call.Args[1].(*expr.Column)
		k, kok = intConst(call.Args[0])
		op = map[string]string{"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
	}
	if !ok || !kok || op == "" {
		return false
	}
	lo, hi, ok := intRange(in, col.Index)
	if !ok {
		return false
	}
	switch op {
	case "=":
		return lo == k && hi == k
	case "<>":
		return k < lo || k > hi
	case "<":
		return hi < k
	case "<=":
		return hi <= k
	case ">":
		return lo > k
	case ">=":
		return lo >= k
	}
	return false
}

// intConst returns the value of a non-NULL integer literal.
func intConst(e expr.Expr) (int64, bool) {
	l, ok := e.(*expr.Literal)
	if !ok {
		return 0, false
	}
	switch v := l.V.(type) {
	case int64:
		return v, true
	case int32:
		return int64(v), true
	}
	return 0, false
}

// intRange returns the range of the values of column i of r when they are
// known to be integers, never NULL, from lo to hi: the row number of a
// Top-N or window Top-N that outputs it (every row it emits or retracts
// is numbered within its range), an integer constant a Calc projects, or a column a Calc
// passes on from its input as it is.
func intRange(r Rel, i int) (lo, hi int64, ok bool) {
	switch r := r.(type) {
	case *RankRel:
		if r.OutputRank && i == r.rt.Len()-1 {
			return r.Start, r.End, true
		}
	case *WindowRankRel:
		if r.OutputRank && i == r.rt.Len()-1 {
			return r.Start, r.End, true
		}
	case *CalcRel:
		if i < 0 || i >= len(r.Projs) {
			return 0, 0, false
		}
		switch p := r.Projs[i].(type) {
		case *expr.Literal:
			k, ok := intConst(p)
			return k, k, ok
		case *expr.Column:
			return intRange(r.Input, p.Index)
		}
	}
	return 0, 0, false
}
