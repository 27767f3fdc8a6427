package parser

// Query is a query expression: [WITH ...] body [ORDER BY ...]
// [LIMIT n] [OFFSET m] (FETCH FIRST n ROWS ONLY is read as LIMIT n). A
// parenthesized query is a *Query too, even without any of the clauses.
type Query struct {
	Pos
	With    []*CTE
	Body    QueryBody
	OrderBy []*OrderItem
	// Limit is the row count of LIMIT or FETCH, nil if absent.
	Limit Expr
	// Offset is the OFFSET, nil if absent.
	Offset Expr
}

// CTE is a common table expression of WITH: name [(cols)] AS (query).
type CTE struct {
	Pos
	Name    *Ident
	Columns []*Ident
	Query   *Query
}

// Select is SELECT [ALL|DISTINCT] items [FROM ...] [WHERE ...]
// [GROUP BY ...] [HAVING ...] [WINDOW ...].
type Select struct {
	Pos
	// Hints are the query hints of SELECT /*+ ... */.
	Hints    []*Hint
	Distinct bool
	Items    []*SelectItem
	From     TableExpr // nil if absent
	Where    Expr
	GroupBy  []Expr // may hold *GroupingSets
	Having   Expr
	Windows  []*NamedWindow
}

// SelectItem is an item of a select list: expr [[AS] alias], * or q.*.
type SelectItem struct {
	Pos
	// Star is set for * and q.* (then Expr and Alias are nil).
	Star bool
	// Qualifier is the q of q.*, nil for a bare *.
	Qualifier []*Ident
	Expr      Expr
	Alias     *Ident
}

// NamedWindow is name AS (spec) of a WINDOW clause.
type NamedWindow struct {
	Pos
	Name *Ident
	Spec *WindowSpec
}

// SetOpKind is UNION, INTERSECT or EXCEPT.
type SetOpKind uint8

const (
	// Union is UNION.
	Union SetOpKind = iota
	// Intersect is INTERSECT.
	Intersect
	// Except is EXCEPT (also written MINUS).
	Except
)

// SetOp is left UNION|INTERSECT|EXCEPT [ALL|DISTINCT] right. Pos is that of
// the operator.
type SetOp struct {
	Pos
	Op    SetOpKind
	All   bool
	Left  QueryBody
	Right QueryBody
}

// Values is VALUES row, ...; each row is a list of expressions (a single
// value without parentheses is a row of one).
type Values struct {
	Pos
	Rows [][]Expr
}

// OrderItem is expr [ASC|DESC] [NULLS FIRST|LAST].
type OrderItem struct {
	Pos
	Expr Expr
	// Desc is set for DESC.
	Desc bool
	// Asc is set when ASC is written (the default order either way).
	Asc bool
	// Nulls is "FIRST", "LAST" or "" when absent.
	Nulls string
}

// TableAlias is [AS] name [(col, ...)] after a table reference.
type TableAlias struct {
	Pos
	Name    *Ident
	Columns []*Ident
}

// TableName is a table or view by name, possibly
// FOR SYSTEM_TIME AS OF expr, and an alias.
type TableName struct {
	Pos
	Name *ObjectName
	// Hints are the table hints after the name, /*+ OPTIONS(...) */.
	Hints []*Hint
	// SystemTime is the expression of FOR SYSTEM_TIME AS OF, nil if absent.
	SystemTime Expr
	Alias      *TableAlias
}

// Hint is a hint of a /*+ ... */ list: Name, Name(arg, ...) or
// Name('key' = 'value', ...), e.g. OPTIONS('scan.startup.mode' =
// 'earliest-offset'), BROADCAST(t), LOOKUP('table' = 'D', 'async' = 'true').
type Hint struct {
	Pos
	Name *Ident
	// Args are the arguments of a list form: names (*Ref) or literals.
	Args []Expr
	// Options are the arguments of a key-value form, in order.
	Options []*Option
}

// DerivedTable is [LATERAL] (query) [AS] alias.
type DerivedTable struct {
	Pos
	Lateral bool
	Query   *Query
	Alias   *TableAlias
}

// TableFunction is [LATERAL] TABLE(f(args)) [AS] alias, e.g. a window TVF
// TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)).
type TableFunction struct {
	Pos
	Lateral bool
	Call    *FuncCall
	Alias   *TableAlias
}

// Unnest is UNNEST(expr, ...) [WITH ORDINALITY] [AS] alias.
type Unnest struct {
	Pos
	Args           []Expr
	WithOrdinality bool
	Alias          *TableAlias
}

// JoinKind is the kind of a join.
type JoinKind uint8

const (
	// InnerJoin is [INNER] JOIN.
	InnerJoin JoinKind = iota
	// LeftJoin is LEFT [OUTER] JOIN.
	LeftJoin
	// RightJoin is RIGHT [OUTER] JOIN.
	RightJoin
	// FullJoin is FULL [OUTER] JOIN.
	FullJoin
	// CrossJoin is CROSS JOIN.
	CrossJoin
	// CommaJoin is the comma of FROM a, b.
	CommaJoin
)

// Join is left JOIN right [ON cond | USING (cols)]. Pos is that of the
// join keyword (or comma).
type Join struct {
	Pos
	Kind    JoinKind
	Natural bool
	Left    TableExpr
	Right   TableExpr
	On      Expr
	Using   []*Ident
}

// ParenTable is a parenthesized join, (a JOIN b ON ...) [AS alias].
type ParenTable struct {
	Pos
	Table TableExpr
	Alias *TableAlias
}

func (*Select) queryBodyNode() {}
func (*SetOp) queryBodyNode()  {}
func (*Values) queryBodyNode() {}
func (*Query) queryBodyNode()  {}

func (*TableName) tableNode()     {}
func (*DerivedTable) tableNode()  {}
func (*TableFunction) tableNode() {}
func (*Unnest) tableNode()        {}
func (*Join) tableNode()          {}
func (*ParenTable) tableNode()    {}
