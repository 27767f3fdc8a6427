package expr

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/eddystream/eddy/sql/types"
)

// The arithmetic operators: + - * / % on numbers, + and - of datetimes
// and intervals, * and / of intervals by numbers, and unary minus.
func init() {
	for _, op := range []types.ArithmeticOp{types.OpAdd, types.OpSubtract, types.OpMultiply, types.OpDivide, types.OpMod} {
		op := op
		register(&Builtin{
			Name:    op.String(),
			Resolve: func(args []types.Type) (types.Type, []types.Type, error) { return resolveArith(op, args) },
			Func:    &Func{Infix: true, Compile: func(c *Call, args []*Eval) (*Eval, error) { return compileArith(op, c, args) }},
			Doc:     "a " + op.String() + " b: arithmetic on numbers; + and - also of a datetime and an interval",
		})
	}
	register(&Builtin{
		Name: "NEGATE",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) != 1 || !(args[0].IsNumeric() || args[0].IsInterval()) {
				return types.Type{}, nil, &ArgError{"-", args, "a number or an interval"}
			}
			return args[0], nil, nil
		},
		Func: &Func{Prefix: true, Compile: compileNegate},
		Doc:  "-a: the negation of a number or interval",
	})
}

// decimalOf returns the DECIMAL type an exact numeric type converts to
// without loss.
func decimalOf(t types.Type) types.Type {
	switch t.Kind() {
	case types.KindTinyInt:
		return types.DecimalType(3, 0).WithNullability(t.IsNullable())
	case types.KindSmallInt:
		return types.DecimalType(5, 0).WithNullability(t.IsNullable())
	case types.KindInt:
		return types.DecimalType(10, 0).WithNullability(t.IsNullable())
	case types.KindBigInt:
		return types.DecimalType(19, 0).WithNullability(t.IsNullable())
	}
	return t
}

func resolveArith(op types.ArithmeticOp, args []types.Type) (types.Type, []types.Type, error) {
	if len(args) != 2 {
		return types.Type{}, nil, &ArgError{op.String(), args, "two operands"}
	}
	a, b := args[0], args[1]
	nullable := a.IsNullable() || b.IsNullable()
	if a.Kind() == types.KindNull || b.Kind() == types.KindNull {
		other := a
		if other.Kind() == types.KindNull {
			other = b
		}
		if other.Kind() == types.KindNull {
			other = types.Int()
		}
		return other.Nullable(), []types.Type{other.Nullable(), other.Nullable()}, nil
	}
	if a.IsNumeric() && b.IsNumeric() {
		res, err := types.ArithmeticType(op, a, b)
		if err != nil {
			return types.Type{}, nil, &ArgError{op.String(), args, "numbers"}
		}
		switch {
		case res.Kind() == types.KindDecimal:
			return res, []types.Type{decimalOf(a), decimalOf(b)}, nil
		default:
			return res, []types.Type{res.WithNullability(a.IsNullable()), res.WithNullability(b.IsNullable())}, nil
		}
	}
	switch op {
	case types.OpAdd, types.OpSubtract:
		switch {
		case isDatetime(a) && b.IsInterval():
			return a.WithNullability(nullable), nil, nil
		case op == types.OpAdd && a.IsInterval() && isDatetime(b):
			return b.WithNullability(nullable), nil, nil
		case a.IsInterval() && b.IsInterval() && a.Kind() == b.Kind():
			return a.WithNullability(nullable), nil, nil
		}
	case types.OpMultiply:
		if a.IsInterval() && b.IsNumeric() {
			return a.WithNullability(nullable), []types.Type{a, types.Double().WithNullability(b.IsNullable())}, nil
		}
		if a.IsNumeric() && b.IsInterval() {
			return b.WithNullability(nullable), []types.Type{types.Double().WithNullability(a.IsNullable()), b}, nil
		}
	case types.OpDivide:
		if a.IsInterval() && b.IsNumeric() {
			return a.WithNullability(nullable), []types.Type{a, types.Double().WithNullability(b.IsNullable())}, nil
		}
	}
	return types.Type{}, nil, &ArgError{op.String(), args, "numbers, or a datetime and an interval"}
}

