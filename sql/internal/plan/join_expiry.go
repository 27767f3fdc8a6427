package plan

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// State expiry of regular joins.
//
// Some columns only grow with the watermark: every row a relation emits
// after its stream carried watermark W has a value above W in them. The
// window_end and window_time of an event-time window aggregation are such
// columns ("watermark-bounded"): it emits a window's rows when the
// watermark reaches the window's last millisecond (window_end - 1) and
// drops the rows that come later for it, so a window it fires after
// watermark W ends after W + 1. Projections keep them (under any name),
// filters drop rows only.
//
// If an inner join's condition bounds such a column c of one input (R)
// from above by a column of the other (L), as R.c <= L.t + d (from
// L.t >= R.c - d, a BETWEEN, R.c < L.t + d, or R.c = L.t), an L row can
// join no R row that comes once the join's watermark (the minimum of both
// inputs') has reached L.t + d. If L is insert-only, no retraction of the
// row can come either, so the join drops it then (RegularJoinLogic's
// LeftExpiry, RightExpiry): its results are unchanged, its state bounded.

// watermarkBounded returns the columns of r whose value in every row r
// emits after its stream carried watermark W is above W, nil if none is
// known.
func watermarkBounded(r Rel) map[int]bool {
	switch r := r.(type) {
	case *WindowAggregateRel:
		if r.TVF != nil {
			switch r.TVF.Kind {
			case "TUMBLE", "HOP", "CUMULATE":
			default:
				return nil
			}
			if r.TVF.Assigner.IsProcessingTime() {
				return nil
			}
		} else if r.attached == nil {
			return nil
		}
		var out map[int]bool
		for i, b := range r.Bounds {
			// window_end (1) and window_time (2): window_time is
			// window_end - 1, and the window fires when the watermark
			// reaches it.
			if b == 1 || b == 2 {
				if out == nil {
					out = map[int]bool{}
				}
				out[i] = true
			}
		}
		return out
	case *CalcRel:
		in := watermarkBounded(r.Input)
		if len(in) == 0 {
			return nil
		}
		var out map[int]bool
		for i, p := range r.Projs {
			if c, ok := p.(*expr.Column); ok && in[c.Index] {
				if out == nil {
					out = map[int]bool{}
				}
				out[i] = true
			}
		}
		return out
	}
	return nil
}

// expiryTerm is one upper bound of a watermark-bounded column of the other
// input by a column of an input's row: the row can be dropped once the
// watermark reaches the column's value plus off.
type expiryTerm struct {
	col  int    // of the input's row
	name string // of the column in the join's row
	off  int64  // ms
}

// joinExpiry is when the rows of one input of a join can be dropped: at
// the earliest of its terms (nil for never).
type joinExpiry []expiryTerm

// add adds term t, keeping one term per column: the earliest.
func (e joinExpiry) add(t expiryTerm) joinExpiry {
	for i := range e {
		if e[i].col == t.col {
			e[i].off = min(e[i].off, t.off)
			return e
		}
	}
	return append(e, t)
}

// remap returns the expiry with its columns moved by to (the input's
// columns pruned), named as in rt, the new joined row, where the input's
// columns start at from.
func (e joinExpiry) remap(to func(col int) int, rt *types.RowType, from int) joinExpiry {
	if e == nil {
		return nil
	}
	out := make(joinExpiry, len(e))
	for i, t := range e {
		col := to(t.col)
		out[i] = expiryTerm{col: col, name: rt.Field(from + col).Name, off: t.off}
	}
	return out
}

