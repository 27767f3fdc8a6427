package expr

import (
	"fmt"

	"github.com/eddystream/eddy/sql/types"
)

// Compile compiles e into an Eval.
func Compile(e Expr) (*Eval, error) { return compile(e, nil) }

// hooks change how compile compiles an expression's parts.
type hooks struct {
	// col, if set, compiles the column references.
	col func(*Column) *Eval
	// shared, if set, gives the subexpressions it evaluates once per row.
	shared *Shared
}

// compile compiles e with the hooks h (nil for none).
func compile(e Expr, h *hooks) (*Eval, error) {
	if h != nil && h.shared != nil {
		if ev, ok, err := h.shared.compile(e, h); ok {
			return ev, err
		}
	}
	return compileNode(e, h)
}

// compileNode compiles e itself, its parts through compile.
func compileNode(e Expr, h *hooks) (*Eval, error) {
	switch e := e.(type) {
	case *Column:
		if h != nil && h.col != nil {
			return h.col(e), nil
		}
		return columnEval(e.Index, e.T), nil
	case *Field:
		x, err := compile(e.X, h)
		if err != nil {
			return nil, err
		}
		return fieldEval(x, e.Index, e.T), nil
	case *Literal:
		return constEval(e.T, e.V)
	case *Cast:
		x, err := compile(e.X, h)
		if err != nil {
			return nil, err
		}
		return compileCast(e, x)
	case *Case:
		return compileCase(e, h)
	case *Call:
		for _, special := range [...]func(*Call, *hooks) (*Eval, bool, error){compileLowerCompare, compileLowerIn} {
			if ev, ok, err := special(e, h); ok {
				if err != nil {
					return nil, err
				}
				ev.T = e.T
				return ev, nil
			}
		}
		args := make([]*Eval, len(e.Args))
		for i, a := range e.Args {
			ev, err := compile(a, h)
			if err != nil {
				return nil, err
			}
			args[i] = ev
		}
		if e.Fn == nil || e.Fn.Compile == nil {
			return nil, fmt.Errorf("sql: %s has no implementation", e.Name)
		}
		ev, err := e.Fn.Compile(e, args)
		if err != nil {
			return nil, err
		}
		ev.T = e.T
		if !e.Fn.Volatile && allConst(args) && len(args) > 0 {
			return fold(e, ev)
		}
		return ev, nil
	}
	return nil, fmt.Errorf("sql: cannot compile %T", e)
}

func allConst(args []*Eval) bool {
	for _, a := range args {
		if !a.Const {
			return false
		}
	}
	return true
}

// fold evaluates a call of constant arguments once; if the evaluation
// fails, the call is left to fail for every row, as it would.
func fold(x Expr, ev *Eval) (*Eval, error) {
	var v types.Value
	if err := Catch(func() { v = ev.Boxed()(types.Row{}) }); err != nil {
		return ev, nil
	}
	return constEval(x.Type(), v)
}

// columnEval reads column i of type t of the input row.
func columnEval(i int, t types.Type) *Eval {
	ev := &Eval{T: t}
	switch t.Kind() {
	case types.KindNull:
		ev.Bool = func(types.Row) (bool, bool) { return false, true }
	case types.KindBoolean:
		ev.Bool = func(r types.Row) (bool, bool) { return r.Bool(i), r.IsNull(i) }
	case types.KindDate:
		ev.Int = func(r types.Row) (int64, bool) { return int64(r.Date(i)), r.IsNull(i) }
	case types.KindTime:
		ev.Int = func(r types.Row) (int64, bool) { return int64(r.Time(i)), r.IsNull(i) }
	case types.KindFloat:
		ev.Float = func(r types.Row) (float64, bool) { return float64(r.Float32(i)), r.IsNull(i) }
	case types.KindDouble:
		ev.Float = func(r types.Row) (float64, bool) { return r.Float64(i), r.IsNull(i) }
	case types.KindDecimal:
		p, s := t.Precision(), t.Scale()
		ev.Dec = func(r types.Row) (types.Decimal, bool) {
			if r.IsNull(i) {
				return types.Decimal{}, true
			}
			return r.Decimal(i, p, s), false
		}
	case types.KindChar, types.KindVarChar, types.KindBinary, types.KindVarBinary:
		ev.Str = func(r types.Row) (string, bool) { return r.String(i), r.IsNull(i) }
	case types.KindTimestamp, types.KindTimestampLTZ:
		if p := t.Precision(); p <= types.MaxCompactTimestampPrecision {
			ev.TS = func(r types.Row) (types.Timestamp, bool) {
				return types.Timestamp{Millis: r.TimestampMillis(i)}, r.IsNull(i)
			}
		} else {
			ev.TS = func(r types.Row) (types.Timestamp, bool) {
				if r.IsNull(i) {
					return types.Timestamp{}, true
				}
				return r.Timestamp(i, p), false
			}
		}
	case types.KindRow:
		rt := t.Row()
		ev.Row = func(r types.Row) (types.Row, bool) {
			if r.IsNull(i) {
				return types.Row{}, true
			}
			return r.Row(i, rt), false
		}
	case types.KindArray:
		ev.Arr = func(r types.Row) (types.Array, bool) {
			if r.IsNull(i) {
				return types.Array{}, true
			}
			return r.Array(i), false
		}
	case types.KindMap, types.KindMultiset:
		ev.Map = func(r types.Row) (types.Map, bool) {
			if r.IsNull(i) {
				return types.Map{}, true
			}
			return r.Map(i), false
		}
	default: // integers and intervals
		ev.Int = func(r types.Row) (int64, bool) { return r.Int64(i), r.IsNull(i) }
	}
	return ev
}

