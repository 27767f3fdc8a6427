package expr

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/eddystream/eddy/sql/types"
)

// Loc is the session time zone: the zone of TIMESTAMP_LTZ values when they
// are cast to and from TIMESTAMP, DATE and strings.
var Loc = time.UTC

// compileCast compiles CAST(x AS c.T) (TRY_CAST when c.Try). A cast that
// fails panics with an *Error naming the cast, or gives NULL for TRY_CAST.
func compileCast(c *Cast, x *Eval) (*Eval, error) {
	from, to := x.T, c.T
	if from.Kind() == types.KindNull {
		return constEval(to, nil)
	}
	if from.EqualIgnoringNullability(to) ||
		ClassOf(from) == ClassString && !from.IsBinary() && to.Kind() == types.KindVarChar && to.Length() == types.MaxLength {
		// Text to STRING is the text itself (types.CastString).
		y := *x
		y.T = to
		return &y, nil
	}
	bad := func(err error) {
		if !c.Try {
			failErr(c, err)
		}
	}
	ev := &Eval{T: to}
	fc, tc := ClassOf(from), ClassOf(to)
	switch {
	case tc == ClassInt && isInteger(to) && (fc == ClassInt && isInteger(from) || fc == ClassFloat || fc == ClassDecimal || fc == ClassBool):
		lo, hi := intRange(to)
		get := asFloatOrInt(x)
		ev.Int = func(r types.Row) (int64, bool) {
			v, exact, null := get(r)
			if null {
				return 0, true
			}
			if !exact {
				bad(fmt.Errorf("%s does not fit in %s", x.T, to))
				return 0, true
			}
			if v < lo || v > hi {
				bad(fmt.Errorf("%d is out of the range of %s", v, to))
				return 0, true
			}
			return v, false
		}
	case tc == ClassFloat && (fc == ClassInt && isInteger(from) || fc == ClassFloat || fc == ClassDecimal || fc == ClassBool):
		single := to.Kind() == types.KindFloat
		get := asFloat(x)
		ev.Float = func(r types.Row) (float64, bool) {
			v, null := get(r)
			if single {
				v = float64(float32(v))
			}
			return v, null
		}
	case tc == ClassDecimal && (fc == ClassInt && isInteger(from) || fc == ClassFloat || fc == ClassDecimal || fc == ClassBool):
		p, s := to.Precision(), to.Scale()
		if fc == ClassInt && isInteger(from) && s == 0 && p >= intDigits(from) {
			ev.IntDec = x.Int // every value fits: the cast cannot fail
		}
		get := asDecimal(x)
		ev.Dec = func(r types.Row) (types.Decimal, bool) {
			d, err, null := get(r)
			if null {
				return types.Decimal{}, true
			}
			if err == nil {
				d, err = d.Fit(p, s)
			}
			if err != nil {
				bad(err)
				return types.Decimal{}, true
			}
			return d, false
		}
	case tc == ClassBool && (fc == ClassInt && isInteger(from) || fc == ClassFloat || fc == ClassDecimal):
		get := asFloat(x)
		ev.Bool = func(r types.Row) (bool, bool) {
			v, null := get(r)
			return v != 0, null
		}
	case tc == ClassString && !to.IsBinary() && !from.IsBinary() && fc != ClassString:
		text := textOf(x)
		ev.Str = func(r types.Row) (string, bool) {
			s, null := text(r)
			if null {
				return "", true
			}
			return types.CastString(to, s), false
		}
	case tc == ClassString && fc == ClassString:
		get := x.Str
		binTo, binFrom := to.IsBinary(), from.IsBinary()
		ev.Str = func(r types.Row) (string, bool) {
			s, null := get(r)
			if null {
				return "", true
			}
			if binTo == binFrom && !binTo {
				return types.CastString(to, s), false
			}
			v, err := types.ParseValue(to, s, Loc)
			if err != nil {
				bad(err)
				return "", true
			}
			if b, ok := v.([]byte); ok {
				return string(b), false
			}
			return v.(string), false
		}
	case tc == ClassTimestamp && fc == ClassTimestamp:
		get, p := x.TS, to.Precision()
		shift := 0 // +1: TIMESTAMP -> LTZ, -1: LTZ -> TIMESTAMP
		if from.Kind() == types.KindTimestamp && to.Kind() == types.KindTimestampLTZ {
			shift = 1
		} else if from.Kind() == types.KindTimestampLTZ && to.Kind() == types.KindTimestamp {
			shift = -1
		}
		ev.TS = func(r types.Row) (types.Timestamp, bool) {
			ts, null := get(r)
			if null {
				return ts, true
			}
			switch shift {
			case 1:
				ts = ts.FromLocal(Loc)
			case -1:
				ts = ts.ToLocal(Loc)
			}
			return ts.Truncate(p), false
		}
	case tc == ClassTimestamp && from.Kind() == types.KindDate:
		get, ltz := x.Int, to.Kind() == types.KindTimestampLTZ
		ev.TS = func(r types.Row) (types.Timestamp, bool) {
			d, null := get(r)
			ts := types.TimestampFromMillis(d * types.MillisPerDay)
			if ltz {
				ts = ts.FromLocal(Loc)
			}
			return ts, null
		}
	case to.Kind() == types.KindDate && fc == ClassTimestamp:
		get, ltz := x.TS, from.Kind() == types.KindTimestampLTZ
		ev.Int = func(r types.Row) (int64, bool) {
			ts, null := get(r)
			if ltz {
				ts = ts.ToLocal(Loc)
			}
			return int64(ts.Date()), null
		}
	case to.Kind() == types.KindTime && fc == ClassTimestamp:
		get, ltz, p := x.TS, from.Kind() == types.KindTimestampLTZ, to.Precision()
		ev.Int = func(r types.Row) (int64, bool) {
			ts, null := get(r)
			if ltz {
				ts = ts.ToLocal(Loc)
			}
			return int64(ts.TimeOfDay().Truncate(p)), null
		}
	case to.Kind() == types.KindTime && from.Kind() == types.KindTime:
		get, p := x.Int, to.Precision()
		ev.Int = func(r types.Row) (int64, bool) {
			t, null := get(r)
			return int64(types.Time(t).Truncate(p)), null
		}
	case to.Kind() == types.KindTimestampLTZ && fc == ClassInt && isInteger(from):
		// Flink reads a number cast to TIMESTAMP_LTZ as epoch seconds.
		get := x.Int
		ev.TS = func(r types.Row) (types.Timestamp, bool) {
			v, null := get(r)
			return types.TimestampFromMillis(v * 1000), null
		}
	case isInteger(to) && from.Kind() == types.KindTimestampLTZ:
		get := x.TS
		ev.Int = func(r types.Row) (int64, bool) {
			ts, null := get(r)
			return floorDiv(ts.Millis, 1000), null
		}
	case fc == ClassString && !from.IsBinary():
		// Strings to any other type parse as CAST does.
		get := x.Str
		unbox := unboxer(to)
		ev = unbox(func(r types.Row) (types.Value, bool) {
			s, null := get(r)
			if null {
				return nil, true
			}
			v, err := types.ParseValue(to, s, Loc)
			if err != nil {
				bad(err)
				return nil, true
			}
			return v, false
		})
	case tc == ClassString:
		// Constructed and remaining types to strings, through their
		// boxed values.
		get := x.Boxed()
		ev.Str = func(r types.Row) (string, bool) {
			v := get(r)
			if v == nil {
				return "", true
			}
			s, err := types.FormatValue(from, v, Loc)
			if err != nil {
				bad(err)
				return "", true
			}
			return types.CastString(to, s), false
		}
	case fc == tc && fc >= ClassRow:
		// Casts between constructed types of the same structure (field
		// names, nullability) share the encoding when the element types are
		// alike; others are refused by the planner.
		y := *x
		y.T = to
		return &y, nil
	default:
		return nil, fmt.Errorf("sql: cannot cast %s to %s in %s", from, to, c)
	}
	if c.Try {
		ev = tryEval(ev)
	}
	return ev, nil
}

