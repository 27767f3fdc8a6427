package parser

// CreateTable is CREATE [TEMPORARY] TABLE [IF NOT EXISTS] name (elements)
// [COMMENT '...'] [PARTITIONED BY (cols)] [WITH (options)] [AS query].
// Columns, watermarks and constraints may be mixed in the source; they are
// kept in three lists, each in source order.
type CreateTable struct {
	Pos
	Temporary   bool
	IfNotExists bool
	Name        *ObjectName
	Columns     []*ColumnDef
	Watermarks  []*Watermark
	Constraints []*TableConstraint
	Comment     *StringLit // nil if absent
	PartitionBy []*Ident
	Options     []*Option
	// AsQuery is the query of CREATE TABLE ... AS query, nil if absent.
	AsQuery *Query
}

// ColumnKind tells physical, computed and metadata columns apart.
type ColumnKind uint8

const (
	// PhysicalColumn is "name TYPE".
	PhysicalColumn ColumnKind = iota
	// ComputedColumn is "name AS expr".
	ComputedColumn
	// MetadataColumn is "name TYPE METADATA [FROM 'key'] [VIRTUAL]".
	MetadataColumn
)

// ColumnDef is a column of CREATE TABLE.
type ColumnDef struct {
	Pos
	Name *Ident
	Kind ColumnKind
	// Type is the type of a physical or metadata column (nil for computed).
	Type *Type
	// Expr is the expression of a computed column.
	Expr Expr
	// MetadataKey is the key of METADATA FROM 'key', nil if absent.
	MetadataKey *StringLit
	// Virtual marks a metadata column VIRTUAL (read-only).
	Virtual bool
	// PrimaryKey is an inline PRIMARY KEY constraint, nil if absent.
	PrimaryKey *TableConstraint
	Comment    *StringLit
}

// Watermark is WATERMARK FOR column AS expr.
type Watermark struct {
	Pos
	// Column is the rowtime column, possibly a nested field (a.b).
	Column []*Ident
	Expr   Expr
}

// TableConstraint is [CONSTRAINT name] PRIMARY KEY (cols) [NOT ENFORCED]
// (or, inline on a column, [CONSTRAINT name] PRIMARY KEY [NOT ENFORCED],
// whose Columns are empty).
type TableConstraint struct {
	Pos
	Name    *Ident // nil if not named
	Columns []*Ident
	// NotEnforced is true for NOT ENFORCED; Flink requires it, the parser
	// leaves that check to the planner.
	NotEnforced bool
}

// Option is a 'key' = 'value' pair of a WITH clause (or of SET). Pos is the
// position of the key.
type Option struct {
	Pos
	Key      string
	Value    string
	ValuePos Pos
}

// CreateView is CREATE [TEMPORARY] VIEW [IF NOT EXISTS] name [(cols)]
// [COMMENT '...'] AS query.
type CreateView struct {
	Pos
	Temporary   bool
	IfNotExists bool
	Name        *ObjectName
	Columns     []*Ident
	Comment     *StringLit
	Query       *Query
}

// CreateFunction is CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS]
// name AS 'identifier' [LANGUAGE lang] [USING JAR 'path', ...].
type CreateFunction struct {
	Pos
	Temporary   bool
	System      bool
	IfNotExists bool
	Name        *ObjectName
	// Identifier is the implementation: a class name, or a name eddy
	// registered the function under.
	Identifier *StringLit
	// Language is GO, JAVA, SCALA or PYTHON in upper case, "" if absent.
	Language string
	Jars     []*StringLit
}

// Drop is DROP [TEMPORARY [SYSTEM]] TABLE|VIEW|FUNCTION|DATABASE|CATALOG
// [IF EXISTS] name.
type Drop struct {
	Pos
	// What is TABLE, VIEW, FUNCTION, DATABASE or CATALOG.
	What      string
	Temporary bool
	System    bool
	IfExists  bool
	Name      *ObjectName
}

// Set is SET 'key' = 'value', or SET alone (Option nil), which lists the
// settings.
type Set struct {
	Pos
	Option *Option
}

// Reset is RESET 'key', or RESET alone (Key nil), which resets every setting.
type Reset struct {
	Pos
	Key *StringLit
}

// Insert is INSERT INTO|OVERWRITE table [/*+ hints */]
// [PARTITION (col = value, ...)] [(cols)] query.
type Insert struct {
	Pos
	Overwrite bool
	Table     *ObjectName
	// Hints are the table hints after the name, /*+ OPTIONS(...) */.
	Hints     []*Hint
	Partition []*PartitionValue
	Columns   []*Ident
	Query     *Query
}

// PartitionValue is col = value in INSERT's PARTITION clause.
type PartitionValue struct {
	Pos
	Column *Ident
	Value  Expr
}

// StatementSet is a group of INSERTs run as one job: EXECUTE STATEMENT SET
// BEGIN insert; ... END, or the SQL client's BEGIN STATEMENT SET; insert;
// ... END (Begin set).
type StatementSet struct {
	Pos
	Begin   bool
	Inserts []*Insert
}

// Execute is EXECUTE followed by an INSERT or a query.
type Execute struct {
	Pos
	Statement Statement
}

// Explain is EXPLAIN [detail, ...] [PLAN FOR] statement, where a detail is
// ESTIMATED_COST, CHANGELOG_MODE, PLAN_ADVICE or JSON_EXECUTION_PLAN.
type Explain struct {
	Pos
	Details   []string
	PlanFor   bool
	Statement Statement
}

// Show is SHOW CATALOGS | DATABASES | TABLES | VIEWS | FUNCTIONS |
// USER FUNCTIONS | MODULES | FULL MODULES | JARS | JOBS | CURRENT CATALOG |
// CURRENT DATABASE | COLUMNS FROM name, with for some of them
// FROM|IN name and [NOT] LIKE|ILIKE 'pattern'.
type Show struct {
	Pos
	// What is the object kind in upper case, e.g. "TABLES", "USER FUNCTIONS",
	// "CURRENT CATALOG".
	What string
	// From is the name after FROM or IN, nil if absent; FromIn is "FROM" or
	// "IN" as written.
	From   *ObjectName
	FromIn string
	// Like is the pattern of [NOT] LIKE|ILIKE, nil if absent.
	Like    *StringLit
	NotLike bool
	ILike   bool
}

// ShowCreate is SHOW CREATE TABLE|VIEW name.
type ShowCreate struct {
	Pos
	What string // TABLE or VIEW
	Name *ObjectName
}

// Describe is DESCRIBE|DESC [EXTENDED] name.
type Describe struct {
	Pos
	Extended bool
	Name     *ObjectName
}

// Use is USE name, USE CATALOG name or USE MODULES name, ...
type Use struct {
	Pos
	// What is "" (a database), "CATALOG" or "MODULES".
	What  string
	Names []*ObjectName
}

// QueryStatement is a query used as a statement.
type QueryStatement struct {
	Pos
	Query *Query
}

func (*CreateTable) statementNode()    {}
func (*CreateView) statementNode()     {}
func (*CreateFunction) statementNode() {}
func (*Drop) statementNode()           {}
func (*Set) statementNode()            {}
func (*Reset) statementNode()          {}
func (*Insert) statementNode()         {}
func (*StatementSet) statementNode()   {}
func (*Execute) statementNode()        {}
func (*Explain) statementNode()        {}
func (*Show) statementNode()           {}
func (*ShowCreate) statementNode()     {}
func (*Describe) statementNode()       {}
func (*Use) statementNode()            {}
func (*QueryStatement) statementNode() {}