func isDatetime(t types.Type) bool {
	switch t.Kind() {
	case types.KindDate, types.KindTime, types.KindTimestamp, types.KindTimestampLTZ:
		return true
	}
	return false
}

func compileArith(op types.ArithmeticOp, c *Call, args []*Eval) (*Eval, error) {
	a, b := args[0], args[1]
	t := c.T
	ev := &Eval{T: t}
	switch {
	case t.IsIntegral():
		x, y := a.Int, b.Int
		lo, hi := intRange(t)
		check := func(v int64, ok bool) (int64, bool) {
			if !ok || v < lo || v > hi {
				fail(c, "the result overflows %s", t)
			}
			return v, false
		}
		switch op {
		case types.OpAdd:
			ev.Int = func(r types.Row) (int64, bool) {
				u, n1 := x(r)
				v, n2 := y(r)
				if n1 || n2 {
					return 0, true
				}
				s := u + v
				return check(s, (s > u) == (v > 0) || v == 0)
			}
		case types.OpSubtract:
			ev.Int = func(r types.Row) (int64, bool) {
				u, n1 := x(r)
				v, n2 := y(r)
				if n1 || n2 {
					return 0, true
				}
				s := u - v
				return check(s, (s < u) == (v > 0) || v == 0)
			}
		case types.OpMultiply:
			ev.Int = func(r types.Row) (int64, bool) {
				u, n1 := x(r)
				v, n2 := y(r)
				if n1 || n2 {
					return 0, true
				}
				p := u * v
				ok := u == 0 || p/u == v && !(u == -1 && v == math.MinInt64) && !(v == -1 && u == math.MinInt64)
				return check(p, ok)
			}
		case types.OpDivide, types.OpMod:
			mod := op == types.OpMod
			ev.Int = func(r types.Row) (int64, bool) {
				u, n1 := x(r)
				v, n2 := y(r)
				if n1 || n2 {
					return 0, true
				}
				if v == 0 {
					fail(c, "division by zero")
				}
				if mod {
					if v == -1 {
						return 0, false
					}
					return u % v, false
				}
				if u == math.MinInt64 && v == -1 {
					return check(0, false)
				}
				return check(u/v, true)
			}
			if mod && b.Const {
				if v, null := b.Int(types.Row{}); !null && v >= 2 && v < 1<<32 {
					ev.Int = modByConst(x, v)
				}
			}
		}
	case t.IsApproximateNumeric():
		x, y := a.Float, b.Float
		single := t.Kind() == types.KindFloat
		var f func(u, v float64) float64
		switch op {
		case types.OpAdd:
			f = func(u, v float64) float64 { return u + v }
		case types.OpSubtract:
			f = func(u, v float64) float64 { return u - v }
		case types.OpMultiply:
			f = func(u, v float64) float64 { return u * v }
		case types.OpDivide:
			f = func(u, v float64) float64 { return u / v }
		case types.OpMod:
			f = math.Mod
		}
		ev.Float = func(r types.Row) (float64, bool) {
			u, n1 := x(r)
			v, n2 := y(r)
			if n1 || n2 {
				return 0, true
			}
			res := f(u, v)
			if single {
				res = float64(float32(res))
			}
			return res, false
		}
	case t.Kind() == types.KindDecimal:
		x, y := asDecimal(a), asDecimal(b)
		p, s := t.Precision(), t.Scale()
		var f func(u, v types.Decimal) (types.Decimal, error)
		switch op {
		case types.OpAdd:
			f = func(u, v types.Decimal) (types.Decimal, error) { return u.Add(v, p, s) }
		case types.OpSubtract:
			f = func(u, v types.Decimal) (types.Decimal, error) { return u.Sub(v, p, s) }
		case types.OpMultiply:
			f = func(u, v types.Decimal) (types.Decimal, error) { return u.Mul(v, p, s) }
		case types.OpDivide:
			f = func(u, v types.Decimal) (types.Decimal, error) {
				if v.IsZero() {
					return types.Decimal{}, fmt.Errorf("division by zero")
				}
				return u.Div(v, p, s)
			}
		case types.OpMod:
			f = func(u, v types.Decimal) (types.Decimal, error) {
				if v.IsZero() {
					return types.Decimal{}, fmt.Errorf("division by zero")
				}
				return u.Mod(v, p, s)
			}
		}
		ev.Dec = func(r types.Row) (types.Decimal, bool) {
			u, err1, n1 := x(r)
			v, err2, n2 := y(r)
			if n1 || n2 {
				return types.Decimal{}, true
			}
			if err1 != nil {
				failErr(c, err1)
			}
			if err2 != nil {
				failErr(c, err2)
			}
			d, err := f(u, v)
			if err != nil {
				failErr(c, err)
			}
			return d, false
		}
		if op == types.OpMultiply {
			if fast := mulIntByConst(a, b, p, s, ev.Dec); fast != nil {
				ev.Dec = fast
			}
		}
	default:
		return compileTemporalArith(op, c, a, b)
	}
	return ev, nil
}

