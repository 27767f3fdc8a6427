package parser

// Ref is a reference by name: a column (a), a qualified column (t.a), a
// field of a row column (t.a.b, a.b). The parser does not tell these apart;
// the planner resolves the parts from the left.
type Ref struct {
	Pos
	Parts []*Ident
}

// NumberLit is a numeric literal, kept as written: an integer (42), a
// decimal (4.2, .5) or an approximate number with an exponent (4.2E1).
type NumberLit struct {
	Pos
	Text string
}

// StringLit is a character string literal '...' (National for N'...').
// Value is the unescaped content.
type StringLit struct {
	Pos
	Value    string
	National bool
}

// BinaryLit is a binary string literal X'...'; Hex holds its hexadecimal
// digits as written.
type BinaryLit struct {
	Pos
	Hex string
}

// BoolLit is TRUE or FALSE.
type BoolLit struct {
	Pos
	Value bool
}

// NullLit is NULL.
type NullLit struct {
	Pos
}

// UnknownLit is UNKNOWN, the boolean NULL.
type UnknownLit struct {
	Pos
}

// TypedLit is DATE '...', TIME '...' or TIMESTAMP '...'.
type TypedLit struct {
	Pos
	// Type is DATE, TIME or TIMESTAMP.
	Type  string
	Value string
}

// IntervalLit is INTERVAL [-]'value' qualifier, e.g. INTERVAL '10' SECOND,
// INTERVAL '1 2:03' DAY TO MINUTE. Plural units (SECONDS) are read as
// singular.
type IntervalLit struct {
	Pos
	// Negative is set for INTERVAL -'...' (a sign before the string).
	Negative  bool
	Value     string
	Qualifier *IntervalQualifier
}

// IntervalQualifier is the unit part of an interval literal or type:
// Start [(params)] [TO End [(params)]], units in upper case and singular
// (YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND).
type IntervalQualifier struct {
	Pos
	Start       string
	StartParams []int
	End         string // "" for a single unit
	EndParams   []int
}

// Param is a ? placeholder; Index counts them from 1 in source order.
type Param struct {
	Pos
	Index int
}

// Unary is a prefix operator: "-", "+" or "NOT".
type Unary struct {
	Pos
	Op string
	X  Expr
}

// Binary is a binary operator: "+", "-", "*", "/", "%", "||", "=", "<>"
// (also written !=), "<", "<=", ">", ">=", "AND", "OR". Pos is that of the
// operator.
type Binary struct {
	Pos
	Op string
	L  Expr
	R  Expr
}

// IsExpr is X IS [NOT] NULL|TRUE|FALSE|UNKNOWN|JSON [VALUE|SCALAR|ARRAY|OBJECT].
// Pos is that of IS.
type IsExpr struct {
	Pos
	X   Expr
	Not bool
	// What is NULL, TRUE, FALSE, UNKNOWN, JSON, JSON VALUE, JSON SCALAR,
	// JSON ARRAY or JSON OBJECT.
	What string
}

// DistinctFrom is L IS [NOT] DISTINCT FROM R. Pos is that of IS.
type DistinctFrom struct {
	Pos
	L, R Expr
	Not  bool
}

// Between is X [NOT] BETWEEN [SYMMETRIC] Low AND High. Pos is that of
// BETWEEN (or NOT).
type Between struct {
	Pos
	X         Expr
	Not       bool
	Symmetric bool
	Low, High Expr
}

// InList is X [NOT] IN (list). Pos is that of IN (or NOT).
type InList struct {
	Pos
	X    Expr
	Not  bool
	List []Expr
}

// InQuery is X [NOT] IN (query). Pos is that of IN (or NOT).
type InQuery struct {
	Pos
	X     Expr
	Not   bool
	Query *Query
}

// Like is X [NOT] LIKE|ILIKE|SIMILAR TO Pattern [ESCAPE Escape]. Pos is that
// of the operator (or NOT).
type Like struct {
	Pos
	X   Expr
	Not bool
	// Op is LIKE, ILIKE or SIMILAR TO.
	Op      string
	Pattern Expr
	Escape  Expr // nil if absent
}

// Exists is EXISTS (query).
type Exists struct {
	Pos
	Query *Query
}

// Subquery is a scalar subquery, (query) used as a value.
type Subquery struct {
	Pos
	Query *Query
}

// Case is CASE [Operand] WHEN ... THEN ... [ELSE ...] END.
type Case struct {
	Pos
	Operand Expr // nil for a searched CASE
	Whens   []*When
	Else    Expr // nil if absent
}

// When is WHEN Cond THEN Result of a CASE.
type When struct {
	Pos
	Cond   Expr
	Result Expr
}