// tryEval turns a panic of an *Error in ev into NULL.
func tryEval(ev *Eval) *Eval {
	out := *ev
	out.IntDec = nil // it would panic where Dec gives NULL
	switch ev.Class() {
	case ClassInt:
		f := ev.Int
		out.Int = func(r types.Row) (v int64, null bool) {
			if Catch(func() { v, null = f(r) }) != nil {
				return 0, true
			}
			return
		}
	case ClassFloat:
		f := ev.Float
		out.Float = func(r types.Row) (v float64, null bool) {
			if Catch(func() { v, null = f(r) }) != nil {
				return 0, true
			}
			return
		}
	case ClassDecimal:
		f := ev.Dec
		out.Dec = func(r types.Row) (v types.Decimal, null bool) {
			if Catch(func() { v, null = f(r) }) != nil {
				return types.Decimal{}, true
			}
			return
		}
	case ClassString:
		f := ev.Str
		out.Str = func(r types.Row) (v string, null bool) {
			if Catch(func() { v, null = f(r) }) != nil {
				return "", true
			}
			return
		}
	case ClassBool:
		f := ev.Bool
		out.Bool = func(r types.Row) (v bool, null bool) {
			if Catch(func() { v, null = f(r) }) != nil {
				return false, true
			}
			return
		}
	case ClassTimestamp:
		f := ev.TS
		out.TS = func(r types.Row) (v types.Timestamp, null bool) {
			if Catch(func() { v, null = f(r) }) != nil {
				return types.Timestamp{}, true
			}
			return
		}
	}
	return &out
}

