package expr

import "github.com/eddystream/eddy/sql/types"

// Pair holds the two rows that expressions compiled by Pair.Compile read:
// an expression over the concatenation of two rows (a join's joined row)
// evaluated without writing that row. Columns below Split are read from A
// at their index, the others from B at their index less Split.
//
// A Pair and its compiled expressions belong to one goroutine: set A and B,
// then call the expressions (with any row: they do not read it).
type Pair struct {
	A, B  types.Row
	Split int
}

// Compile compiles e, an expression over the concatenation of p's rows,
// into an Eval that reads its columns from p.A and p.B.
func (p *Pair) Compile(e Expr) (*Eval, error) {
	return compile(e, &hooks{col: func(c *Column) *Eval {
		if c.Index < p.Split {
			return rebind(columnEval(c.Index, c.T), &p.A)
		}
		return rebind(columnEval(c.Index-p.Split, c.T), &p.B)
	}})
}

// Setter compiles e as Compile does and returns the function that writes
// its value into field i of a row writer (its row argument is not read).
func (p *Pair) Setter(e Expr, i int) (func(in types.Row, w *types.RowWriter), error) {
	ev, err := p.Compile(e)
	if err != nil {
		return nil, err
	}
	return SetterOf(ev, i), nil
}

// rebind returns ev reading the row *r instead of its argument.
func rebind(ev *Eval, r *types.Row) *Eval {
	out := &Eval{T: ev.T}
	if f := ev.Bool; f != nil {
		out.Bool = func(types.Row) (bool, bool) { return f(*r) }
	}
	if f := ev.Int; f != nil {
		out.Int = func(types.Row) (int64, bool) { return f(*r) }
	}
	if f := ev.Float; f != nil {
		out.Float = func(types.Row) (float64, bool) { return f(*r) }
	}
	if f := ev.Dec; f != nil {
		out.Dec = func(types.Row) (types.Decimal, bool) { return f(*r) }
	}
	if f := ev.Str; f != nil {
		out.Str = func(types.Row) (string, bool) { return f(*r) }
	}
	if f := ev.TS; f != nil {
		out.TS = func(types.Row) (types.Timestamp, bool) { return f(*r) }
	}
	if f := ev.Row; f != nil {
		out.Row = func(types.Row) (types.Row, bool) { return f(*r) }
	}
	if f := ev.Arr; f != nil {
		out.Arr = func(types.Row) (types.Array, bool) { return f(*r) }
	}
	if f := ev.Map; f != nil {
		out.Map = func(types.Row) (types.Map, bool) { return f(*r) }
	}
	return out
}
