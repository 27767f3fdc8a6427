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
			}
			return expr.FromBoxed(c, res.Nullable(), func(r types.Row) (types.Value, error) {
				vals := make([]any, len(boxed))
				for i, b := range boxed {
					vals[i] = b(r)
					if vals[i] == nil && !f.CallOnNull {
						return nil, nil
					}
				}
				return f.Eval(vals)
			}), nil
		}},
	}, nil
}

// The Nexmark suite's user-defined function, CountChar: the number of
// times a character occurs in a string.
func init() {
	err := RegisterFunction("com.github.nexmark.flink.udf.CountChar", ScalarFunction{
		Args: []string{"STRING", "STRING"}, Result: "BIGINT",
		Eval: func(args []any) (any, error) {
			s, c := args[0].(string), args[1].(string)
			if c == "" {
				return int64(0), nil
			}
			return int64(strings.Count(s, c)), nil
		},
	})
	if err != nil {
		panic(err)
	}
}
