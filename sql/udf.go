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
			if f.typed != nil {
				return f.typed(evs), nil
			}
			boxed := make([]func(types.Row) types.Value, len(evs))
			for i, e := range evs {
				boxed[i] = e.Boxed()
				if e.Class() == expr.ClassString && !e.T.IsBinary() {
					// A string of the row lives in memory that later
					// rows reuse: Eval may keep its own copy.
					get := boxed[i]
					boxed[i] = func(r types.Row) types.Value {
						if s, ok := get(r).(string); ok {
							return strings.Clone(s)
						}
						return nil
					}
				}
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
// times a character occurs in a string, compiled typed (Func2).
func init() {
	if err := RegisterFunction("com.github.nexmark.flink.udf.CountChar", countCharFunction); err != nil {
		panic(err)
	}
}

// countCharFunction is CountChar.
var countCharFunction = Func2(countChar)

// countChar is CountChar: the number of times c occurs in s, 0 for an
// empty c.
func countChar(s, c string) int64 {
	if c == "" {
		return 0
	}
	return int64(strings.Count(s, c))
}
