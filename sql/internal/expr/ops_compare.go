package expr

import (
	"bytes"
	"cmp"
	"fmt"
	"strings"

	"github.com/eddystream/eddy/sql/types"
)

// The comparison operators, IS [NOT] DISTINCT FROM, and the logical
// operators with SQL's three-valued logic.
func init() {
	for _, op := range []string{"=", "<>", "<", "<=", ">", ">="} {
		op := op
		register(&Builtin{
			Name:    op,
			Resolve: resolveCompare(op),
			Func:    &Func{Infix: true, Compile: func(c *Call, args []*Eval) (*Eval, error) { return compileCompare(op, c, args) }},
			Doc:     "a " + op + " b: compares two values of comparable types; NULL if either is NULL",
		})
	}
	for _, op := range []string{"IS DISTINCT FROM", "IS NOT DISTINCT FROM"} {
		op := op
		register(&Builtin{
			Name: op,
			Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
				_, casts, err := resolveCompare(op)(args)
				return types.Boolean().NotNull(), casts, err
			},
			Func: &Func{Infix: true, Compile: func(c *Call, args []*Eval) (*Eval, error) { return compileDistinct(op == "IS DISTINCT FROM", c, args) }},
			Doc:  "a " + op + " b: compares two values, NULL equal to NULL; never NULL",
		})
	}
	register(&Builtin{Name: "AND", Resolve: resolveLogic("AND"), Func: &Func{Infix: true, Compile: compileAnd},
		Doc: "a AND b: FALSE if either is FALSE, else NULL if either is NULL"})
	register(&Builtin{Name: "OR", Resolve: resolveLogic("OR"), Func: &Func{Infix: true, Compile: compileOr},
		Doc: "a OR b: TRUE if either is TRUE, else NULL if either is NULL"})
	register(&Builtin{Name: "NOT", Resolve: resolveLogic("NOT"), Func: &Func{Prefix: true, Compile: compileNot},
		Doc: "NOT a: TRUE for FALSE, FALSE for TRUE, NULL for NULL"})
	for _, op := range []string{"IS NULL", "IS NOT NULL"} {
		not := op == "IS NOT NULL"
		register(&Builtin{
			Name: op,
			Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
				if len(args) != 1 {
					return types.Type{}, nil, &ArgError{op, args, "one operand"}
				}
				return types.Boolean().NotNull(), nil, nil
			},
			Func: &Func{Postfix: true, Compile: func(c *Call, args []*Eval) (*Eval, error) {
				isNull := args[0].IsNull()
				return &Eval{Bool: func(r types.Row) (bool, bool) { return isNull(r) != not, false }}, nil
			}},
			Doc: "a " + op + ": whether a is " + strings.TrimPrefix(op, "IS ") + "; never NULL",
		})
	}
	for _, op := range []string{"IS TRUE", "IS NOT TRUE", "IS FALSE", "IS NOT FALSE", "IS UNKNOWN", "IS NOT UNKNOWN"} {
		op := op
		register(&Builtin{
			Name: op,
			Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
				if len(args) != 1 || !isBoolish(args[0]) {
					return types.Type{}, nil, &ArgError{op, args, "a BOOLEAN"}
				}
				return types.Boolean().NotNull(), []types.Type{types.Boolean().WithNullability(args[0].IsNullable())}, nil
			},
			Func: &Func{Postfix: true, Compile: func(c *Call, args []*Eval) (*Eval, error) {
				f := args[0].Bool
				var test func(v, null bool) bool
				switch op {
				case "IS TRUE":
					test = func(v, null bool) bool { return v && !null }
				case "IS NOT TRUE":
					test = func(v, null bool) bool { return !v || null }
				case "IS FALSE":
					test = func(v, null bool) bool { return !v && !null }
				case "IS NOT FALSE":
					test = func(v, null bool) bool { return v || null }
				case "IS UNKNOWN":
					test = func(_, null bool) bool { return null }
				default:
					test = func(_, null bool) bool { return !null }
				}
				return &Eval{Bool: func(r types.Row) (bool, bool) { v, n := f(r); return test(v, n), false }}, nil
			}},
			Doc: "a " + op + ": tests a BOOLEAN; never NULL",
		})
	}
}

func isBoolish(t types.Type) bool {
	return t.Kind() == types.KindBoolean || t.Kind() == types.KindNull
}