// fieldEval reads field i (of type t) of the ROW value of x.
func fieldEval(x *Eval, i int, t types.Type) *Eval {
	inner := columnEval(i, t)
	get := x.Row
	ev := &Eval{T: t}
	switch inner.Class() {
	case ClassBool:
		f := inner.Bool
		ev.Bool = func(r types.Row) (bool, bool) {
			if row, null := get(r); !null {
				return f(row)
			}
			return false, true
		}
	case ClassInt:
		f := inner.Int
		ev.Int = func(r types.Row) (int64, bool) {
			if row, null := get(r); !null {
				return f(row)
			}
			return 0, true
		}
	case ClassFloat:
		f := inner.Float
		ev.Float = func(r types.Row) (float64, bool) {
			if row, null := get(r); !null {
				return f(row)
			}
			return 0, true
		}
	case ClassDecimal:
		f := inner.Dec
		ev.Dec = func(r types.Row) (types.Decimal, bool) {
			if row, null := get(r); !null {
				return f(row)
			}
			return types.Decimal{}, true
		}
	case ClassString:
		f := inner.Str
		ev.Str = func(r types.Row) (string, bool) {
			if row, null := get(r); !null {
				return f(row)
			}
			return "", true
		}
	case ClassTimestamp:
		f := inner.TS
		ev.TS = func(r types.Row) (types.Timestamp, bool) {
			if row, null := get(r); !null {
				return f(row)
			}
			return types.Timestamp{}, true
		}
	case ClassRow:
		f := inner.Row
		ev.Row = func(r types.Row) (types.Row, bool) {
			if row, null := get(r); !null {
				return f(row)
			}
			return types.Row{}, true
		}
	case ClassArray:
		f := inner.Arr
		ev.Arr = func(r types.Row) (types.Array, bool) {
			if row, null := get(r); !null {
				return f(row)
			}
			return types.Array{}, true
		}
	default:
		f := inner.Map
		ev.Map = func(r types.Row) (types.Map, bool) {
			if row, null := get(r); !null {
				return f(row)
			}
			return types.Map{}, true
		}
	}
	return ev
}

// constEval returns an Eval of the constant v (nil for NULL) of type t.
func constEval(t types.Type, v types.Value) (*Eval, error) {
	ev := &Eval{T: t, Const: true}
	null := v == nil
	if !null && ClassOf(t) >= ClassRow {
		// Constructed constants are written once into a row of one field.
		rt := types.MustRowType(types.F("v", t))
		row, err := types.BuildRow(rt, types.NewArena(0), v)
		if err != nil {
			return nil, fmt.Errorf("sql: constant of type %s: %w", t, err)
		}
		c := columnEval(0, t)
		switch ClassOf(t) {
		case ClassRow:
			x, _ := c.Row(row)
			ev.Row = func(types.Row) (types.Row, bool) { return x, false }
		case ClassArray:
			x, _ := c.Arr(row)
			ev.Arr = func(types.Row) (types.Array, bool) { return x, false }
		default:
			x, _ := c.Map(row)
			ev.Map = func(types.Row) (types.Map, bool) { return x, false }
		}
		return ev, nil
	}
	switch ClassOf(t) {
	case ClassBool:
		x, _ := v.(bool)
		ev.Bool = func(types.Row) (bool, bool) { return x, null }
	case ClassInt:
		x, ok := intOf(v)
		if !ok && !null {
			return nil, fmt.Errorf("sql: constant %v (%T) is not of type %s", v, v, t)
		}
		ev.Int = func(types.Row) (int64, bool) { return x, null }
	case ClassFloat:
		var x float64
		switch f := v.(type) {
		case float32:
			x = float64(f)
		case float64:
			x = f
		}
		ev.Float = func(types.Row) (float64, bool) { return x, null }
	case ClassDecimal:
		x, _ := v.(types.Decimal)
		ev.Dec = func(types.Row) (types.Decimal, bool) { return x, null }
	case ClassString:
		var x string
		switch s := v.(type) {
		case string:
			x = s
		case []byte:
			x = string(s)
		}
		ev.Str = func(types.Row) (string, bool) { return x, null }
	case ClassTimestamp:
		x, _ := v.(types.Timestamp)
		ev.TS = func(types.Row) (types.Timestamp, bool) { return x, null }
	case ClassRow:
		ev.Row = func(types.Row) (types.Row, bool) { return types.Row{}, true }
	case ClassArray:
		ev.Arr = func(types.Row) (types.Array, bool) { return types.Array{}, true }
	default:
		ev.Map = func(types.Row) (types.Map, bool) { return types.Map{}, true }
	}
	return ev, nil
}

