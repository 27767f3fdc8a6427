package expr

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/eddystream/eddy/sql/types"
)

// The conditional functions: COALESCE, IF, NULLIF, IFNULL, GREATEST,
// LEAST, and the string tests IS_ALPHA, IS_DECIMAL and IS_DIGIT.
func init() {
	register(&Builtin{
		Name: "COALESCE",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) == 0 {
				return types.Type{}, nil, &ArgError{"COALESCE", args, "one or more values of a common type"}
			}
			ct, ok := commonOf(args)
			if !ok {
				return types.Type{}, nil, &ArgError{"COALESCE", args, "one or more values of a common type"}
			}
			nullable := true
			for _, a := range args {
				nullable = nullable && a.IsNullable()
			}
			return ct.WithNullability(nullable), castAll(ct, args), nil
		},
		Func: &Func{Compile: compileCoalesce},
		Doc:  "COALESCE(value1 [, value2]*): the first argument that is not NULL (NULL if all are); the common type of the arguments, nullable only if all are",
	})
	register(&Builtin{
		Name: "IFNULL",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			want := "(input, null_replacement) of a common type"
			if len(args) != 2 {
				return types.Type{}, nil, &ArgError{"IFNULL", args, want}
			}
			ct, ok := commonOf(args)
			if !ok {
				return types.Type{}, nil, &ArgError{"IFNULL", args, want}
			}
			return ct.WithNullability(args[1].IsNullable()), castAll(ct, args), nil
		},
		Func: &Func{Compile: compileCoalesce},
		Doc:  "IFNULL(input, null_replacement): null_replacement if input is NULL, else input; the common type, nullable only if null_replacement is",
	})
	register(&Builtin{
		Name: "IF",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			want := "(condition BOOLEAN, true_value, false_value) with values of a common type"
			if len(args) != 3 || !isBoolish(args[0]) {
				return types.Type{}, nil, &ArgError{"IF", args, want}
			}
			ct, ok := commonOf(args[1:])
			if !ok {
				return types.Type{}, nil, &ArgError{"IF", args, want}
			}
			ct = ct.WithNullability(args[1].IsNullable() || args[2].IsNullable())
			casts := append([]types.Type{types.Boolean().WithNullability(args[0].IsNullable())}, castAll(ct, args[1:])...)
			return ct, casts, nil
		},
		Func: &Func{Compile: func(c *Call, args []*Eval) (*Eval, error) {
			cond := args[0].Bool
			return choose(c.T, args[1:], func(r types.Row) int {
				if v, null := cond(r); v && !null {
					return 0
				}
				return 1
			}), nil
		}},
		Doc: "IF(condition, true_value, false_value): true_value if condition is TRUE, else false_value (also when condition is NULL)",
	})
	register(&Builtin{
		Name: "NULLIF",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			want := "two values of comparable types"
			if len(args) != 2 {
				return types.Type{}, nil, &ArgError{"NULLIF", args, want}
			}
			ct, ok := commonOf(args)
			if !ok || ct.Kind() == types.KindMultiset {
				return types.Type{}, nil, &ArgError{"NULLIF", args, want}
			}
			return ct.Nullable(), castAll(ct, args), nil
		},
		Func: &Func{Compile: func(c *Call, args []*Eval) (*Eval, error) {
			cmp := Comparator(args[0], args[1])
			null, err := constEval(c.T, nil)
			if err != nil {
				return nil, err
			}
			return choose(c.T, []*Eval{args[0], null}, func(r types.Row) int {
				if v, n := cmp(r); !n && v == 0 {
					return 1
				}
				return 0
			}), nil
		}},
		Doc: "NULLIF(value1, value2): NULL if value1 equals value2, else value1",
	})
	for _, name := range []string{"GREATEST", "LEAST"} {
		greatest := name == "GREATEST"
		register(&Builtin{
			Name: name,
			Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
				want := "one or more values of a common, ordered type"
				if len(args) == 0 {
					return types.Type{}, nil, &ArgError{name, args, want}
				}
				ct, ok := commonOf(args)
				if !ok || ct.IsConstructed() {
					return types.Type{}, nil, &ArgError{name, args, want}
				}
				return nullableIfAny(ct, args), castAll(ct, args), nil
			},
			Func: &Func{Compile: func(c *Call, args []*Eval) (*Eval, error) {
				return compileGreatest(c, args, greatest)
			}},
			Doc: name + "(value1 [, value2]*): the " + map[bool]string{true: "greatest", false: "least"}[greatest] +
				" of the arguments; NULL if any argument is NULL",
		})
	}
	isTests := []struct {
		name, doc string
		str       func(string) bool
		num       func(types.Type) bool
	}{
		{"IS_ALPHA", "IS_ALPHA(string): TRUE if string is not empty and all its characters are letters; FALSE otherwise, also for NULL and numbers",
			func(s string) bool {
				return s != "" && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) < 0
			},
			func(types.Type) bool { return false }},
		{"IS_DECIMAL", "IS_DECIMAL(string): TRUE if string parses as a number (as Java's Integer, Long or Double do); TRUE for numbers; FALSE otherwise, also for NULL",
			isJavaNumber,
			func(types.Type) bool { return true }},
		{"IS_DIGIT", "IS_DIGIT(string): TRUE if string is not empty and all its characters are digits; TRUE for integers; FALSE otherwise, also for NULL",
			func(s string) bool {
				return s != "" && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsDigit(r) }) < 0
			},
			func(t types.Type) bool { return t.IsIntegral() }},
	}
	for _, it := range isTests {
		it := it
		register(&Builtin{
			Name: it.name,
			Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
				if len(args) != 1 || !(famStr.accepts(args[0]) || args[0].IsNumeric()) {
					return types.Type{}, nil, &ArgError{it.name, args, "a string or a number"}
				}
				return types.Boolean().NotNull(), []types.Type{famStr.cast(args[0])}, nil
			},
			Func: &Func{Compile: func(c *Call, args []*Eval) (*Eval, error) {
				if args[0].Class() != ClassString {
					isNull, ok := args[0].IsNull(), it.num(args[0].T)
					return &Eval{Bool: func(r types.Row) (bool, bool) { return ok && !isNull(r), false }}, nil
				}
				x, test := args[0].Str, it.str
				return &Eval{Bool: func(r types.Row) (bool, bool) {
					s, null := x(r)
					return !null && test(s), false
				}}, nil
			}},
			Doc: it.doc,
		})
	}
}

