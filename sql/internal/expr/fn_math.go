package expr

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/eddystream/eddy/sql/types"
)

// The numeric functions. Functions of doubles (SQRT, LN, the trigonometric
// ones) follow Java's Math: NaN or an infinity where the value is not
// defined, as Flink gives.
func init() {
	num, dbl, integer := famNum, famDouble, famInt
	doubles := []struct {
		name, doc string
		f         func(float64) float64
	}{
		{"SQRT", "the square root of x", math.Sqrt},
		{"EXP", "e raised to the power of x", math.Exp},
		{"LN", "the natural logarithm of x", math.Log},
		{"LOG10", "the base 10 logarithm of x", math.Log10},
		{"LOG2", "the base 2 logarithm of x", func(x float64) float64 { return math.Log(x) / math.Log(2) }},
		{"SIN", "the sine of x", math.Sin},
		{"COS", "the cosine of x", math.Cos},
		{"TAN", "the tangent of x", math.Tan},
		{"COT", "the cotangent of x", func(x float64) float64 { return 1 / math.Tan(x) }},
		{"ASIN", "the arc sine of x", math.Asin},
		{"ACOS", "the arc cosine of x", math.Acos},
		{"ATAN", "the arc tangent of x", math.Atan},
		{"SINH", "the hyperbolic sine of x", math.Sinh},
		{"COSH", "the hyperbolic cosine of x", math.Cosh},
		{"TANH", "the hyperbolic tangent of x", math.Tanh},
		{"DEGREES", "the degrees of x radians", func(x float64) float64 { return x * 180 / math.Pi }},
		{"RADIANS", "the radians of x degrees", func(x float64) float64 { return x / 180 * math.Pi }},
	}
	for _, d := range doubles {
		d := d
		def(d.name, d.name+"(x): "+d.doc+", a DOUBLE",
			resolver(d.name, "a number", fixed(types.Double()), sigOf(dbl)),
			func(c *Call, args []*Eval) (*Eval, error) {
				x, f := args[0].Float, d.f
				return &Eval{Float: func(r types.Row) (float64, bool) {
					v, null := x(r)
					if null {
						return 0, true
					}
					return f(v), false
				}}, nil
			})
	}
	double2 := func(name, doc string, f func(a, b float64) float64) {
		def(name, doc, resolver(name, "two numbers", fixed(types.Double()), sigOf(dbl, dbl)),
			func(c *Call, args []*Eval) (*Eval, error) {
				x, y := args[0].Float, args[1].Float
				return &Eval{Float: func(r types.Row) (float64, bool) {
					a, n1 := x(r)
					b, n2 := y(r)
					if n1 || n2 {
						return 0, true
					}
					return f(a, b), false
				}}, nil
			})
	}
	double2("POWER", "POWER(x, y): x raised to the power of y, a DOUBLE", math.Pow)
	double2("ATAN2", "ATAN2(y, x): the arc tangent of the point (x, y), a DOUBLE", math.Atan2)
	def("LOG", "LOG(x) or LOG(base, x): the natural logarithm of x, or its logarithm to base; a DOUBLE",
		resolver("LOG", "(x) or (base, x)", fixed(types.Double()), sigOf(dbl), sigOf(dbl, dbl)),
		func(c *Call, args []*Eval) (*Eval, error) {
			if len(args) == 1 {
				x := args[0].Float
				return &Eval{Float: func(r types.Row) (float64, bool) { v, n := x(r); return math.Log(v), n }}, nil
			}
			b, x := args[0].Float, args[1].Float
			return &Eval{Float: func(r types.Row) (float64, bool) {
				base, n1 := b(r)
				v, n2 := x(r)
				if n1 || n2 {
					return 0, true
				}
				return math.Log(v) / math.Log(base), false
			}}, nil
		})
	def("ABS", "ABS(x): the absolute value of x, of the type of x",
		resolver("ABS", "a number", func(a []types.Type) types.Type { return a[0] }, sigOf(num)), compileAbs)
	def("SIGN", "SIGN(x): -1, 0 or 1 as x is negative, zero or positive, of the type of x",
		resolver("SIGN", "a number", func(a []types.Type) types.Type { return a[0] }, sigOf(num)), compileSign)
	register(&Builtin{
		Name: "MOD",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) != 2 || !famNum.accepts(args[0]) || !famNum.accepts(args[1]) {
				return types.Type{}, nil, &ArgError{"MOD", args, "two numbers"}
			}
			return resolveArith(types.OpMod, args)
		},
		Func: &Func{Compile: func(c *Call, args []*Eval) (*Eval, error) { return compileArith(types.OpMod, c, args) }},
		Doc:  "MOD(a, b): the remainder of a divided by b, negative only if a is; an error if b is 0",
	})
	for _, name := range []string{"CEIL", "CEILING", "FLOOR"} {
		up := name != "FLOOR"
		register(&Builtin{
			Name:    name,
			Resolve: resolveFloorCeil(name),
			Func:    &Func{Compile: func(c *Call, args []*Eval) (*Eval, error) { return compileFloorCeil(c, args, up) }},
			Check:   checkFloorUnit,
			Doc: name + "(x) or " + name + "(datetime TO unit): x rounded " + map[bool]string{true: "up", false: "down"}[up] +
				" to an integral value, or datetime rounded " + map[bool]string{true: "up", false: "down"}[up] +
				" to the unit (YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND)",
		})
	}
	for _, name := range []string{"ROUND", "TRUNCATE"} {
		trunc := name == "TRUNCATE"
		register(&Builtin{
			Name:    name,
			Resolve: resolveRound(name),
			Func:    &Func{Compile: func(c *Call, args []*Eval) (*Eval, error) { return compileRound(c, args, trunc) }},
			Check: func(c *Call) error {
				// A DECIMAL rounds to the scale of a constant d.
				t := c.Args[0].Type()
				if t.Kind() != types.KindDecimal {
					return nil
				}
				d := int64(0)
				if len(c.Args) == 2 {
					v, ok := constArg(c, 1)
					if !ok || v == nil {
						return nil
					}
					d, _ = intOf(v)
				}
				c.T = roundDecimalType(t.Precision(), t.Scale(), int(max(min(d, 38), -38))).WithNullability(c.T.IsNullable())
				return nil
			},
			Doc: name + "(x [, d]): x " + map[bool]string{true: "truncated", false: "rounded half away from zero"}[trunc] +
				" to d digits after the point (0 by default; before the point if d is negative); a DECIMAL keeps d digits of scale",
		})
	}
	register(&Builtin{
		Name: "RAND",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) > 1 || len(args) == 1 && !famInt.accepts(args[0]) {
				return types.Type{}, nil, &ArgError{"RAND", args, "() or (seed INT)"}
			}
			return types.Double().NotNull(), sigOf(integer).casts(args), nil
		},
		Func: &Func{Volatile: true, Compile: func(c *Call, args []*Eval) (*Eval, error) {
			rng := newRand(c, args)
			return &Eval{Float: func(types.Row) (float64, bool) { return rng.Float64(), false }}, nil
		}},
		Doc: "RAND() or RAND(seed): a pseudorandom DOUBLE in [0, 1); with a seed, the same sequence every run",
	})
	register(&Builtin{
		Name: "RAND_INTEGER",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) < 1 || len(args) > 2 || !famInt.accepts(args[0]) || !famInt.accepts(args[len(args)-1]) {
				return types.Type{}, nil, &ArgError{"RAND_INTEGER", args, "(bound INT) or (seed INT, bound INT)"}
			}
			return nullableIfAny(types.Int(), args[len(args)-1:]), sigOf(integer, integer).casts(args), nil
		},
		Func: &Func{Volatile: true, Compile: func(c *Call, args []*Eval) (*Eval, error) {
			rng := newRand(c, args[:len(args)-1])
			bound := args[len(args)-1].Int
			return &Eval{Int: func(r types.Row) (int64, bool) {
				b, null := bound(r)
				if null {
					return 0, true
				}
				if b <= 0 {
					fail(c, "the bound %d is not positive", b)
				}
				return rng.Int64N(b), false
			}}, nil
		}},
		Doc: "RAND_INTEGER(bound) or RAND_INTEGER(seed, bound): a pseudorandom INT in [0, bound); with a seed, the same sequence every run",
	})
	for _, k := range []struct {
		name string
		v    float64
	}{{"PI", math.Pi}, {"E", math.E}} {
		k := k
		register(&Builtin{
			Name: k.name,
			Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
				if len(args) != 0 {
					return types.Type{}, nil, &ArgError{k.name, args, "no arguments"}
				}
				return types.Double().NotNull(), nil, nil
			},
			Func: &Func{Compile: func(*Call, []*Eval) (*Eval, error) { return constEval(types.Double().NotNull(), k.v) }},
			Doc:  k.name + "(): the DOUBLE closest to " + strings.ToLower(k.name),
		})
	}
	def("BIN", "BIN(integer): integer in binary digits (two's complement of 64 bits if negative)",
		resolver("BIN", "an integer", fixed(types.String()), sigOf(integer)),
		func(c *Call, args []*Eval) (*Eval, error) {
			x := args[0].Int
			return &Eval{Str: func(r types.Row) (string, bool) {
				v, null := x(r)
				if null {
					return "", true
				}
				return strconv.FormatUint(uint64(v), 2), false
			}}, nil
		})
	def("HEX", "HEX(integer) or HEX(string): integer in upper-case hexadecimal digits (two's complement if negative), or the bytes of string (UTF-8) in hexadecimal",
		resolver("HEX", "an integer or a string", fixed(types.String()), sigOf(integer), sigOf(famText)),
		func(c *Call, args []*Eval) (*Eval, error) {
			if args[0].Class() == ClassInt {
				x := args[0].Int
				return &Eval{Str: func(r types.Row) (string, bool) {
					v, null := x(r)
					if null {
						return "", true
					}
					return strings.ToUpper(strconv.FormatUint(uint64(v), 16)), false
				}}, nil
			}
			return strFn1(func(s string) string { return strings.ToUpper(fmt.Sprintf("%x", s)) })(c, args)
		})
}

