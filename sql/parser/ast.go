package parser

// Node is a node of the syntax tree. Every node embeds a Pos, the position
// of its first token (for binary operators, of the operator), and prints as
// canonical SQL with String.
type Node interface {
	Position() Pos
	String() string
}

// Statement is a top-level statement: *CreateTable, *CreateView,
// *CreateFunction, *Drop, *Set, *Reset, *Insert, *StatementSet, *Execute,
// *Explain, *Show, *ShowCreate, *Describe, *Use or *QueryStatement.
type Statement interface {
	Node
	statementNode()
}

// Expr is a scalar expression (and the few argument forms of table
// functions: *TableArg, *Descriptor, *NamedArg).
type Expr interface {
	Node
	exprNode()
}

// TableExpr is an item of a FROM clause: *TableName, *DerivedTable,
// *TableFunction, *Unnest, *Join or *ParenTable.
type TableExpr interface {
	Node
	tableNode()
}

// QueryBody is the body of a query: *Select, *SetOp, *Values, or a
// parenthesized *Query.
type QueryBody interface {
	Node
	queryBodyNode()
}

// Ident is a name: a column, table, alias, function or field name, with its
// spelling as written (without backquotes).
type Ident struct {
	Pos
	Name string
}

// ObjectName is a possibly qualified name of a table, view or function:
// catalog.database.object, database.object or object.
type ObjectName struct {
	Pos
	Parts []*Ident
}

// Last returns the unqualified name (the last part).
func (n *ObjectName) Last() *Ident { return n.Parts[len(n.Parts)-1] }
