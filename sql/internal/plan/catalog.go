// Package plan turns the statements of eddy's SQL into jobs: it keeps the
// catalog of tables, views and functions that DDL creates, resolves queries
// into trees of relational operators (Rel), derives every operator's
// changelog mode and time attribute, and builds the operators on an
// eddy.Environment.
package plan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// ColumnKind tells physical, computed and metadata columns apart.
type ColumnKind = parser.ColumnKind

// Column is a column of a table.
type Column struct {
	Name string
	Type types.Type
	Kind ColumnKind
	// Expr is the expression of a computed column.
	Expr parser.Expr
	// MetadataKey is the key of a metadata column (its name if FROM is
	// absent); Virtual metadata columns are not written by sinks.
	MetadataKey string
	Virtual     bool
}

// Table is a table of the catalog: CREATE TABLE.
type Table struct {
	Name    string
	Columns []Column
	// Rowtime is the index in Columns of the column of WATERMARK FOR, -1
	// without one; Watermark is its expression.
	Rowtime   int
	Watermark parser.Expr
	// PrimaryKey and PartitionKeys name columns.
	PrimaryKey    []string
	PartitionKeys []string
	// Connector is the value of 'connector'; Options holds every option
	// (with 'connector').
	Connector string
	Options   map[string]string
	// Def is the statement that created the table.
	Def *parser.CreateTable
}

// RowType returns the type of the table's rows: every column, in order.
func (t *Table) RowType() *types.RowType {
	fs := make([]types.Field, len(t.Columns))
	for i, c := range t.Columns {
		fs[i] = types.F(c.Name, c.Type)
	}
	return types.MustRowType(fs...)
}

// connectorTable returns what the connector is told of the table.
func (t *Table) connectorTable() *connector.Table {
	var phys []types.Field
	ct := &connector.Table{Name: t.Name}
	for _, c := range t.Columns {
		switch c.Kind {
		case parser.PhysicalColumn:
			phys = append(phys, types.F(c.Name, c.Type))
		case parser.MetadataColumn:
			ct.Metadata = append(ct.Metadata, c.MetadataKey)
			ct.MetadataTypes = append(ct.MetadataTypes, c.Type)
		}
	}
	ct.Schema = types.MustRowType(phys...)
	for _, k := range t.PrimaryKey {
		if i, ok := ct.Schema.Index(k); ok {
			ct.PrimaryKey = append(ct.PrimaryKey, i)
		}
	}
	for _, k := range t.PartitionKeys {
		if i, ok := ct.Schema.Index(k); ok {
			ct.PartitionKeys = append(ct.PartitionKeys, i)
		}
	}
	return ct
}

// View is a view of the catalog: CREATE VIEW.
type View struct {
	Name    string
	Columns []string
	Query   *parser.Query
	// Src is the SQL text the view was defined in, for errors.
	Src string
}

// Catalog holds the tables, views and functions of a session, and its
// settings.
type Catalog struct {
	Tables   map[string]*Table
	Views    map[string]*View
	Funcs    *expr.Registry
	Settings map[string]string
	// Connectors is the registry of connectors and formats.
	Connectors *connector.Registry
	// UserFuncs are the functions registered in Go that CREATE FUNCTION
	// can bind, by identifier.
	UserFuncs map[string]*expr.Builtin
	// defs holds the SQL text each table was created in, for errors.
	defs map[string]string
}

// NewCatalog returns an empty catalog over the connectors of reg.
func NewCatalog(reg *connector.Registry) *Catalog {
	if reg == nil {
		reg = connector.Default
	}
	return &Catalog{
		Tables: map[string]*Table{}, Views: map[string]*View{},
		Funcs: expr.NewRegistry(), Settings: map[string]string{},
		Connectors: reg, UserFuncs: map[string]*expr.Builtin{}, defs: map[string]string{},
	}
}

// objectName returns the name a statement gives an object: its last part
// (eddy has one catalog and one database; qualified names must name
// them).
func objectName(src string, n *parser.ObjectName) (string, error) {
	if len(n.Parts) > 1 {
		q := n.Parts[:len(n.Parts)-1]
		names := make([]string, len(q))
		for i, p := range q {
			names[i] = p.Name
		}
		if !(len(q) == 1 && q[0].Name == "default_database" || len(q) == 2 && q[0].Name == "default_catalog" && q[1].Name == "default_database") {
			return "", parser.ErrorAt(src, n.Pos, fmt.Sprintf("unknown catalog or database %s: eddy has the one catalog default_catalog and its database default_database", strings.Join(names, ".")))
		}
	}
	return n.Last().Name, nil
}

// lookup finds a table or view by name, with a suggestion when there is
// none.
func (c *Catalog) lookup(src string, n *parser.ObjectName) (*Table, *View, error) {
	name, err := objectName(src, n)
	if err != nil {
		return nil, nil, err
	}
	if t, ok := c.Tables[name]; ok {
		return t, nil, nil
	}
	if v, ok := c.Views[name]; ok {
		return nil, v, nil
	}
	var hint string
	for _, other := range c.names() {
		if strings.EqualFold(other, name) {
			hint = fmt.Sprintf(" (names are case-sensitive: did you mean %s?)", other)
		}
	}
	if hint == "" {
		if all := c.names(); len(all) > 0 {
			hint = "; the tables and views are " + strings.Join(all, ", ")
		} else {
			hint = "; no table or view is defined: CREATE TABLE first"
		}
	}
	return nil, nil, parser.ErrorAt(src, n.Pos, fmt.Sprintf("unknown table or view %s%s", name, hint))
}

func (c *Catalog) names() []string {
	var out []string
	for n := range c.Tables {
		out = append(out, n)
	}
	for n := range c.Views {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
