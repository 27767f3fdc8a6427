package sql

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// userFunction adapts a ScalarFunction to the expression compiler: its
// arguments are cast to the declared types, evaluated boxed, and the
// result unboxed.
func userFunction(name string, f ScalarFunction) (*expr.Builtin, error) {
	args := make([]types.Type, len(f.Args))
	for i, a := range f.Args {
		t, err := types.ParseType(a)
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
		args[i] = t.Nullable()
	}
	res, err := types.ParseType(f.Result)
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	if f.Eval == nil {
		return nil, fmt.Errorf("no Eval")
	}
	sig := strings.Join(f.Args, ", ")
	return &expr.Builtin{
		Name: name,
		Doc:  fmt.Sprintf("%s(%s) -> %s: a function registered in Go", name, sig, f.Result),
		Resolve: func(in []types.Type) (types.Type, []types.Type, error) {
			if len(in) != len(args) {
				return types.Type{}, nil, &expr.ArgError{Func: name, Args: in, Want: "(" + sig + ")"}
			}
			for i, t := range in {
				if !t.EqualIgnoringNullability(args[i]) && !types.SupportsImplicitCast(t, args[i]) && t.Kind() != types.KindNull {
					return types.Type{}, nil, &expr.ArgError{Func: name, Args: in, Want: "(" + sig + ")"}
				}
			}
			return res.Nullable(), args, nil
		},
		Func: &expr.Func{Compile: func(c *expr.Call, evs []*expr.Eval) (*expr.Eval, error) {
			boxed := make([]func(types.Row) types.Value, len(evs))
			for i, e := range evs {
				boxed[i] = e.Boxed()
				if e.Const {
					v := boxed[i](types.Row{})
					boxed[i] = func(types.Row) types.Value { return v }
				}
			}
			// One slice for every call: a compiled expression is
			// evaluated by one goroutine, and f.Eval may not keep args.
			vals := make([]any, len(boxed))
			return expr.FromBoxed(c, res.Nullable(), func(r types.Row) (types.Value, error) {
				for i, b := range boxed {
					vals[i] = b(r)
					if vals[i] == nil && !f.CallOnNull {
						clear(vals)
						return nil, nil
					}
				}
				v, err := f.Eval(vals)
				clear(vals) // holds no value of the row after the call
				return v, err
			}), nil
		}},
	}, nil
}

// The Nexmark suite's user-defined function, CountChar: the number of
// times a character occurs in a string. It is compiled typed, its
// arguments and result unboxed.
func init() {
	const id = "com.github.nexmark.flink.udf.CountChar"
	if err := RegisterFunction(id, countCharFunction); err != nil {
		panic(err)
	}
	registered[id].Func = &expr.Func{Compile: func(c *expr.Call, evs []*expr.Eval) (*expr.Eval, error) {
		x, y := evs[0].Str, evs[1].Str
		return &expr.Eval{Int: func(r types.Row) (int64, bool) {
			s, null := x(r)
			if null {
				return 0, true
			}
			ch, null := y(r)
			if null {
				return 0, true
			}
			return countChar(s, ch), false
		}}, nil
	}}
}

// countCharFunction is CountChar boxed.
var countCharFunction = ScalarFunction{
	Args: []string{"STRING", "STRING"}, Result: "BIGINT",
	Eval: func(args []any) (any, error) {
		return countChar(args[0].(string), args[1].(string)), nil
	},
}

// countChar is CountChar: the number of times c occurs in s, 0 for an
// empty c.
func countChar(s, c string) int64 {
	if c == "" {
		return 0
	}
	return int64(strings.Count(s, c))
}