func newRand(c *Call, seed []*Eval) *rand.Rand {
	if len(seed) == 1 && seed[0].Const {
		if s, null := seed[0].Int(types.Row{}); !null {
			return rand.New(rand.NewPCG(uint64(s), 0x9e3779b97f4a7c15))
		}
	}
	return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
}

func compileAbs(c *Call, args []*Eval) (*Eval, error) {
	x := args[0]
	switch x.Class() {
	case ClassInt:
		f := x.Int
		lo, _ := intRange(c.T)
		return &Eval{Int: func(r types.Row) (int64, bool) {
			v, null := f(r)
			if v < 0 {
				if v == lo {
					fail(c, "the result overflows %s", c.T)
				}
				v = -v
			}
			return v, null
		}}, nil
	case ClassFloat:
		f := x.Float
		return &Eval{Float: func(r types.Row) (float64, bool) { v, n := f(r); return math.Abs(v), n }}, nil
	}
	f := x.Dec
	return &Eval{Dec: func(r types.Row) (types.Decimal, bool) { v, n := f(r); return v.Abs(), n }}, nil
}

func compileSign(c *Call, args []*Eval) (*Eval, error) {
	x := args[0]
	switch x.Class() {
	case ClassInt:
		f := x.Int
		return &Eval{Int: func(r types.Row) (int64, bool) {
			v, null := f(r)
			switch {
			case v > 0:
				return 1, null
			case v < 0:
				return -1, null
			}
			return 0, null
		}}, nil
	case ClassFloat:
		f := x.Float
		return &Eval{Float: func(r types.Row) (float64, bool) {
			v, null := f(r)
			switch {
			case v > 0:
				return 1, null
			case v < 0:
				return -1, null
			}
			return v, null
		}}, nil
	}
	f, s := x.Dec, c.T.Scale()
	return &Eval{Dec: func(r types.Row) (types.Decimal, bool) {
		v, null := f(r)
		return types.DecimalFromInt64(int64(v.Sign())).Rescale(s), null
	}}, nil
}