// String renders the expiry as EXPLAIN shows it.
func (e joinExpiry) String() string {
	parts := make([]string, len(e))
	for i, t := range e {
		parts[i] = types.QuoteIdentifier(t.name)
		switch {
		case t.off > 0:
			parts[i] += fmt.Sprintf(" + %v", time.Duration(t.off)*time.Millisecond)
		case t.off < 0:
			parts[i] += fmt.Sprintf(" - %v", time.Duration(-t.off)*time.Millisecond)
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "LEAST(" + strings.Join(parts, ", ") + ")"
}

// at returns the function of a row's expiry: a NULL column makes its
// comparison unknown, so the row joins nothing and expires at once.
func (e joinExpiry) at() func(types.Row) int64 {
	return func(r types.Row) int64 {
		at := int64(math.MaxInt64)
		for _, t := range e {
			if r.IsNull(t.col) {
				return math.MinInt64
			}
			at = min(at, satAdd(r.TimestampMillis(t.col), t.off))
		}
		return at
	}
}

// satAdd adds b to a, saturating at the ends of int64.
func satAdd(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// sourceIdleness tells whether sources may mark their splits idle
// (SET 'table.exec.source.idle-timeout' to a positive duration, or a
// value that does not parse, which the scans refuse).
func sourceIdleness(cat *Catalog) bool {
	v, ok := cat.Settings["table.exec.source.idle-timeout"]
	if !ok {
		return false
	}
	d, err := connector.ParseDuration(v)
	return err != nil || d > 0
}

// compactTime tells whether t is a timestamp whose row slot is its value
// in milliseconds.
func compactTime(t types.Type) bool {
	k := t.Kind()
	return (k == types.KindTimestamp || k == types.KindTimestampLTZ) && t.Precision() <= types.MaxCompactTimestampPrecision
}

// planExpiry derives when the rows of each input of the join can be
// dropped. Only an inner join, without a unique input side, of whose
// inputs the expiring one is insert-only, and whose sources have no
// idleness (an idle input would let the join's watermark pass the
// other's), expires rows.
func (j *RegularJoinRel) planExpiry(cat *Catalog) {
	sp := j.spec
	if sp.kind != eddy.InnerJoin || j.contains[0] || j.contains[1] {
		return
	}
	if sourceIdleness(cat) {
		return
	}
	var conds []expr.Expr
	for _, k := range j.keys {
		if !k.nullSafe {
			conds = append(conds, k.cond)
		}
	}
	conds = append(conds, j.residual...)
	nl := sp.width()
	ins := [2]Rel{sp.left, sp.right}
	for side := range 2 {
		if !ins[side].Props().Mode.IsInsertOnly() {
			continue
		}
		other := watermarkBounded(ins[1-side])
		if len(other) == 0 {
			continue
		}
		for _, c := range conds {
			t, ok := expiryOf(c, side, nl, ins[side].Schema(), ins[1-side].Schema(), other)
			if !ok {
				continue
			}
			// EXPLAIN names the column as the join's row does.
			t.name = j.rt.Field(t.col + side*nl).Name
			j.expiry[side] = j.expiry[side].add(t)
		}
	}
}

// expiryOf recognises a comparison c (over the joined row, nl left
// columns) that bounds a watermark-bounded column of the other input from
// above by a column of side's row: other.c + oc op row.t + ot with op one
// of <, <= and = (either way round) gives other.c <= row.t + ot - oc.
func expiryOf(c expr.Expr, side, nl int, rt, ort *types.RowType, bounded map[int]bool) (expiryTerm, bool) {
	call, ok := c.(*expr.Call)
	if !ok || len(call.Args) != 2 {
		return expiryTerm{}, false
	}
	op := call.Name
	switch op {
	case "=", "<", "<=", ">", ">=":
	default:
		return expiryTerm{}, false
	}
	ca, oa, ok1 := timeTerm(call.Args[0])
	cb, ob, ok2 := timeTerm(call.Args[1])
	if !ok1 || !ok2 {
		return expiryTerm{}, false
	}
	// own and foreign turn a column of the joined row into one of side's
	// row or of the other input's row.
	own := func(c int) (int, bool) {
		if side == 0 {
			return c, c < nl
		}
		return c - nl, c >= nl
	}
	foreign := func(c int) (int, bool) {
		if side == 0 {
			return c - nl, c >= nl
		}
		return c, c < nl
	}
	var t, oc int
	var ot, oo int64
	var oe expr.Expr // the other input's side of the comparison
	if x, okx := foreign(ca); okx {
		y, oky := own(cb)
		if !oky {
			return expiryTerm{}, false
		}
		oc, oo, t, ot, oe = x, oa, y, ob, call.Args[0]
	} else if x, okx := foreign(cb); okx {
		y, oky := own(ca)
		if !oky {
			return expiryTerm{}, false
		}
		oc, oo, t, ot, oe = x, ob, y, oa, call.Args[1]
		op = map[string]string{"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
	} else {
		return expiryTerm{}, false
	}
	// other.c + oo op row.t + ot
	if op != "=" && op != "<" && op != "<=" {
		return expiryTerm{}, false
	}
	if !bounded[oc] || truncatesTime(oe) {
		return expiryTerm{}, false
	}
	tt, ct := rt.Field(t).Type, ort.Field(oc).Type
	if !compactTime(tt) || !compactTime(ct) || tt.Kind() != ct.Kind() {
		return expiryTerm{}, false
	}
	return expiryTerm{col: t, off: satAdd(ot, -oo)}, true
}

// truncatesTime tells whether e casts a timestamp to a coarser precision
// (CAST(window_end AS TIMESTAMP(0))): the value compared may then be up to
// a unit of that precision below the column's, no longer above the
// watermark, so it bounds nothing.
func truncatesTime(e expr.Expr) bool {
	found := false
	expr.Walk(e, func(x expr.Expr) bool {
		if c, ok := x.(*expr.Cast); ok && c.T.Precision() < c.X.Type().Precision() {
			found = true
		}
		return !found
	})
	return found
}
