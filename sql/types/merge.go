package types

import "fmt"

// CommonType returns the most specific type that every one of types can be
// cast to implicitly, as Flink's LogicalTypeMerging.findCommonType (used
// for UNION, CASE, COALESCE, IN, VALUES): integers widen along TINYINT <
// SMALLINT < INT < BIGINT; an integer and a DECIMAL give a DECIMAL with
// room for both (INT counts as DECIMAL(10, 0), BIGINT as DECIMAL(19, 0));
// FLOAT and DOUBLE win over exact numbers (DOUBLE when a DECIMAL is
// involved); CHAR and VARCHAR give VARCHAR of the largest length (CHAR if
// all are CHAR of one length), BINARY and VARBINARY likewise; TIME and
// TIMESTAMP take the largest precision, TIMESTAMP_LTZ wins over TIMESTAMP;
// ROW, ARRAY, MAP and MULTISET merge field by field. The result is
// nullable if any input is (or is the NULL type). It reports false when
// there is no common type, and for only NULL types (an untyped NULL needs
// a CAST).
func CommonType(types ...Type) (Type, bool) {
	if len(types) == 0 {
		return Type{}, false
	}
	nullable := false
	for _, t := range types {
		if t.IsNullable() {
			nullable = true
		}
	}
	var res Type
	found := false
	for _, t := range types {
		t = t.Nullable()
		if t.kind == KindNull {
			continue
		}
		if !found {
			res, found = t, true
		}
		var ok bool
		res, ok = merge2(res, t)
		if !ok {
			res, ok = castableMerge(types)
			if !ok {
				return Type{}, false
			}
			break
		}
	}
	if !found {
		return Type{}, false
	}
	return res.WithNullability(nullable), true
}

// castableMerge is Flink's fallback: the one type all others cast to
// implicitly.
func castableMerge(types []Type) (Type, bool) {
	var res Type
	first := true
	for _, t := range types {
		t = t.Nullable()
		if t.kind == KindNull {
			continue
		}
		if first {
			res, first = t, false
			continue
		}
		if SupportsImplicitCast(res, t) {
			res = t
		} else if !SupportsImplicitCast(t, res) {
			return Type{}, false
		}
	}
	return res, !first
}

// merge2 merges two nullable, non-NULL types, or reports false.
func merge2(a, b Type) (Type, bool) {
	// Patterns of datetime arithmetic.
	switch {
	case a.IsTemporal() && b.IsInterval():
		return a, true
	case a.IsInterval() && b.IsTemporal():
		return b, true
	case (a.IsTimestamp() || a.kind == KindDate) && b.IsExactNumeric():
		return a, true
	case a.IsExactNumeric() && (b.IsTimestamp() || b.kind == KindDate):
		return b, true
	}
	switch {
	case a.IsConstructed() || b.IsConstructed():
		if a.kind != b.kind {
			return Type{}, false
		}
		switch a.kind {
		case KindArray, KindMultiset:
			e, ok := CommonType(*a.elem, *b.elem)
			if !ok {
				return Type{}, false
			}
			if a.kind == KindArray {
				return ArrayOf(e), true
			}
			return MultisetOf(e), true
		case KindMap:
			k, ok1 := CommonType(*a.elem, *b.elem)
			v, ok2 := CommonType(*a.val, *b.val)
			if !ok1 || !ok2 {
				return Type{}, false
			}
			return MapOf(k, v), true
		case KindRow:
			if a.row.Len() != b.row.Len() {
				return Type{}, false
			}
			fs := make([]Field, a.row.Len())
			for i := range fs {
				ft, ok := CommonType(a.row.FieldType(i), b.row.FieldType(i))
				if !ok {
					return Type{}, false
				}
				fs[i] = F(a.row.Field(i).Name, ft)
			}
			return MustRowType(fs...).Type(), true
		}
	case a.IsString() && b.IsString(), a.IsBinary() && b.IsBinary():
		n := max(a.p, b.p)
		if a.kind == KindVarChar || a.kind == KindVarBinary {
			return Type{kind: a.kind, p: n}, true
		}
		if a.p != b.p {
			if a.kind == KindChar {
				return Type{kind: KindVarChar, p: n}, true
			}
			return Type{kind: KindVarBinary, p: n}, true
		}
		return Type{kind: b.kind, p: n}, true
	case a.IsNumeric() && b.IsNumeric():
		switch {
		case a.IsExactNumeric() && b.IsExactNumeric():
			return commonExact(a, b), true
		case a.IsApproximateNumeric() && b.IsApproximateNumeric():
			if a.kind == KindDouble || b.kind == KindDouble {
				return Double(), true
			}
			return a, true
		case a.kind == KindDecimal || b.kind == KindDecimal:
			return Double(), true
		case a.IsApproximateNumeric():
			return a, true
		}
		return b, true
	case a.kind == KindDate && b.kind == KindDate:
		return a, true
	case a.kind == KindTime && b.kind == KindTime:
		return TimeType(int(max(a.p, b.p))), true
	case a.IsTimestamp() && b.IsTimestamp():
		p := int(max(a.p, b.p))
		if a.kind == KindTimestampLTZ || b.kind == KindTimestampLTZ {
			return TimestampLTZType(p), true
		}
		return TimestampType(p), true
	case a.IsInterval() && a.kind == b.kind:
		return a, true
	}
	if a.kind == b.kind && a.EqualIgnoringNullability(b) {
		return a, true
	}
	return Type{}, false
}