func intOf(v types.Value) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case types.Date:
		return int64(x), true
	case types.Time:
		return int64(x), true
	}
	return 0, false
}

// compileCase compiles a searched CASE.
func compileCase(c *Case, h *hooks) (*Eval, error) {
	conds := make([]func(types.Row) (bool, bool), len(c.Whens))
	results := make([]*Eval, len(c.Whens)+1)
	condExprs := make([]Expr, len(c.Whens))
	for i, w := range c.Whens {
		condExprs[i] = w.Cond
	}
	x, ks, lowerPick := lowerChoice(condExprs)
	for i, w := range c.Whens {
		if !lowerPick {
			ce, err := compile(w.Cond, h)
			if err != nil {
				return nil, err
			}
			conds[i] = ce.Bool
		}
		var err error
		if results[i], err = compile(w.Result, h); err != nil {
			return nil, err
		}
	}
	var err error
	if c.Else != nil {
		results[len(c.Whens)], err = compile(c.Else, h)
	} else {
		results[len(c.Whens)], err = constEval(c.T, nil)
	}
	if err != nil {
		return nil, err
	}
	pick := func(r types.Row) int {
		for i, f := range conds {
			if v, null := f(r); v && !null {
				return i
			}
		}
		return len(conds)
	}
	if lowerPick {
		// WHEN LOWER(x) = 'a' THEN ... WHEN LOWER(x) = 'b' THEN ...
		if pick, err = compileLowerChoice(x, ks, h); err != nil {
			return nil, err
		}
	}
	return choose(c.T, results, pick), nil
}

// choose returns an Eval of type t that evaluates the branch pick names.
// Every branch has type t.
func choose(t types.Type, branches []*Eval, pick func(types.Row) int) *Eval {
	ev := &Eval{T: t}
	switch ClassOf(t) {
	case ClassBool:
		fs := gather(branches, func(e *Eval) func(types.Row) (bool, bool) { return e.Bool })
		ev.Bool = func(r types.Row) (bool, bool) { return fs[pick(r)](r) }
	case ClassInt:
		fs := gather(branches, func(e *Eval) func(types.Row) (int64, bool) { return e.Int })
		ev.Int = func(r types.Row) (int64, bool) { return fs[pick(r)](r) }
	case ClassFloat:
		fs := gather(branches, func(e *Eval) func(types.Row) (float64, bool) { return e.Float })
		ev.Float = func(r types.Row) (float64, bool) { return fs[pick(r)](r) }
	case ClassDecimal:
		fs := gather(branches, func(e *Eval) func(types.Row) (types.Decimal, bool) { return e.Dec })
		ev.Dec = func(r types.Row) (types.Decimal, bool) { return fs[pick(r)](r) }
	case ClassString:
		fs := gather(branches, func(e *Eval) func(types.Row) (string, bool) { return e.Str })
		ev.Str = func(r types.Row) (string, bool) { return fs[pick(r)](r) }
	case ClassTimestamp:
		fs := gather(branches, func(e *Eval) func(types.Row) (types.Timestamp, bool) { return e.TS })
		ev.TS = func(r types.Row) (types.Timestamp, bool) { return fs[pick(r)](r) }
	case ClassRow:
		fs := gather(branches, func(e *Eval) func(types.Row) (types.Row, bool) { return e.Row })
		ev.Row = func(r types.Row) (types.Row, bool) { return fs[pick(r)](r) }
	case ClassArray:
		fs := gather(branches, func(e *Eval) func(types.Row) (types.Array, bool) { return e.Arr })
		ev.Arr = func(r types.Row) (types.Array, bool) { return fs[pick(r)](r) }
	default:
		fs := gather(branches, func(e *Eval) func(types.Row) (types.Map, bool) { return e.Map })
		ev.Map = func(r types.Row) (types.Map, bool) { return fs[pick(r)](r) }
	}
	return ev
}

func gather[F any](es []*Eval, get func(*Eval) F) []F {
	out := make([]F, len(es))
	for i, e := range es {
		out[i] = get(e)
	}
	return out
}