func resolveLogic(op string) func(args []types.Type) (types.Type, []types.Type, error) {
	return func(args []types.Type) (types.Type, []types.Type, error) {
		want := 2
		if op == "NOT" {
			want = 1
		}
		if len(args) != want {
			return types.Type{}, nil, &ArgError{op, args, fmt.Sprintf("%d BOOLEAN operands", want)}
		}
		casts := make([]types.Type, len(args))
		for i, a := range args {
			if !isBoolish(a) {
				return types.Type{}, nil, &ArgError{op, args, "BOOLEAN operands"}
			}
			casts[i] = types.Boolean().WithNullability(a.IsNullable())
		}
		return nullableIfAny(types.Boolean(), args), casts, nil
	}
}

// resolveCompare casts both operands of a comparison to their common type.
func resolveCompare(op string) func(args []types.Type) (types.Type, []types.Type, error) {
	return func(args []types.Type) (types.Type, []types.Type, error) {
		if len(args) != 2 {
			return types.Type{}, nil, &ArgError{op, args, "two operands"}
		}
		ct, ok := types.CommonType(args[0].Nullable(), args[1].Nullable())
		if !ok || ct.Kind() == types.KindMultiset || (op != "=" && op != "<>" && !strings.HasPrefix(op, "IS") && ct.IsConstructed()) {
			return types.Type{}, nil, &ArgError{op, args, "two values of comparable types"}
		}
		if ct.Kind() == types.KindNull {
			ct = types.Boolean()
		}
		return nullableIfAny(types.Boolean(), args), []types.Type{ct.WithNullability(args[0].IsNullable()), ct.WithNullability(args[1].IsNullable())}, nil
	}
}