// compileTemporalArith compiles datetime ± interval, interval ± interval
// and interval * or / number.
func compileTemporalArith(op types.ArithmeticOp, c *Call, a, b *Eval) (*Eval, error) {
	t := c.T
	ev := &Eval{T: t}
	sign := int64(1)
	if op == types.OpSubtract {
		sign = -1
	}
	if a.T.IsInterval() && isDatetime(b.T) {
		a, b = b, a
	}
	switch {
	case a.T.IsInterval() && b.T.IsNumeric():
		x, y := a.Int, b.Float
		div := op == types.OpDivide
		ev.Int = func(r types.Row) (int64, bool) {
			u, n1 := x(r)
			v, n2 := y(r)
			if n1 || n2 {
				return 0, true
			}
			if div {
				if v == 0 {
					fail(c, "division by zero")
				}
				return int64(math.Round(float64(u) / v)), false
			}
			return int64(math.Round(float64(u) * v)), false
		}
	case a.T.IsNumeric() && b.T.IsInterval():
		x, y := a.Float, b.Int
		ev.Int = func(r types.Row) (int64, bool) {
			u, n1 := x(r)
			v, n2 := y(r)
			if n1 || n2 {
				return 0, true
			}
			return int64(math.Round(u * float64(v))), false
		}
	case a.T.IsInterval() && b.T.IsInterval():
		x, y := a.Int, b.Int
		ev.Int = func(r types.Row) (int64, bool) {
			u, n1 := x(r)
			v, n2 := y(r)
			return u + sign*v, n1 || n2
		}
	case b.T.Kind() == types.KindIntervalDayTime:
		y := b.Int
		switch a.Class() {
		case ClassTimestamp:
			x := a.TS
			ev.TS = func(r types.Row) (types.Timestamp, bool) {
				ts, n1 := x(r)
				ms, n2 := y(r)
				ts.Millis += sign * ms
				return ts, n1 || n2
			}
		default: // DATE (days) and TIME (nanoseconds of the day)
			x := a.Int
			isDate := a.T.Kind() == types.KindDate
			ev.Int = func(r types.Row) (int64, bool) {
				v, n1 := x(r)
				ms, n2 := y(r)
				if isDate {
					return v + sign*floorDiv(ms, types.MillisPerDay), n1 || n2
				}
				ns := (v + sign*ms*types.NanosPerMilli) % types.NanosPerDay
				if ns < 0 {
					ns += types.NanosPerDay
				}
				return ns, n1 || n2
			}
		}
	case b.T.Kind() == types.KindIntervalYearMonth:
		y := b.Int
		switch a.Class() {
		case ClassTimestamp:
			x := a.TS
			ev.TS = func(r types.Row) (types.Timestamp, bool) {
				ts, n1 := x(r)
				m, n2 := y(r)
				if n1 || n2 {
					return ts, true
				}
				d := ts.Date()
				ms := ts.Millis - int64(d)*types.MillisPerDay
				ts.Millis = int64(addMonths(d, sign*m))*types.MillisPerDay + ms
				return ts, false
			}
		default:
			x := a.Int
			if a.T.Kind() == types.KindTime {
				ev.Int = func(r types.Row) (int64, bool) {
					v, n1 := x(r)
					_, n2 := y(r)
					return v, n1 || n2
				}
				break
			}
			ev.Int = func(r types.Row) (int64, bool) {
				v, n1 := x(r)
				m, n2 := y(r)
				if n1 || n2 {
					return 0, true
				}
				return int64(addMonths(types.Date(v), sign*m)), false
			}
		}
	default:
		return nil, fmt.Errorf("sql: cannot compile %s", c)
	}
	return ev, nil
}