// commonOf returns the common type of args (an untyped NULL takes the
// others' type); false if there is none or all are untyped NULLs.
func commonOf(args []types.Type) (types.Type, bool) {
	ts := make([]types.Type, 0, len(args))
	for _, a := range args {
		if a.Kind() != types.KindNull {
			ts = append(ts, a)
		}
	}
	if len(ts) == 0 {
		return types.Type{}, false
	}
	return types.CommonType(ts...)
}

// castAll returns the casts of args to t, each keeping its nullability.
func castAll(t types.Type, args []types.Type) []types.Type {
	out := make([]types.Type, len(args))
	for i, a := range args {
		out[i] = t.WithNullability(a.IsNullable())
	}
	return out
}

func firstNotNull[T any](fs []func(types.Row) (T, bool)) func(types.Row) (T, bool) {
	return func(r types.Row) (T, bool) {
		for _, f := range fs {
			if v, null := f(r); !null {
				return v, false
			}
		}
		var zero T
		return zero, true
	}
}

func compileCoalesce(c *Call, args []*Eval) (*Eval, error) {
	ev := &Eval{T: c.T}
	switch ClassOf(c.T) {
	case ClassBool:
		ev.Bool = firstNotNull(gather(args, func(e *Eval) func(types.Row) (bool, bool) { return e.Bool }))
	case ClassInt:
		ev.Int = firstNotNull(gather(args, func(e *Eval) func(types.Row) (int64, bool) { return e.Int }))
	case ClassFloat:
		ev.Float = firstNotNull(gather(args, func(e *Eval) func(types.Row) (float64, bool) { return e.Float }))
	case ClassDecimal:
		ev.Dec = firstNotNull(gather(args, func(e *Eval) func(types.Row) (types.Decimal, bool) { return e.Dec }))
	case ClassString:
		ev.Str = firstNotNull(gather(args, func(e *Eval) func(types.Row) (string, bool) { return e.Str }))
	case ClassTimestamp:
		ev.TS = firstNotNull(gather(args, func(e *Eval) func(types.Row) (types.Timestamp, bool) { return e.TS }))
	case ClassRow:
		ev.Row = firstNotNull(gather(args, func(e *Eval) func(types.Row) (types.Row, bool) { return e.Row }))
	case ClassArray:
		ev.Arr = firstNotNull(gather(args, func(e *Eval) func(types.Row) (types.Array, bool) { return e.Arr }))
	default:
		ev.Map = firstNotNull(gather(args, func(e *Eval) func(types.Row) (types.Map, bool) { return e.Map }))
	}
	return ev, nil
}

// compileGreatest picks the greatest (or least) argument; NULL if any is.
func compileGreatest(c *Call, args []*Eval, greatest bool) (*Eval, error) {
	isNull := gather(args, func(e *Eval) func(types.Row) bool { return e.IsNull() })
	// The comparators of every pair of arguments: n is small.
	n := len(args)
	pair := make([][]func(types.Row) (int, bool), n)
	for i := range pair {
		pair[i] = make([]func(types.Row) (int, bool), n)
		for j := range pair[i] {
			if i != j {
				pair[i][j] = Comparator(args[i], args[j])
			}
		}
	}
	pick := func(r types.Row) int {
		for _, f := range isNull {
			if f(r) {
				return n
			}
		}
		best := 0
		for i := 1; i < n; i++ {
			v, _ := pair[i][best](r)
			if (greatest && v > 0) || (!greatest && v < 0) {
				best = i
			}
		}
		return best
	}
	null, err := constEval(c.T, nil)
	if err != nil {
		return nil, err
	}
	return choose(c.T, append(append([]*Eval{}, args...), null), pick), nil
}

// isJavaNumber tells whether Java's Integer.parseInt, Long.parseLong or
// Double.parseDouble accept s.
func isJavaNumber(s string) bool {
	if s == "" {
		return false
	}
	if _, err := strconv.ParseInt(s, 10, 64); err == nil && !strings.HasPrefix(s, "+-") {
		return true
	}
	t := strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if t == "" || strings.ContainsRune(t, '_') {
		return false
	}
	body := strings.TrimLeft(t, "+-")
	if len(t)-len(body) > 1 {
		return false
	}
	switch body {
	case "NaN", "Infinity":
		return true
	}
	if strings.ContainsAny(body, "xXpP") || strings.EqualFold(body, "inf") || strings.EqualFold(body, "infinity") || strings.EqualFold(body, "nan") {
		return false
	}
	if n := len(body); n > 1 && strings.ContainsRune("fFdD", rune(body[n-1])) {
		body = body[:n-1]
	}
	_, err := strconv.ParseFloat(body, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return true
		}
	}
	return err == nil
}