// roundDecimalType is Flink's type of ROUND(DECIMAL(p, s), r).
func roundDecimalType(p, s, r int) types.Type {
	switch {
	case r >= s:
		return types.DecimalType(p, s)
	case r < 0:
		return types.DecimalType(min(types.MaxDecimalPrecision, 1+p-s), 0)
	}
	return types.DecimalType(min(types.MaxDecimalPrecision, 1+p-s+r), r)
}

func resolveRound(name string) func([]types.Type) (types.Type, []types.Type, error) {
	return func(args []types.Type) (types.Type, []types.Type, error) {
		if len(args) < 1 || len(args) > 2 || !famNum.accepts(args[0]) || len(args) == 2 && !famInt.accepts(args[1]) {
			return types.Type{}, nil, &ArgError{name, args, "(number [, digits INT])"}
		}
		casts := sigOf(famNum, famInt).casts(args)
		t := casts[0]
		return nullableIfAny(t, args), casts, nil
	}
}

// roundTo rounds d to r digits after the point (before it if r is
// negative), half away from zero or toward zero (trunc), and returns the
// result at scale max(r, 0).
func roundTo(d types.Decimal, r int, trunc bool) types.Decimal {
	s := d.Scale()
	if r >= s {
		return d
	}
	if !trunc && r >= 0 {
		return d.Rescale(r)
	}
	u := d.BigUnscaled()
	div := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s-r)), nil)
	q, m := new(big.Int).QuoRem(u, div, new(big.Int))
	if !trunc {
		m2 := new(big.Int).Abs(m)
		m2.Lsh(m2, 1)
		if m2.Cmp(div) >= 0 {
			q.Add(q, big.NewInt(int64(u.Sign())))
		}
	}
	if r < 0 {
		q.Mul(q, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-r)), nil))
		return types.DecimalFromBig(q, 0)
	}
	return types.DecimalFromBig(q, r)
}