// addMonths adds months to a date, keeping the day or the last day of the
// month (2020-01-31 + 1 month = 2020-02-29), as SQL does.
func addMonths(d types.Date, months int64) types.Date {
	y, m, day := d.Civil()
	total := int64(y)*12 + int64(m-1) + months
	ny, nm := int(floorDiv(total, 12)), int(total-floorDiv(total, 12)*12)+1
	if last := daysIn(ny, nm); day > last {
		day = last
	}
	return types.DateOf(ny, nm, day)
}

func daysIn(y, m int) int {
	switch m {
	case 4, 6, 9, 11:
		return 30
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	}
	return 31
}

func compileNegate(c *Call, args []*Eval) (*Eval, error) {
	a := args[0]
	ev := &Eval{T: c.T}
	switch a.Class() {
	case ClassInt:
		x := a.Int
		lo, _ := intRange(c.T)
		ev.Int = func(r types.Row) (int64, bool) {
			v, n := x(r)
			if !n && v == lo && c.T.IsIntegral() {
				fail(c, "the result overflows %s", c.T)
			}
			return -v, n
		}
	case ClassFloat:
		x := a.Float
		ev.Float = func(r types.Row) (float64, bool) { v, n := x(r); return -v, n }
	case ClassDecimal:
		x := a.Dec
		ev.Dec = func(r types.Row) (types.Decimal, bool) { v, n := x(r); return v.Neg(), n }
	default:
		return nil, fmt.Errorf("sql: cannot negate %s", a.T)
	}
	return ev, nil
}

// mulIntByConst returns the fast path of a DECIMAL(p, s) product of an
// integer (a column, or a CAST of one to DECIMAL(_, 0)) and a constant
// decimal of scale s, such as 0.908 * price: the product of two int64s,
// exact, with no rounding. A product that overflows 64 bits, or p digits,
// goes to the general path, slow, whose result or error it then is. nil if
// the operands are not of that form.
func mulIntByConst(a, b *Eval, p, s int, general func(types.Row) (types.Decimal, bool)) func(types.Row) (types.Decimal, bool) {
	if !a.Const {
		a, b = b, a
	}
	if !a.Const || b.Const || a.Class() != ClassDecimal {
		return nil
	}
	k, null := a.Dec(types.Row{})
	cu, small := k.Unscaled()
	if null || !small || k.Scale() != s || cu == math.MinInt64 {
		return nil
	}
	get := b.IntDec
	if get == nil && b.Class() == ClassInt && isInteger(b.T) {
		get = b.Int
	}
	if get == nil {
		return nil
	}
	limit := uint64(math.MaxInt64)
	if p < 19 {
		limit = uint64(math.Pow10(p)) - 1
	}
	neg, cabs := cu < 0, uint64(cu)
	if neg {
		cabs = uint64(-cu)
	}
	return func(r types.Row) (types.Decimal, bool) {
		v, null := get(r)
		if null {
			return types.Decimal{}, true
		}
		vabs, vneg := uint64(v), v < 0
		if vneg {
			vabs = -vabs
		}
		hi, lo := bits.Mul64(vabs, cabs)
		if hi != 0 || lo > limit {
			return general(r)
		}
		prod := int64(lo)
		if vneg != neg {
			prod = -prod
		}
		return types.NewDecimal(prod, s), false
	}
}

// modByConst returns x MOD d for a constant d in [2, 2^32) without a
// division for x in [0, 2^32) (Lemire's fastmod: the remainder is the high
// word of (M*x mod 2^64) * d, M = 2^64/d rounded up), and with Go's % for
// the others, whose sign it shares with x as SQL's MOD does.
func modByConst(x func(types.Row) (int64, bool), d int64) func(types.Row) (int64, bool) {
	m := ^uint64(0)/uint64(d) + 1
	ud := uint64(d)
	return func(r types.Row) (int64, bool) {
		u, null := x(r)
		if null {
			return 0, true
		}
		if uint64(u) < 1<<32 {
			hi, _ := bits.Mul64(m*uint64(u), ud)
			return int64(hi), false
		}
		return u % d, false
	}
}
