package expr

import (
	"fmt"

	"github.com/eddystream/eddy/sql/types"
)

// Class is how an evaluated value is held: the Go type of the function of
// an Eval that is set.
type Class uint8

const (
	// ClassBool is BOOLEAN, in Eval.Bool.
	ClassBool Class = iota
	// ClassInt is every type held as an integer, in Eval.Int: TINYINT to
	// BIGINT, DATE (days), TIME (nanoseconds of the day), INTERVAL YEAR TO
	// MONTH (months) and INTERVAL DAY TO SECOND (milliseconds).
	ClassInt
	// ClassFloat is FLOAT and DOUBLE, in Eval.Float.
	ClassFloat
	// ClassDecimal is DECIMAL, in Eval.Dec.
	ClassDecimal
	// ClassString is CHAR, VARCHAR, BINARY and VARBINARY (bytes as a Go
	// string), in Eval.Str.
	ClassString
	// ClassTimestamp is TIMESTAMP and TIMESTAMP_LTZ, in Eval.TS.
	ClassTimestamp
	// ClassRow is ROW, in Eval.Row.
	ClassRow
	// ClassArray is ARRAY, in Eval.Arr.
	ClassArray
	// ClassMap is MAP and MULTISET, in Eval.Map.
	ClassMap
)

// ClassOf returns the class of values of type t. The type of an untyped
// NULL is held as a BOOLEAN.
func ClassOf(t types.Type) Class {
	switch t.Kind() {
	case types.KindBoolean, types.KindNull:
		return ClassBool
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt,
		types.KindDate, types.KindTime, types.KindIntervalYearMonth, types.KindIntervalDayTime:
		return ClassInt
	case types.KindFloat, types.KindDouble:
		return ClassFloat
	case types.KindDecimal:
		return ClassDecimal
	case types.KindChar, types.KindVarChar, types.KindBinary, types.KindVarBinary:
		return ClassString
	case types.KindTimestamp, types.KindTimestampLTZ:
		return ClassTimestamp
	case types.KindRow:
		return ClassRow
	case types.KindArray:
		return ClassArray
	}
	return ClassMap
}

// Eval is a compiled expression: a function of the input row that returns
// the value and whether it is NULL (the value is then the zero value).
// Exactly the function of the class of T is set.
type Eval struct {
	T     types.Type
	Bool  func(types.Row) (v bool, null bool)
	Int   func(types.Row) (int64, bool)
	Float func(types.Row) (float64, bool)
	Dec   func(types.Row) (types.Decimal, bool)
	Str   func(types.Row) (string, bool)
	TS    func(types.Row) (types.Timestamp, bool)
	Row   func(types.Row) (types.Row, bool)
	Arr   func(types.Row) (types.Array, bool)
	Map   func(types.Row) (types.Map, bool)
	// Const is set when the value does not depend on the row (and the
	// functions return the same value for any row).
	Const bool
	// IntDec, when set on a DECIMAL of scale 0, gives its values as the
	// integers they are (a CAST of an integer that always fits): the fast
	// path of Dec for the arithmetic that can use it.
	IntDec func(types.Row) (int64, bool)
}

// Class returns the class of e's values.
func (e *Eval) Class() Class { return ClassOf(e.T) }

// Boxed returns a function that evaluates e boxed (nil for NULL), for
// printing, constants and the rare paths that need a types.Value.
func (e *Eval) Boxed() func(types.Row) types.Value {
	switch e.Class() {
	case ClassBool:
		f := e.Bool
		return func(r types.Row) types.Value { return box(f(r)) }
	case ClassInt:
		f := e.Int
		k := e.T.Kind()
		return func(r types.Row) types.Value {
			v, null := f(r)
			if null {
				return nil
			}
			switch k {
			case types.KindDate:
				return types.Date(v)
			case types.KindTime:
				return types.Time(v)
			case types.KindTinyInt:
				return int8(v)
			case types.KindSmallInt:
				return int16(v)
			case types.KindInt, types.KindIntervalYearMonth:
				return int32(v)
			}
			return v
		}
	case ClassFloat:
		f := e.Float
		single := e.T.Kind() == types.KindFloat
		return func(r types.Row) types.Value {
			v, null := f(r)
			if null {
				return nil
			}
			if single {
				return float32(v)
			}
			return v
		}
	case ClassDecimal:
		f := e.Dec
		return func(r types.Row) types.Value { return box(f(r)) }
	case ClassString:
		f := e.Str
		if e.T.IsBinary() {
			return func(r types.Row) types.Value {
				v, null := f(r)
				if null {
					return nil
				}
				return []byte(v)
			}
		}
		return func(r types.Row) types.Value { return box(f(r)) }
	case ClassTimestamp:
		f := e.TS
		return func(r types.Row) types.Value { return box(f(r)) }
	case ClassRow:
		f, rt := e.Row, e.T.Row()
		return func(r types.Row) types.Value {
			v, null := f(r)
			if null {
				return nil
			}
			return types.RowValues(rt, v)
		}
	case ClassArray:
		f, elem := e.Arr, e.T.Elem()
		return func(r types.Row) types.Value {
			v, null := f(r)
			if null {
				return nil
			}
			return types.ArrayValues(elem, v)
		}
	}
	f, t := e.Map, e.T
	return func(r types.Row) types.Value {
		v, null := f(r)
		if null {
			return nil
		}
		return types.MapEntries(t, v)
	}
}

func box[T any](v T, null bool) types.Value {
	if null {
		return nil
	}
	return v
}

// IsNull returns a function that tells whether e is NULL for a row.
func (e *Eval) IsNull() func(types.Row) bool {
	switch e.Class() {
	case ClassBool:
		f := e.Bool
		return func(r types.Row) bool { _, n := f(r); return n }
	case ClassInt:
		f := e.Int
		return func(r types.Row) bool { _, n := f(r); return n }
	case ClassFloat:
		f := e.Float
		return func(r types.Row) bool { _, n := f(r); return n }
	case ClassDecimal:
		f := e.Dec
		return func(r types.Row) bool { _, n := f(r); return n }
	case ClassString:
		f := e.Str
		return func(r types.Row) bool { _, n := f(r); return n }
	case ClassTimestamp:
		f := e.TS
		return func(r types.Row) bool { _, n := f(r); return n }
	case ClassRow:
		f := e.Row
		return func(r types.Row) bool { _, n := f(r); return n }
	case ClassArray:
		f := e.Arr
		return func(r types.Row) bool { _, n := f(r); return n }
	}
	f := e.Map
	return func(r types.Row) bool { _, n := f(r); return n }
}

// Error is an error evaluating an expression for a row: an overflow, a
// division by zero, a cast that fails. Compiled functions panic with it;
// Catch turns the panic back into an error.
type Error struct {
	// Expr is the expression as SQL.
	Expr string
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("evaluating %s: %v", e.Expr, e.Err) }

func (e *Error) Unwrap() error { return e.Err }

// RaisedAsPanic marks the error as one evaluation raises by panicking on
// purpose: the runtime reports it as the error it is, not as a panic.
func (e *Error) RaisedAsPanic() {}

// fail panics with an *Error for expression x.
func fail(x Expr, format string, args ...any) {
	panic(&Error{Expr: x.String(), Err: fmt.Errorf(format, args...)})
}

// failErr panics with an *Error for expression x wrapping err.
func failErr(x Expr, err error) {
	panic(&Error{Expr: x.String(), Err: err})
}

// Catch runs fn and returns the *Error it panicked with, if any; other
// panics go on.
func Catch(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(*Error); ok {
				err = e
				return
			}
			panic(r)
		}
	}()
	fn()
	return nil
}