// Comparator returns a function that compares the values of x and y for a
// row (both of one type), and whether either is NULL.
func Comparator(x, y *Eval) func(types.Row) (int, bool) {
	switch x.Class() {
	case ClassBool:
		f, g := x.Bool, y.Bool
		return func(r types.Row) (int, bool) {
			u, n1 := f(r)
			v, n2 := g(r)
			return cmpBool(u, v), n1 || n2
		}
	case ClassInt:
		f, g := x.Int, y.Int
		return func(r types.Row) (int, bool) {
			u, n1 := f(r)
			v, n2 := g(r)
			return cmp.Compare(u, v), n1 || n2
		}
	case ClassFloat:
		f, g := x.Float, y.Float
		return func(r types.Row) (int, bool) {
			u, n1 := f(r)
			v, n2 := g(r)
			return cmp.Compare(u, v), n1 || n2
		}
	case ClassDecimal:
		f, g := x.Dec, y.Dec
		return func(r types.Row) (int, bool) {
			u, n1 := f(r)
			v, n2 := g(r)
			if n1 || n2 {
				return 0, true
			}
			return u.Cmp(v), false
		}
	case ClassString:
		f, g := x.Str, y.Str
		return func(r types.Row) (int, bool) {
			u, n1 := f(r)
			v, n2 := g(r)
			return strings.Compare(u, v), n1 || n2
		}
	case ClassTimestamp:
		f, g := x.TS, y.TS
		return func(r types.Row) (int, bool) {
			u, n1 := f(r)
			v, n2 := g(r)
			return u.Compare(v), n1 || n2
		}
	case ClassRow:
		f, g := x.Row, y.Row
		return func(r types.Row) (int, bool) {
			u, n1 := f(r)
			v, n2 := g(r)
			return strings.Compare(u.Encoding(), v.Encoding()), n1 || n2
		}
	case ClassArray:
		f, g := x.Arr, y.Arr
		return func(r types.Row) (int, bool) {
			u, n1 := f(r)
			v, n2 := g(r)
			return strings.Compare(u.Encoding(), v.Encoding()), n1 || n2
		}
	}
	f, g := x.Map, y.Map
	return func(r types.Row) (int, bool) {
		u, n1 := f(r)
		v, n2 := g(r)
		return bytes.Compare([]byte(u.Encoding()), []byte(v.Encoding())), n1 || n2
	}
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

func compileCompare(op string, c *Call, args []*Eval) (*Eval, error) {
	cmpf := Comparator(args[0], args[1])
	var test func(int) bool
	switch op {
	case "=":
		test = func(v int) bool { return v == 0 }
	case "<>":
		test = func(v int) bool { return v != 0 }
	case "<":
		test = func(v int) bool { return v < 0 }
	case "<=":
		test = func(v int) bool { return v <= 0 }
	case ">":
		test = func(v int) bool { return v > 0 }
	default:
		test = func(v int) bool { return v >= 0 }
	}
	// The common case, a value against a constant integer or decimal,
	// goes without the comparator's indirection.
	if ev := compareConst(op, args); ev != nil {
		return ev, nil
	}
	return &Eval{Bool: func(r types.Row) (bool, bool) {
		v, n := cmpf(r)
		if n {
			return false, true
		}
		return test(v), false
	}}, nil
}

// flipped is the operator that compares b with a as op compares a with b.
var flipped = map[string]string{"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

// compareConst returns the comparison of an integer or a decimal with a
// constant (on either side), nil for other comparisons.
func compareConst(op string, args []*Eval) *Eval {
	x, k := args[0], args[1]
	if x.Const && !k.Const {
		x, k, op = k, x, flipped[op]
	}
	if x.Const || !k.Const {
		return nil
	}
	switch x.Class() {
	case ClassInt:
		c, null := k.Int(types.Row{})
		if null {
			return &Eval{Bool: func(types.Row) (bool, bool) { return false, true }}
		}
		return compareIntConst(op, x.Int, c)
	case ClassDecimal:
		c, null := k.Dec(types.Row{})
		if null {
			return &Eval{Bool: func(types.Row) (bool, bool) { return false, true }}
		}
		return compareDecConst(op, x.Dec, c)
	}
	return nil
}

// compareIntConst returns f(row) op k.
func compareIntConst(op string, f func(types.Row) (int64, bool), k int64) *Eval {
	var g func(types.Row) (bool, bool)
	switch op {
	case "=":
		g = func(r types.Row) (bool, bool) { v, n := f(r); return v == k && !n, n }
	case "<>":
		g = func(r types.Row) (bool, bool) { v, n := f(r); return v != k && !n, n }
	case "<":
		g = func(r types.Row) (bool, bool) { v, n := f(r); return v < k && !n, n }
	case "<=":
		g = func(r types.Row) (bool, bool) { v, n := f(r); return v <= k && !n, n }
	case ">":
		g = func(r types.Row) (bool, bool) { v, n := f(r); return v > k && !n, n }
	default:
		g = func(r types.Row) (bool, bool) { v, n := f(r); return v >= k && !n, n }
	}
	return &Eval{Bool: g}
}

// compareDecConst returns f(row) op k.
func compareDecConst(op string, f func(types.Row) (types.Decimal, bool), k types.Decimal) *Eval {
	var g func(types.Row) (bool, bool)
	switch op {
	case "=":
		g = func(r types.Row) (bool, bool) { v, n := f(r); return !n && v.Cmp(k) == 0, n }
	case "<>":
		g = func(r types.Row) (bool, bool) { v, n := f(r); return !n && v.Cmp(k) != 0, n }
	case "<":
		g = func(r types.Row) (bool, bool) { v, n := f(r); return !n && v.Cmp(k) < 0, n }
	case "<=":
		g = func(r types.Row) (bool, bool) { v, n := f(r); return !n && v.Cmp(k) <= 0, n }
	case ">":
		g = func(r types.Row) (bool, bool) { v, n := f(r); return !n && v.Cmp(k) > 0, n }
	default:
		g = func(r types.Row) (bool, bool) { v, n := f(r); return !n && v.Cmp(k) >= 0, n }
	}
	return &Eval{Bool: g}
}

func compileDistinct(distinct bool, c *Call, args []*Eval) (*Eval, error) {
	cmpf := Comparator(args[0], args[1])
	n0, n1 := args[0].IsNull(), args[1].IsNull()
	return &Eval{Bool: func(r types.Row) (bool, bool) {
		a, b := n0(r), n1(r)
		if a || b {
			return (a != b) == distinct, false
		}
		v, _ := cmpf(r)
		return (v != 0) == distinct, false
	}}, nil
}

func compileAnd(c *Call, args []*Eval) (*Eval, error) {
	f, g := args[0].Bool, args[1].Bool
	if costlyFirst(c) {
		f, g = g, f
	}
	return &Eval{Bool: func(r types.Row) (bool, bool) {
		u, n1 := f(r)
		if !u && !n1 {
			return false, false
		}
		v, n2 := g(r)
		if !v && !n2 {
			return false, false
		}
		return true, n1 || n2
	}}, nil
}

func compileOr(c *Call, args []*Eval) (*Eval, error) {
	f, g := args[0].Bool, args[1].Bool
	if costlyFirst(c) {
		f, g = g, f
	}
	return &Eval{Bool: func(r types.Row) (bool, bool) {
		u, n1 := f(r)
		if u && !n1 {
			return true, false
		}
		v, n2 := g(r)
		if v && !n2 {
			return true, false
		}
		return false, n1 || n2
	}}, nil
}

func compileNot(c *Call, args []*Eval) (*Eval, error) {
	f := args[0].Bool
	return &Eval{Bool: func(r types.Row) (bool, bool) { v, n := f(r); return !v, n }}, nil
}
