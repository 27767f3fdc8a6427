package sql

import (
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// Arg is a Go type that a typed function (Func1, Func2, Func3) takes or
// returns, with the SQL type it stands for: bool BOOLEAN, int8 TINYINT,
// int16 SMALLINT, int32 INT, int64 BIGINT, float32 FLOAT, float64 DOUBLE,
// string STRING.
type Arg interface {
	bool | int8 | int16 | int32 | int64 | float32 | float64 | string
}

// Func1 returns the ScalarFunction of f, whose argument and result types
// are those of its Go types (see Arg). A NULL argument gives NULL without
// calling f. SQL calls f with its argument unboxed, and takes its result
// unboxed: no value is converted to an interface on the way, as the boxed
// ScalarFunction.Eval does. A string argument is valid only during the
// call, as it lives in memory that later rows reuse: f must copy it
// (strings.Clone) to keep it. Calls of one compiled expression come from
// one goroutine.
func Func1[A, R Arg](f func(A) R) ScalarFunction {
	return typedFunction([]string{sqlTypeOf[A]()}, sqlTypeOf[R](),
		func(args []any) any { return f(args[0].(A)) },
		func(evs []*expr.Eval) *expr.Eval {
			a := argOf[A](evs[0])
			return resultOf(func(r types.Row) (R, bool) {
				x, null := a(r)
				if null {
					var z R
					return z, true
				}
				return f(x), false
			})
		})
}

// Func2 is Func1 for a function of two arguments.
func Func2[A, B, R Arg](f func(A, B) R) ScalarFunction {
	return typedFunction([]string{sqlTypeOf[A](), sqlTypeOf[B]()}, sqlTypeOf[R](),
		func(args []any) any { return f(args[0].(A), args[1].(B)) },
		func(evs []*expr.Eval) *expr.Eval {
			ab := both(argOf[A](evs[0]), argOf[B](evs[1]))
			return resultOf(func(r types.Row) (R, bool) {
				x, y, null := ab(r)
				if null {
					var z R
					return z, true
				}
				return f(x, y), false
			})
		})
}

// Func3 is Func1 for a function of three arguments.
func Func3[A, B, C, R Arg](f func(A, B, C) R) ScalarFunction {
	return typedFunction([]string{sqlTypeOf[A](), sqlTypeOf[B](), sqlTypeOf[C]()}, sqlTypeOf[R](),
		func(args []any) any { return f(args[0].(A), args[1].(B), args[2].(C)) },
		func(evs []*expr.Eval) *expr.Eval {
			ab, c := both(argOf[A](evs[0]), argOf[B](evs[1])), argOf[C](evs[2])
			return resultOf(func(r types.Row) (R, bool) {
				var z R
				x, y, null := ab(r)
				if null {
					return z, true
				}
				w, null := c(r)
				if null {
					return z, true
				}
				return f(x, y, w), false
			})
		})
}

// both returns the getter of two arguments, NULL if either is (the
// second is not read then).
func both[A, B Arg](a func(types.Row) (A, bool), b func(types.Row) (B, bool)) func(types.Row) (A, B, bool) {
	return func(r types.Row) (A, B, bool) {
		var y B
		x, null := a(r)
		if null {
			return x, y, true
		}
		y, null = b(r)
		return x, y, null
	}
}

// typedFunction returns the ScalarFunction of argument types args and
// result type res whose boxed Eval is boxed and which compiles typed.
func typedFunction(args []string, res string, boxed func([]any) any, compile func([]*expr.Eval) *expr.Eval) ScalarFunction {
	return ScalarFunction{
		Args: args, Result: res,
		Eval:  func(vals []any) (any, error) { return boxed(vals), nil },
		typed: compile,
	}
}

// sqlTypeOf returns the SQL type of the Go type A.
func sqlTypeOf[A Arg]() string {
	var z A
	switch any(z).(type) {
	case bool:
		return "BOOLEAN"
	case int8:
		return "TINYINT"
	case int16:
		return "SMALLINT"
	case int32:
		return "INT"
	case int64:
		return "BIGINT"
	case float32:
		return "FLOAT"
	case float64:
		return "DOUBLE"
	}
	return "STRING"
}

// argOf returns the typed getter of e, whose type is A's SQL type (the
// arguments are cast to the declared types before the call).
func argOf[A Arg](e *expr.Eval) func(types.Row) (A, bool) {
	var z A
	var g any
	switch any(z).(type) {
	case bool:
		g = e.Bool
	case int8:
		f := e.Int
		g = func(r types.Row) (int8, bool) { v, null := f(r); return int8(v), null }
	case int16:
		f := e.Int
		g = func(r types.Row) (int16, bool) { v, null := f(r); return int16(v), null }
	case int32:
		f := e.Int
		g = func(r types.Row) (int32, bool) { v, null := f(r); return int32(v), null }
	case int64:
		g = e.Int
	case float32:
		f := e.Float
		g = func(r types.Row) (float32, bool) { v, null := f(r); return float32(v), null }
	case float64:
		g = e.Float
	case string:
		g = e.Str
	}
	return g.(func(types.Row) (A, bool))
}

// resultOf returns the Eval of a typed function's results, of R's SQL
// type, nullable.
func resultOf[R Arg](f func(types.Row) (R, bool)) *expr.Eval {
	t := types.MustParseType(sqlTypeOf[R]())
	e := &expr.Eval{T: t.Nullable()}
	switch f := any(f).(type) {
	case func(types.Row) (bool, bool):
		e.Bool = f
	case func(types.Row) (int8, bool):
		e.Int = func(r types.Row) (int64, bool) { v, null := f(r); return int64(v), null }
	case func(types.Row) (int16, bool):
		e.Int = func(r types.Row) (int64, bool) { v, null := f(r); return int64(v), null }
	case func(types.Row) (int32, bool):
		e.Int = func(r types.Row) (int64, bool) { v, null := f(r); return int64(v), null }
	case func(types.Row) (int64, bool):
		e.Int = f
	case func(types.Row) (float32, bool):
		e.Float = func(r types.Row) (float64, bool) { v, null := f(r); return float64(v), null }
	case func(types.Row) (float64, bool):
		e.Float = f
	case func(types.Row) (string, bool):
		e.Str = f
	}
	return e
}
