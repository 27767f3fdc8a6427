package plan

import (
	"fmt"
	"math"
	"math/big"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// scaledPredicate returns the predicate of a conjunct that compares a
// constant multiple of an integer field with a constant (0.908 * price >
// 1000000), as the comparison of the field with the constant divided by
// the multiple, rounded toward the values that keep its truth (price >
// 1101321): the same rows pass, so a source can filter them before it
// writes a row. The product must be an exact DECIMAL, whose scale is the
// sum of its operands' and whose precision is at least the sum of theirs
// (it can then neither overflow nor round); an equality with a bound that is not an integer, and a
// bound out of the field's range, give no predicate.
func scaledPredicate(e expr.Expr, rt *types.RowType) (connector.Predicate, bool) {
	c, ok := e.(*expr.Call)
	if !ok || len(c.Args) != 2 {
		return connector.Predicate{}, false
	}
	op, ok := compareOps[c.Name]
	if !ok || op == connector.OpIsNull || op == connector.OpIsNotNull {
		return connector.Predicate{}, false
	}
	prod, k := c.Args[0], c.Args[1]
	path, mult, ok := scaledField(prod)
	if !ok {
		prod, k, op = k, prod, flipped[op]
		if path, mult, ok = scaledField(prod); !ok {
			return connector.Predicate{}, false
		}
	}
	ft, ok := connector.PathType(rt, path)
	if !ok || !ft.IsIntegral() {
		return connector.Predicate{}, false
	}
	kv, ok := constValue(k)
	if !ok || kv == nil || !k.Type().IsExactNumeric() {
		return connector.Predicate{}, false
	}
	bound, ok := new(big.Rat).SetString(fmt.Sprint(kv))
	if !ok || mult.Sign() == 0 {
		return connector.Predicate{}, false
	}
	bound.Quo(bound, mult)
	if mult.Sign() < 0 {
		op = flipped[op]
	}
	// The integer bound: x > b is x > floor(b), x >= b is x >= ceil(b),
	// x < b is x < ceil(b), x <= b is x <= floor(b).
	floor, ceil := ratFloor(bound), ratFloor(bound)
	if !bound.IsInt() {
		ceil = new(big.Int).Add(floor, big.NewInt(1))
	}
	var b *big.Int
	switch op {
	case connector.OpGreater, connector.OpLessOrEqual:
		b = floor
	case connector.OpGreaterOrEqual, connector.OpLess:
		b = ceil
	default:
		if !bound.IsInt() {
			return connector.Predicate{}, false
		}
		b = floor
	}
	if !b.IsInt64() || !fitsIntegral(b.Int64(), ft) {
		return connector.Predicate{}, false
	}
	v, err := types.CastValue(b.Int64(), types.BigInt(), ft.NotNull(), nil)
	if err != nil || v == nil {
		return connector.Predicate{}, false
	}
	return connector.Predicate{Path: path, Op: op, Value: v}, true
}

// scaledField returns the path of the integer field and the constant
// multiple of an exact DECIMAL product of a constant and a field.
func scaledField(e expr.Expr) ([]int, *big.Rat, bool) {
	c, ok := e.(*expr.Call)
	if !ok || c.Name != "*" || len(c.Args) != 2 || c.T.Kind() != types.KindDecimal {
		return nil, nil, false
	}
	a, x := c.Args[0], c.Args[1]
	if _, isConst := constValue(a); !isConst {
		a, x = x, a
	}
	av, ok := constValue(a)
	if !ok || av == nil || !a.Type().IsExactNumeric() {
		return nil, nil, false
	}
	// The product casts an integer operand to the DECIMAL that holds it.
	if cast, ok := x.(*expr.Cast); ok && !cast.Try && cast.X.Type().IsIntegral() &&
		cast.T.Kind() == types.KindDecimal && cast.T.Scale() == 0 && cast.T.Precision() >= cast.X.Type().Precision() {
		x = cast.X
	}
	path, ok := fieldPath(x)
	if !ok || !x.Type().IsIntegral() {
		return nil, nil, false
	}
	at, xt := c.Args[0].Type(), c.Args[1].Type()
	if c.T.Precision() < at.Precision()+xt.Precision() || c.T.Scale() != at.Scale()+xt.Scale() {
		return nil, nil, false
	}
	m, ok := new(big.Rat).SetString(fmt.Sprint(av))
	return path, m, ok
}

// ratFloor returns the greatest integer at most r.
func ratFloor(r *big.Rat) *big.Int {
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() < 0 {
		q.Sub(q, big.NewInt(1))
	}
	return q
}

// fitsIntegral tells whether v is a value of the integer type t.
func fitsIntegral(v int64, t types.Type) bool {
	switch t.Kind() {
	case types.KindTinyInt:
		return v >= math.MinInt8 && v <= math.MaxInt8
	case types.KindSmallInt:
		return v >= math.MinInt16 && v <= math.MaxInt16
	case types.KindInt:
		return v >= math.MinInt32 && v <= math.MaxInt32
	}
	return true
}
