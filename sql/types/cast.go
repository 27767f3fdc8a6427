package types

// SupportsImplicitCast reports whether a value of type from can be used
// where to is expected without an explicit CAST, as Flink's
// LogicalTypeCasts: safe widenings only (TINYINT to BIGINT, any number to
// DECIMAL or DOUBLE, exact numbers to FLOAT, CHAR to VARCHAR, BINARY to
// VARBINARY, TIMESTAMP to TIMESTAMP_LTZ and back, TIMESTAMP to DATE and
// TIME; constructed types of the same kind whose children cast
// implicitly). A nullable type does not cast implicitly to a NOT NULL one.
func SupportsImplicitCast(from, to Type) bool { return supportsCast(from, to, false) }

// SupportsExplicitCast reports whether CAST(x AS to) (or TRY_CAST) is valid
// for x of type from, by the matrix of Flink's documentation: every
// predefined type casts to CHAR/VARCHAR, strings cast to everything but
// intervals and constructed types, BOOLEAN and numbers cast among
// themselves, DATE, TIME, TIMESTAMP and TIMESTAMP_LTZ among themselves (not
// DATE to TIME or back), INT to and from INTERVAL YEAR TO MONTH and BIGINT
// to and from INTERVAL DAY TO SECOND, BINARY/VARBINARY to strings and
// binary strings, and constructed types to the same kind when their
// children cast. NULL casts to anything.
func SupportsExplicitCast(from, to Type) bool { return supportsCast(from, to, true) }

// CastCanFail reports whether CAST from one type to another can fail at
// run time (the '!' of Flink's matrix), where TRY_CAST gives NULL: from a
// character string to any other type, and between constructed types whose
// children's casts can fail. (Narrowing numeric casts do not fail in
// Flink: they wrap or round.)
func CastCanFail(from, to Type) bool {
	if from.kind == KindNull {
		return false
	}
	if from.IsString() {
		return !to.IsString()
	}
	switch from.kind {
	case KindArray, KindMultiset:
		return to.kind == from.kind && CastCanFail(*from.elem, *to.elem)
	case KindMap:
		return to.kind == KindMap && (CastCanFail(*from.elem, *to.elem) || CastCanFail(*from.val, *to.val))
	case KindRow:
		if to.kind != KindRow || to.row.Len() != from.row.Len() {
			return false
		}
		for i := 0; i < from.row.Len(); i++ {
			if CastCanFail(from.row.FieldType(i), to.row.FieldType(i)) {
				return true
			}
		}
	}
	return false
}

// CastType returns the type of CAST(x AS to) (try false) or TRY_CAST(x AS
// to) (try true) for x of type from: CAST keeps the nullability of its
// input, TRY_CAST is always nullable.
func CastType(from, to Type, try bool) Type {
	if try {
		return to.Nullable()
	}
	return to.WithNullability(from.IsNullable())
}

func supportsCast(from, to Type, explicit bool) bool {
	if !explicit && from.IsNullable() && !to.IsNullable() {
		return false
	}
	if from.EqualIgnoringNullability(to) || from.kind == KindNull {
		return true
	}
	if from.IsConstructed() || to.IsConstructed() {
		if to.IsString() && explicit && from.IsConstructed() {
			return true
		}
		if from.kind != to.kind {
			return false
		}
		switch from.kind {
		case KindArray, KindMultiset:
			return supportsCast(*from.elem, *to.elem, explicit)
		case KindMap:
			return supportsCast(*from.elem, *to.elem, explicit) && supportsCast(*from.val, *to.val, explicit)
		case KindRow:
			if from.row.Len() != to.row.Len() {
				return false
			}
			for i := 0; i < from.row.Len(); i++ {
				if !supportsCast(from.row.FieldType(i), to.row.FieldType(i), explicit) {
					return false
				}
			}
			return true
		}
		return false
	}
	if implicitCast(from.kind, to.kind) {
		return true
	}
	return explicit && explicitCast(from, to)
}

// implicitCast is the implicit part of Flink's casting rules, by kind.
func implicitCast(from, to Kind) bool {
	if from == to {
		return true
	}
	switch to {
	case KindVarChar:
		return from == KindChar
	case KindVarBinary:
		return from == KindBinary
	case KindSmallInt:
		return from == KindTinyInt
	case KindInt:
		return from == KindTinyInt || from == KindSmallInt
	case KindBigInt:
		return from >= KindTinyInt && from <= KindInt
	case KindDecimal, KindDouble:
		return from >= KindTinyInt && from <= KindDecimal
	case KindFloat:
		return (from >= KindTinyInt && from <= KindBigInt) || from == KindDecimal
	case KindDate, KindTime:
		return from == KindTimestamp
	case KindTimestamp:
		return from == KindTimestampLTZ
	case KindTimestampLTZ:
		return from == KindTimestamp
	}
	return false
}

// explicitCast is the matrix of Flink's documentation for predefined
// types.
func explicitCast(from, to Type) bool {
	f, t := from.kind, to.kind
	if to.IsString() {
		return from.IsPredefined()
	}
	if from.IsString() {
		return !to.IsInterval()
	}
	switch {
	case from.IsBinary():
		return to.IsBinary()
	case f == KindBoolean || from.IsNumeric():
		switch {
		case t == KindBoolean || to.IsNumeric():
			return true
		case t == KindIntervalYearMonth:
			return f == KindInt
		case t == KindIntervalDayTime:
			return f == KindBigInt
		}
		return false
	case f == KindDate:
		return t == KindDate || to.IsTimestamp()
	case f == KindTime:
		return t == KindTime || to.IsTimestamp()
	case from.IsTimestamp():
		return to.IsTemporal()
	case f == KindIntervalYearMonth:
		return t == KindInt || t == KindIntervalYearMonth
	case f == KindIntervalDayTime:
		return t == KindBigInt || t == KindIntervalDayTime
	}
	return false
}
