package plan

import (
	"errors"
	"fmt"
	"math"

	"github.com/eddystream/eddy/sketch"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// The approximate aggregates fold their values into a synopsis of package
// sketch:
//
//   - APPROX_COUNT_DISTINCT(x [, precision]): a HyperLogLog of 2^precision
//     registers (4 to 18, by default 14: a relative standard error of
//     1.04/√16384 ≈ 0.81%, the accuracy of Flink's APPROX_COUNT_DISTINCT);
//     BIGINT NOT NULL, 0 for no values.
//   - APPROX_PERCENTILE(x, p [, k]): the p-quantile (p a constant in
//     [0, 1]) of a KLL sketch of accuracy k (8 to 65535, by default 200: a
//     normalised rank error of about 1.3%); DOUBLE, NULL for no values. While
//     a group has fewer than k values the sketch holds them all and the
//     result is exact: the smallest value whose rank is at least p.
//
// Both merge, so they run in every window (the panes of HOP and CUMULATE,
// merged SESSION windows) and in GROUP BY over an insert-only input. Neither
// can take a value back: over a changelog that retracts rows they are
// refused when the query is planned.
//
// A synopsis lives in the accumulator (Acc.Syn) as a Go value that the
// calls change in place, so that a row costs one update of the sketch and
// no copy of it; this is safe because state backends hand out copies of
// the values that a snapshot in progress holds, and encode the rest before
// they persist it. The accumulator is encoded with the state's default
// codec, which writes every field of the sketch, its random state
// included, so a restored job goes on with the very sketch it had.

const (
	defaultHLLPrecision = 14
	defaultKLLK         = 200
	// kllSeed seeds the compaction coins of every KLL sketch, mixed with
	// the sketch's first value so that the panes and keys a window merges
	// flip independent coins, and a run is reproducible.
	kllSeed = 0x6b6c6c5f73716c31
)

// Synopsis is the sketch of one APPROX_COUNT_DISTINCT (HLL) or
// APPROX_PERCENTILE (KLL) call in an accumulator; the pointer is nil until
// the call's first value.
type Synopsis struct {
	HLL *sketch.HyperLogLog
	KLL *sketch.KLL
}

// isApproxAggregate tells whether name is an aggregate that takes constant
// arguments after its first.
func isApproxAggregate(name string) bool {
	return name == "APPROX_COUNT_DISTINCT" || name == "APPROX_PERCENTILE"
}

// approxParams checks the arguments of an approximate aggregate call and
// returns its constant ones: APPROX_COUNT_DISTINCT's precision,
// APPROX_PERCENTILE's fraction and accuracy, defaults filled in. It returns
// nil for the other aggregates.
func (g *aggregation) approxParams(name string, c *parser.FuncCall) ([]float64, error) {
	if !isApproxAggregate(name) {
		return nil, nil
	}
	lo, hi, sig := 1, 2, "APPROX_COUNT_DISTINCT(x [, precision])"
	if name == "APPROX_PERCENTILE" {
		lo, hi, sig = 2, 3, "APPROX_PERCENTILE(x, fraction [, accuracy])"
		if c.Distinct {
			return nil, g.q.errorf(c.Pos, "APPROX_PERCENTILE(DISTINCT ...) is not supported: it is the percentile of the rows' values; deduplicate them first (SELECT DISTINCT in a subquery)")
		}
	}
	if len(c.Args) < lo || len(c.Args) > hi {
		return nil, g.q.errorf(c.Pos, "%s takes %d to %d arguments, not %d: %s", name, lo, hi, len(c.Args), sig)
	}
	constant := func(i int, what string) (float64, error) {
		e, err := g.base.Expr(c.Args[i])
		if err != nil {
			return 0, err
		}
		if l, ok := e.(*expr.Literal); ok {
			if f, ok := literalFloat(l.V); ok {
				return f, nil
			}
		}
		return 0, g.q.errorf(c.Args[i].Position(), "the %s of %s must be a numeric constant, not %s", what, name, e)
	}
	integer := func(i int, what string, min, max, def int) (float64, error) {
		if i >= len(c.Args) {
			return float64(def), nil
		}
		f, err := constant(i, what)
		if err != nil {
			return 0, err
		}
		if f != math.Trunc(f) || f < float64(min) || f > float64(max) {
			return 0, g.q.errorf(c.Args[i].Position(), "the %s of %s must be an integer from %d to %d, not %v", what, name, min, max, f)
		}
		return f, nil
	}
	if name == "APPROX_COUNT_DISTINCT" {
		p, err := integer(1, "precision", sketch.HyperLogLogMinPrecision, sketch.HyperLogLogMaxPrecision, defaultHLLPrecision)
		if err != nil {
			return nil, err
		}
		return []float64{p}, nil
	}
	q, err := constant(1, "fraction")
	if err != nil {
		return nil, err
	}
	if !(q >= 0 && q <= 1) {
		return nil, g.q.errorf(c.Args[1].Position(), "the fraction of APPROX_PERCENTILE must be in [0, 1] (0.5 for the median), not %v", q)
	}
	k, err := integer(2, "accuracy", 8, math.MaxUint16, defaultKLLK)
	if err != nil {
		return nil, err
	}
	return []float64{q, k}, nil
}

// literalFloat returns a numeric constant as a float64.
func literalFloat(v types.Value) (float64, bool) {
	switch v := v.(type) {
	case int8:
		return float64(v), true
	case int16:
		return float64(v), true
	case int32:
		return float64(v), true
	case int64:
		return float64(v), true
	case float32:
		return float64(v), true
	case float64:
		return v, true
	case types.Decimal:
		return v.Float64(), true
	}
	return 0, false
}

// approxResultType is the result type of an approximate aggregate of arg.
func approxResultType(name string, arg types.Type) (types.Type, error) {
	if name == "APPROX_COUNT_DISTINCT" {
		if arg.IsConstructed() {
			return types.Type{}, fmt.Errorf("APPROX_COUNT_DISTINCT takes a value that can be grouped, not %s", arg)
		}
		return types.BigInt().NotNull(), nil
	}
	if !arg.IsNumeric() {
		return types.Type{}, fmt.Errorf("APPROX_PERCENTILE takes a number, not %s", arg)
	}
	return types.Double().Nullable(), nil
}

// approxSlots places an approximate aggregate call in the accumulator.
// retract says whether the input retracts rows, which no synopsis can
// take back.
func (a *sqlAgg) approxSlots(c *aggCall, s *aggSlots, retract bool) error {
	if retract {
		alt := "COUNT(DISTINCT ...), which keeps the values in state"
		if c.Name == "APPROX_PERCENTILE" {
			alt = "a window aggregation over the rows before they change"
		}
		return fmt.Errorf("%s cannot take rows back (its %s sketch cannot forget a value), but its input is a changelog that retracts rows; aggregate an insert-only input, or use %s",
			c.text, map[string]string{"APPROX_COUNT_DISTINCT": "HyperLogLog", "APPROX_PERCENTILE": "KLL"}[c.Name], alt)
	}
	s.kind = kKLL
	if c.Name == "APPROX_COUNT_DISTINCT" {
		s.kind = kHLL
		c.Distinct = false // the count is of distinct values already
	}
	s.x = a.syns
	a.syns++
	return nil
}

// foldApprox adds the value of call i's argument in to its synopsis.
func (a *sqlAgg) foldApprox(i int, c *aggCall, s *aggSlots, acc *Acc, in types.Row, sign int64) {
	if sign < 0 {
		// approxSlots refuses retracting inputs: an operator that takes a
		// row back nevertheless fails rather than count it twice.
		panic(&expr.Error{Expr: c.text, Err: errors.New("a synopsis cannot take a value back")})
	}
	syn := &acc.Syn[s.x]
	if s.kind == kKLL {
		x := a.float(c, in)
		if syn.KLL == nil {
			syn.KLL = sketch.NewKLL(int(c.Params[1]), kllSeed^mix64(math.Float64bits(x)))
		}
		syn.KLL.Add(x)
		return
	}
	if syn.HLL == nil {
		syn.HLL = sketch.NewHyperLogLog(uint8(c.Params[0]))
	}
	switch class := expr.ClassOf(c.ArgType); {
	case class == expr.ClassInt || class == expr.ClassBool:
		x, _ := s.read(in)
		syn.HLL.AddUint64(x)
	case c.ArgType.Kind() == types.KindChar || c.ArgType.Kind() == types.KindVarChar:
		syn.HLL.AddString(in.String(c.Arg))
	default:
		// The value's key encoding, which COUNT(DISTINCT) compares too.
		syn.HLL.AddString(a.keys[i].Key(in))
	}
}

// mergeApprox merges the synopsis of y into out's. out's synopsis is out's
// own (a copy of y's if out had none); y's is left as it was.
func (a *sqlAgg) mergeApprox(s *aggSlots, out *Acc, y Acc) {
	dst, src := &out.Syn[s.x], &y.Syn[s.x]
	var err error
	switch {
	case s.kind == kHLL && src.HLL != nil && dst.HLL == nil:
		dst.HLL = src.HLL.Clone()
	case s.kind == kHLL && src.HLL != nil:
		err = dst.HLL.Merge(src.HLL)
	case s.kind == kKLL && src.KLL != nil && dst.KLL == nil:
		dst.KLL = src.KLL.Clone()
	case s.kind == kKLL && src.KLL != nil:
		err = dst.KLL.Merge(src.KLL)
	}
	if err != nil {
		// The calls of one plan make sketches of equal parameters; others
		// come from the state of a job planned with other ones.
		panic(fmt.Errorf("merging the sketches of an approximate aggregate: %w (was the job restored from the state of a query with other arguments?)", err))
	}
}

// resultApprox writes the result of an approximate aggregate call.
func (a *sqlAgg) resultApprox(c *aggCall, s *aggSlots, acc Acc, w *types.RowWriter, i int) {
	syn := acc.Syn[s.x]
	if s.kind == kHLL {
		n := int64(0)
		if syn.HLL != nil {
			n = int64(syn.HLL.Estimate())
		}
		w.SetInt64(i, n)
		return
	}
	if syn.KLL == nil || syn.KLL.Count() == 0 {
		w.SetNull(i)
		return
	}
	w.SetFloat64(i, syn.KLL.Quantile(c.Params[0]))
}

// mix64 is the finaliser of splitmix64: a bijection of the 64-bit words
// whose every output bit depends on every input bit.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