func compileRound(c *Call, args []*Eval, trunc bool) (*Eval, error) {
	x := args[0]
	digits := func(types.Row) (int64, bool) { return 0, false }
	if len(args) == 2 {
		digits = args[1].Int
	}
	t := c.T
	switch x.Class() {
	case ClassInt:
		f := x.Int
		lo, hi := intRange(t)
		return &Eval{Int: func(r types.Row) (int64, bool) {
			v, n1 := f(r)
			d, n2 := digits(r)
			if n1 || n2 {
				return 0, true
			}
			if d >= 0 {
				return v, false
			}
			out, ok := roundTo(types.DecimalFromInt64(v), int(max(d, -20)), trunc).Int64()
			if !ok || out < lo || out > hi {
				fail(c, "the result overflows %s", t)
			}
			return out, false
		}}, nil
	case ClassFloat:
		f := x.Float
		single := t.Kind() == types.KindFloat
		return &Eval{Float: func(r types.Row) (float64, bool) {
			v, n1 := f(r)
			d, n2 := digits(r)
			if n1 || n2 {
				return 0, true
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return v, false
			}
			dec, err := types.DecimalFromFloat64(v)
			if single {
				dec, err = types.DecimalFromFloat64(float64(float32(v)))
			}
			if err != nil {
				failErr(c, err)
			}
			out := roundTo(dec, int(max(min(d, 400), -400)), trunc).Float64()
			if single {
				out = float64(float32(out))
			}
			return out, false
		}}, nil
	}
	f := x.Dec
	p, s := t.Precision(), t.Scale()
	return &Eval{Dec: func(r types.Row) (types.Decimal, bool) {
		v, n1 := f(r)
		d, n2 := digits(r)
		if n1 || n2 {
			return types.Decimal{}, true
		}
		out, err := roundTo(v, int(max(min(d, 38), -38)), trunc).Fit(p, s)
		if err != nil {
			failErr(c, err)
		}
		return out, false
	}}, nil
}