// commonExact merges two exact numeric types.
func commonExact(a, b Type) Type {
	if a.kind != KindDecimal && b.kind != KindDecimal {
		if b.kind > a.kind {
			return b
		}
		return a
	}
	p1, s1, p2, s2 := a.Precision(), a.Scale(), b.Precision(), b.Scale()
	d := min(max(p1-s1, p2-s2), MaxDecimalPrecision)
	s := min(max(s1, s2), MaxDecimalPrecision-d)
	return DecimalType(d+s, s)
}

// asDecimal returns the DECIMAL type of an exact numeric type (INT is
// DECIMAL(10, 0)).
func asDecimal(t Type) (p, s int) {
	if t.kind == KindDecimal {
		return int(t.p), int(t.s)
	}
	return t.Precision(), 0
}

// adjustDecimal caps a derived DECIMAL at precision 38, giving up scale
// (keeping at least min(scale, 6) digits) to keep the integral digits, as
// Flink does (the Hive/Spark rule).
func adjustDecimal(precision, scale int) Type {
	if precision <= MaxDecimalPrecision {
		return DecimalType(precision, scale)
	}
	intDigits := precision - scale
	minScale := min(scale, 6)
	return DecimalType(MaxDecimalPrecision, max(MaxDecimalPrecision-intDigits, minScale))
}

// DecimalAddType returns the type of DECIMAL(p1, s1) + or - DECIMAL(p2, s2):
// scale max(s1, s2), precision max(p1-s1, p2-s2) + scale + 1, adjusted to
// at most 38.
func DecimalAddType(p1, s1, p2, s2 int) Type {
	s := max(s1, s2)
	return adjustDecimal(max(p1-s1, p2-s2)+s+1, s)
}

// DecimalMultiplyType returns the type of DECIMAL(p1, s1) * DECIMAL(p2,
// s2): DECIMAL(p1 + p2 + 1, s1 + s2), adjusted to at most 38.
func DecimalMultiplyType(p1, s1, p2, s2 int) Type { return adjustDecimal(p1+p2+1, s1+s2) }

// DecimalDivideType returns the type of DECIMAL(p1, s1) / DECIMAL(p2, s2):
// scale max(6, s1 + p2 + 1), precision p1 - s1 + s2 + scale, adjusted to
// at most 38.
func DecimalDivideType(p1, s1, p2, s2 int) Type {
	s := max(6, s1+p2+1)
	return adjustDecimal(p1-s1+s2+s, s)
}

// DecimalModType returns the type of DECIMAL(p1, s1) % DECIMAL(p2, s2):
// scale max(s1, s2), precision min(p1-s1, p2-s2) + scale.
func DecimalModType(p1, s1, p2, s2 int) Type {
	s := max(s1, s2)
	return adjustDecimal(min(p1-s1, p2-s2)+s, s)
}

// DecimalSumType returns the type of SUM over DECIMAL(p, s):
// DECIMAL(38, s).
func DecimalSumType(p, s int) Type { return DecimalType(MaxDecimalPrecision, s) }

// DecimalAvgType returns the type of AVG over DECIMAL(p, s): DECIMAL(38,
// max(6, s)) as Flink derives it (a division by DECIMAL(20, 0)).
func DecimalAvgType(p, s int) Type { return DecimalDivideType(MaxDecimalPrecision, s, 20, 0) }

// ArithmeticOp is a binary arithmetic operator.
type ArithmeticOp uint8

// The arithmetic operators.
const (
	OpAdd ArithmeticOp = iota
	OpSubtract
	OpMultiply
	OpDivide
	OpMod
)

var opNames = [...]string{"+", "-", "*", "/", "%"}

// String returns the operator's symbol.
func (op ArithmeticOp) String() string {
	if int(op) < len(opNames) {
		return opNames[op]
	}
	return fmt.Sprintf("ArithmeticOp(%d)", uint8(op))
}

// ArithmeticType returns the type of a op b for numeric operands, as
// Flink's planner derives it: two integers give the wider integer (INT / INT
// is an integer division, as in Flink); a DECIMAL with an exact number
// gives the DECIMAL of Decimal*Type, integers counting as DECIMAL(10, 0)
// and the like; FLOAT and DOUBLE give the wider of them, and DOUBLE with a
// DECIMAL. The result is nullable if an operand is. Interval and datetime
// arithmetic is the planner's.
func ArithmeticType(op ArithmeticOp, a, b Type) (Type, error) {
	if !a.IsNumeric() || !b.IsNumeric() {
		return Type{}, fmt.Errorf("types: cannot apply %s to %s and %s: both operands must be numeric", op, a, b)
	}
	nullable := a.IsNullable() || b.IsNullable()
	var res Type
	switch {
	case a.IsIntegral() && b.IsIntegral():
		res = commonExact(a.Nullable(), b.Nullable())
	case a.IsExactNumeric() && b.IsExactNumeric():
		p1, s1 := asDecimal(a)
		p2, s2 := asDecimal(b)
		switch op {
		case OpAdd, OpSubtract:
			res = DecimalAddType(p1, s1, p2, s2)
		case OpMultiply:
			res = DecimalMultiplyType(p1, s1, p2, s2)
		case OpDivide:
			res = DecimalDivideType(p1, s1, p2, s2)
		case OpMod:
			res = DecimalModType(p1, s1, p2, s2)
		}
	default:
		res, _ = merge2(a.Nullable(), b.Nullable())
	}
	return res.WithNullability(nullable), nil
}