func isInteger(t types.Type) bool { return t.IsIntegral() }

// intDigits returns the most decimal digits a value of integer type t has.
func intDigits(t types.Type) int {
	switch t.Kind() {
	case types.KindTinyInt:
		return 3
	case types.KindSmallInt:
		return 5
	case types.KindInt:
		return 10
	}
	return 19
}

func intRange(t types.Type) (lo, hi int64) {
	switch t.Kind() {
	case types.KindTinyInt:
		return math.MinInt8, math.MaxInt8
	case types.KindSmallInt:
		return math.MinInt16, math.MaxInt16
	case types.KindInt:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// asFloatOrInt reads a numeric or boolean x as an int64 (truncating toward
// zero); exact is false when the value does not fit in an int64.
func asFloatOrInt(x *Eval) func(types.Row) (v int64, exact, null bool) {
	switch x.Class() {
	case ClassInt:
		f := x.Int
		return func(r types.Row) (int64, bool, bool) { v, n := f(r); return v, true, n }
	case ClassBool:
		f := x.Bool
		return func(r types.Row) (int64, bool, bool) {
			v, n := f(r)
			if v {
				return 1, true, n
			}
			return 0, true, n
		}
	case ClassFloat:
		f := x.Float
		return func(r types.Row) (int64, bool, bool) {
			v, n := f(r)
			if n {
				return 0, true, true
			}
			t := math.Trunc(v)
			if math.IsNaN(t) || t < -9.223372036854775808e18 || t >= 9.223372036854775808e18 {
				return 0, false, false
			}
			return int64(t), true, false
		}
	}
	f := x.Dec
	return func(r types.Row) (int64, bool, bool) {
		d, n := f(r)
		if n {
			return 0, true, true
		}
		v, ok := d.Int64()
		return v, ok, false
	}
}

// asFloat reads a numeric or boolean x as a float64.
func asFloat(x *Eval) func(types.Row) (float64, bool) {
	switch x.Class() {
	case ClassFloat:
		return x.Float
	case ClassInt:
		f := x.Int
		return func(r types.Row) (float64, bool) { v, n := f(r); return float64(v), n }
	case ClassBool:
		f := x.Bool
		return func(r types.Row) (float64, bool) {
			v, n := f(r)
			if v {
				return 1, n
			}
			return 0, n
		}
	}
	f := x.Dec
	return func(r types.Row) (float64, bool) { d, n := f(r); return d.Float64(), n }
}

// asDecimal reads a numeric or boolean x as a Decimal.
func asDecimal(x *Eval) func(types.Row) (types.Decimal, error, bool) {
	switch x.Class() {
	case ClassDecimal:
		f := x.Dec
		return func(r types.Row) (types.Decimal, error, bool) { d, n := f(r); return d, nil, n }
	case ClassFloat:
		f := x.Float
		return func(r types.Row) (types.Decimal, error, bool) {
			v, n := f(r)
			if n {
				return types.Decimal{}, nil, true
			}
			d, err := types.DecimalFromFloat64(v)
			return d, err, false
		}
	}
	f := asFloatOrInt(x)
	return func(r types.Row) (types.Decimal, error, bool) {
		v, _, n := f(r)
		return types.DecimalFromInt64(v), nil, n
	}
}

// textOf renders a non-string x as CAST(x AS STRING) does.
func textOf(x *Eval) func(types.Row) (string, bool) {
	switch x.T.Kind() {
	case types.KindBoolean:
		f := x.Bool
		return func(r types.Row) (string, bool) {
			v, n := f(r)
			if v {
				return "TRUE", n
			}
			return "FALSE", n
		}
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		f := x.Int
		return func(r types.Row) (string, bool) { v, n := f(r); return strconv.FormatInt(v, 10), n }
	case types.KindFloat, types.KindDouble:
		f, bits := x.Float, 64
		if x.T.Kind() == types.KindFloat {
			bits = 32
		}
		return func(r types.Row) (string, bool) {
			v, n := f(r)
			if n {
				return "", true
			}
			return string(types.AppendJavaFloat(nil, v, bits)), false
		}
	case types.KindDecimal:
		f := x.Dec
		return func(r types.Row) (string, bool) {
			d, n := f(r)
			if n {
				return "", true
			}
			return d.String(), false
		}
	case types.KindTimestamp:
		f, p := x.TS, x.T.Precision()
		return func(r types.Row) (string, bool) {
			ts, n := f(r)
			if n {
				return "", true
			}
			return ts.Format(p), false
		}
	}
	get, t := x.Boxed(), x.T
	return func(r types.Row) (string, bool) {
		v := get(r)
		if v == nil {
			return "", true
		}
		s, err := types.FormatValue(t, v, Loc)
		if err != nil {
			panic(&Error{Expr: t.String(), Err: err})
		}
		return s, false
	}
}

// unboxer returns a function that makes an Eval of type t from a function
// giving boxed values of t.
func unboxer(t types.Type) func(func(types.Row) (types.Value, bool)) *Eval {
	return func(get func(types.Row) (types.Value, bool)) *Eval {
		ev := &Eval{T: t}
		switch ClassOf(t) {
		case ClassBool:
			ev.Bool = func(r types.Row) (bool, bool) {
				v, n := get(r)
				b, _ := v.(bool)
				return b, n
			}
		case ClassInt:
			ev.Int = func(r types.Row) (int64, bool) {
				v, n := get(r)
				i, _ := intOf(v)
				return i, n
			}
		case ClassFloat:
			ev.Float = func(r types.Row) (float64, bool) {
				v, n := get(r)
				switch f := v.(type) {
				case float32:
					return float64(f), n
				case float64:
					return f, n
				}
				return 0, n
			}
		case ClassDecimal:
			ev.Dec = func(r types.Row) (types.Decimal, bool) {
				v, n := get(r)
				d, _ := v.(types.Decimal)
				return d, n
			}
		case ClassString:
			ev.Str = func(r types.Row) (string, bool) {
				v, n := get(r)
				switch s := v.(type) {
				case string:
					return s, n
				case []byte:
					return string(s), n
				}
				return "", n
			}
		case ClassTimestamp:
			ev.TS = func(r types.Row) (types.Timestamp, bool) {
				v, n := get(r)
				ts, _ := v.(types.Timestamp)
				return ts, n
			}
		default:
			// Constructed values are built into a one-field row.
			rt := types.MustRowType(types.F("v", t))
			col := columnEval(0, t)
			arena := types.NewArena(0)
			row := func(r types.Row) (types.Row, bool) {
				v, n := get(r)
				if n || v == nil {
					return types.Row{}, true
				}
				out, err := types.BuildRow(rt, arena, v)
				if err != nil {
					panic(&Error{Expr: t.String(), Err: err})
				}
				return out, false
			}
			switch ClassOf(t) {
			case ClassRow:
				ev.Row = func(r types.Row) (types.Row, bool) {
					x, n := row(r)
					if n {
						return x, true
					}
					return col.Row(x)
				}
			case ClassArray:
				ev.Arr = func(r types.Row) (types.Array, bool) {
					x, n := row(r)
					if n {
						return types.Array{}, true
					}
					return col.Arr(x)
				}
			default:
				ev.Map = func(r types.Row) (types.Map, bool) {
					x, n := row(r)
					if n {
						return types.Map{}, true
					}
					return col.Map(x)
				}
			}
		}
		return ev
	}
}

// FromBoxed returns an Eval of type t whose value is fn's, boxed as
// types.Value documents (nil for NULL); an error of fn fails the
// evaluation of call.
func FromBoxed(call Expr, t types.Type, fn func(types.Row) (types.Value, error)) *Eval {
	return unboxer(t)(func(r types.Row) (types.Value, bool) {
		v, err := fn(r)
		if err != nil {
			failErr(call, err)
		}
		return v, v == nil
	})
}
