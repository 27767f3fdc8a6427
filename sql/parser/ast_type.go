package parser

// Type is a data type as written; package sql/types resolves it. Name is
// the type's name in upper case with its words joined by one space (INT,
// INTEGER, DOUBLE PRECISION, CHARACTER VARYING, TIMESTAMP_LTZ, ARRAY, ...),
// or "" for a user-defined type referred to by Named.
type Type struct {
	Pos
	Name string
	// Named is the name of a user-defined type, nil for built-in names.
	Named *ObjectName
	// Params are the length, precision and scale in parentheses:
	// VARCHAR(10), DECIMAL(10, 2), TIMESTAMP(3). Empty when not written.
	Params []int
	// RawArgs are the string arguments of RAW('class', 'snapshot').
	RawArgs []*StringLit
	// Zone is "WITHOUT TIME ZONE", "WITH LOCAL TIME ZONE" or "WITH TIME
	// ZONE" after TIME or TIMESTAMP, "" if absent.
	Zone string
	// Interval is the qualifier of INTERVAL types (INTERVAL DAY TO SECOND(3)).
	Interval *IntervalQualifier
	// Elem is the element type of ARRAY and MULTISET and the value type of
	// MAP. ARRAY<T> and T ARRAY give the same tree.
	Elem *Type
	// Key is the key type of MAP.
	Key *Type
	// Fields are the fields of ROW<...> (or ROW(...)).
	Fields []*FieldDef
	// NotNull is set by NOT NULL after the type.
	NotNull bool
}

// FieldDef is a field of a ROW type: name type ['comment'].
type FieldDef struct {
	Pos
	Name    *Ident
	Type    *Type
	Comment *StringLit
}