// Cast is CAST(X AS Type), or TRY_CAST (Try set).
type Cast struct {
	Pos
	Try  bool
	X    Expr
	Type *Type
}

// FuncSyntax is the argument syntax of a function call.
type FuncSyntax uint8

const (
	// SyntaxCall is f(a, b, ...).
	SyntaxCall FuncSyntax = iota
	// SyntaxPosition is POSITION(a IN b).
	SyntaxPosition
	// SyntaxSubstring is SUBSTRING(s FROM a [FOR b]).
	SyntaxSubstring
	// SyntaxOverlay is OVERLAY(s PLACING r FROM a [FOR b]).
	SyntaxOverlay
	// SyntaxFloorTo is FLOOR(x TO unit) or CEIL(x TO unit); the unit is a
	// *TimeUnit second argument.
	SyntaxFloorTo
)

// FuncCall is a call of a function: f(args), with for aggregates
// DISTINCT, * (COUNT(*)), FILTER (WHERE ...), WITHIN GROUP (ORDER BY ...)
// and OVER. CURRENT_TIMESTAMP and the other niladic functions are calls
// with NoParens set.
type FuncCall struct {
	Pos
	Name *ObjectName
	Args []Expr
	// Syntax is the form of the argument list; the arguments are in Args in
	// source order whatever the form.
	Syntax   FuncSyntax
	Distinct bool
	// Star is set for f(*); Args is then empty.
	Star bool
	// NoParens is set for CURRENT_TIMESTAMP and the like, written without
	// parentheses.
	NoParens bool
	// NullTreatment is "IGNORE NULLS", "RESPECT NULLS" or "".
	NullTreatment string
	WithinGroup   []*OrderItem
	Filter        Expr // FILTER (WHERE Filter), nil if absent
	// Over is the window of OVER (spec); OverName that of OVER name.
	Over     *WindowSpec
	OverName *Ident
}

// WindowSpec is the window of OVER or of a WINDOW clause:
// ([base] [PARTITION BY ...] [ORDER BY ...] [frame]).
type WindowSpec struct {
	Pos
	// Base names a window of the WINDOW clause this one extends, nil if
	// absent.
	Base        *Ident
	PartitionBy []Expr
	OrderBy     []*OrderItem
	Frame       *WindowFrame
}

// WindowFrame is ROWS|RANGE start, or ROWS|RANGE BETWEEN start AND end.
type WindowFrame struct {
	Pos
	// Units is ROWS or RANGE.
	Units string
	Start *FrameBound
	End   *FrameBound // nil without BETWEEN
}

// FrameBoundKind is the kind of a window frame bound.
type FrameBoundKind uint8

const (
	// UnboundedPreceding is UNBOUNDED PRECEDING.
	UnboundedPreceding FrameBoundKind = iota
	// Preceding is expr PRECEDING.
	Preceding
	// CurrentRow is CURRENT ROW.
	CurrentRow
	// Following is expr FOLLOWING.
	Following
	// UnboundedFollowing is UNBOUNDED FOLLOWING.
	UnboundedFollowing
)

// FrameBound is a bound of a window frame.
type FrameBound struct {
	Pos
	Kind   FrameBoundKind
	Offset Expr // for Preceding and Following
}

// Extract is EXTRACT(Unit FROM X); Unit is in upper case (YEAR, MONTH,
// DAY, HOUR, MINUTE, SECOND, MILLISECOND, DOW, DOY, EPOCH, ...).
type Extract struct {
	Pos
	Unit string
	X    Expr
}

// Trim is TRIM([BOTH|LEADING|TRAILING] [Chars] FROM X) or TRIM(X).
type Trim struct {
	Pos
	// Spec is BOTH, LEADING, TRAILING or "" when not written.
	Spec  string
	Chars Expr // nil if absent
	X     Expr
}

// TimeUnit is a time unit used as a function argument:
// TIMESTAMPADD(DAY, n, ts), TIMESTAMPDIFF(HOUR, a, b), FLOOR(ts TO DAY).
type TimeUnit struct {
	Pos
	Unit string
}

// RowExpr is a row constructor: ROW(a, b) (Explicit) or (a, b). In GROUPING
// SETS, () is a RowExpr without fields.
type RowExpr struct {
	Pos
	Explicit bool
	Fields   []Expr
}

// ArrayExpr is ARRAY[a, b, ...].
type ArrayExpr struct {
	Pos
	Elems []Expr
}

// MapExpr is MAP[k1, v1, k2, v2, ...]; Elems alternate keys and values.
type MapExpr struct {
	Pos
	Elems []Expr
}

// Index is X[Index]: an array element (from 1) or a map value.
type Index struct {
	Pos
	X     Expr
	Index Expr
}

// FieldAccess is X.Field where X is not a plain name (e.g. f(x).a,
// arr[1].b); fields of named columns are Refs.
type FieldAccess struct {
	Pos
	X     Expr
	Field *Ident
}

// Descriptor is DESCRIPTOR(col, ...), the time column argument of a window
// table function.
type Descriptor struct {
	Pos
	Columns []*Ident
}

// TableArg is TABLE name [PARTITION BY ...] [ORDER BY ...], a table
// argument of a table function (SESSION takes PARTITION BY).
type TableArg struct {
	Pos
	Name        *ObjectName
	PartitionBy []Expr
	OrderBy     []*OrderItem
}

// NamedArg is name => value, a named argument of a function call.
type NamedArg struct {
	Pos
	Name  *Ident
	Value Expr
}

// JSONBehavior is the action of an ON EMPTY / ON ERROR clause of the JSON
// functions.
type JSONBehavior struct {
	Pos
	// Kind is NULL, ERROR, DEFAULT, EMPTY ARRAY, EMPTY OBJECT, TRUE, FALSE
	// or UNKNOWN.
	Kind    string
	Default Expr // for DEFAULT
}

// JSONKeyValue is [KEY] key VALUE value in JSON_OBJECT and JSON_OBJECTAGG.
type JSONKeyValue struct {
	Pos
	// KeyWord is set when the pair was written with the KEY keyword.
	KeyWord bool
	Key     Expr
	Value   Expr
}

// JSONFunc is a JSON function with its special clauses: JSON_VALUE,
// JSON_QUERY, JSON_EXISTS, JSON_OBJECT, JSON_ARRAY, JSON_OBJECTAGG,
// JSON_ARRAYAGG. Other JSON functions (JSON_STRING, ...) are plain calls.
type JSONFunc struct {
	Pos
	// Name is the function name in upper case.
	Name string
	// Args are the context item and path (JSON_VALUE, JSON_QUERY,
	// JSON_EXISTS) or the elements (JSON_ARRAY, JSON_ARRAYAGG).
	Args []Expr
	// Pairs are the members of JSON_OBJECT and JSON_OBJECTAGG.
	Pairs []*JSONKeyValue
	// Returning is the type of RETURNING, nil if absent.
	Returning *Type
	// Wrapper is JSON_QUERY's wrapper behaviour as written: "WITHOUT ARRAY
	// WRAPPER", "WITH CONDITIONAL ARRAY WRAPPER", ... ("" if absent).
	Wrapper string
	// OnEmpty and OnError are the ON EMPTY and ON ERROR clauses, nil if
	// absent.
	OnEmpty *JSONBehavior
	OnError *JSONBehavior
	// OnNull is "NULL" or "ABSENT" for NULL ON NULL / ABSENT ON NULL, "" if
	// absent.
	OnNull string
	// OrderBy is JSON_ARRAYAGG's ORDER BY.
	OrderBy []*OrderItem
}

// GroupingSets is GROUPING SETS (...), ROLLUP (...) or CUBE (...) in a
// GROUP BY clause. Items are expressions or rows of them ((a, b), ()).
type GroupingSets struct {
	Pos
	// Kind is GROUPING SETS, ROLLUP or CUBE.
	Kind  string
	Items []Expr
}

func (*Ref) exprNode()          {}
func (*NumberLit) exprNode()    {}
func (*StringLit) exprNode()    {}
func (*BinaryLit) exprNode()    {}
func (*BoolLit) exprNode()      {}
func (*NullLit) exprNode()      {}
func (*UnknownLit) exprNode()   {}
func (*TypedLit) exprNode()     {}
func (*IntervalLit) exprNode()  {}
func (*Param) exprNode()        {}
func (*Unary) exprNode()        {}
func (*Binary) exprNode()       {}
func (*IsExpr) exprNode()       {}
func (*DistinctFrom) exprNode() {}
func (*Between) exprNode()      {}
func (*InList) exprNode()       {}
func (*InQuery) exprNode()      {}
func (*Like) exprNode()         {}
func (*Exists) exprNode()       {}
func (*Subquery) exprNode()     {}
func (*Case) exprNode()         {}
func (*Cast) exprNode()         {}
func (*FuncCall) exprNode()     {}
func (*Extract) exprNode()      {}
func (*Trim) exprNode()         {}
func (*TimeUnit) exprNode()     {}
func (*RowExpr) exprNode()      {}
func (*ArrayExpr) exprNode()    {}
func (*MapExpr) exprNode()      {}
func (*Index) exprNode()        {}
func (*FieldAccess) exprNode()  {}
func (*Descriptor) exprNode()   {}
func (*TableArg) exprNode()     {}
func (*NamedArg) exprNode()     {}
func (*JSONFunc) exprNode()     {}
func (*GroupingSets) exprNode() {}
