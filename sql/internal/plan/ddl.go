package plan

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// CreateTable adds the table of a CREATE TABLE statement to the catalog,
// checking its columns, watermark, keys and connector options.
func (c *Catalog) CreateTable(src string, s *parser.CreateTable) error {
	name, err := objectName(src, s.Name)
	if err != nil {
		return err
	}
	if _, ok := c.Tables[name]; ok || c.Views[name] != nil {
		if s.IfNotExists {
			return nil
		}
		return parser.ErrorAt(src, s.Name.Pos, fmt.Sprintf("%s already exists: drop it first, or write CREATE TABLE IF NOT EXISTS", name))
	}
	if s.AsQuery != nil {
		return parser.ErrorAt(src, s.Pos, "CREATE TABLE ... AS query is not supported: create the table, then INSERT INTO it")
	}
	t := &Table{Name: name, Rowtime: -1, Def: s, Options: map[string]string{}}
	a := &expr.Analyzer{Src: src, Funcs: c.Funcs}
	seen := map[string]bool{}
	var pk []*parser.TableConstraint
	for _, cd := range s.Columns {
		if seen[cd.Name.Name] {
			return parser.ErrorAt(src, cd.Name.Pos, fmt.Sprintf("column %s is declared twice", cd.Name.Name))
		}
		seen[cd.Name.Name] = true
		col := Column{Name: cd.Name.Name, Kind: cd.Kind, Expr: cd.Expr, Virtual: cd.Virtual}
		if cd.Type != nil {
			if col.Type, err = a.Type(cd.Type); err != nil {
				return err
			}
		}
		if cd.Kind == parser.MetadataColumn {
			col.MetadataKey = col.Name
			if cd.MetadataKey != nil {
				col.MetadataKey = cd.MetadataKey.Value
			}
		}
		if cd.PrimaryKey != nil {
			pk = append(pk, &parser.TableConstraint{Pos: cd.PrimaryKey.Pos, Columns: []*parser.Ident{cd.Name}, NotEnforced: cd.PrimaryKey.NotEnforced})
		}
		t.Columns = append(t.Columns, col)
	}
	// Computed columns read the physical and metadata columns.
	base := &tableScope{t: t, computed: false}
	a.Scope = base
	for i, col := range t.Columns {
		if col.Kind != parser.ComputedColumn {
			continue
		}
		e, err := a.Expr(col.Expr)
		if err != nil {
			return err
		}
		t.Columns[i].Type = e.Type()
	}
	for _, con := range s.Constraints {
		pk = append(pk, con)
	}
	if len(pk) > 1 {
		return parser.ErrorAt(src, pk[1].Pos, "a table has at most one PRIMARY KEY")
	}
	for _, con := range pk {
		if !con.NotEnforced {
			return parser.ErrorAt(src, con.Pos, "eddy does not enforce primary keys: write PRIMARY KEY (...) NOT ENFORCED, as Flink requires")
		}
		for _, k := range con.Columns {
			i := t.column(k.Name)
			if i < 0 {
				return parser.ErrorAt(src, k.Pos, fmt.Sprintf("primary key column %s is not a column of %s", k.Name, name))
			}
			if t.Columns[i].Kind != parser.PhysicalColumn {
				return parser.ErrorAt(src, k.Pos, fmt.Sprintf("primary key column %s must be a physical column", k.Name))
			}
			// Primary key columns are NOT NULL, as in Flink.
			t.Columns[i].Type = t.Columns[i].Type.NotNull()
			t.PrimaryKey = append(t.PrimaryKey, k.Name)
		}
	}
	for _, p := range s.PartitionBy {
		if t.column(p.Name) < 0 {
			return parser.ErrorAt(src, p.Pos, fmt.Sprintf("partition column %s is not a column of %s", p.Name, name))
		}
		t.PartitionKeys = append(t.PartitionKeys, p.Name)
	}
	if len(s.Watermarks) > 1 {
		return parser.ErrorAt(src, s.Watermarks[1].Pos, "a table has at most one WATERMARK")
	}
	for _, w := range s.Watermarks {
		if len(w.Column) != 1 {
			return parser.ErrorAt(src, w.Pos, "the rowtime column of WATERMARK FOR must be a top-level column")
		}
		i := t.column(w.Column[0].Name)
		if i < 0 {
			return parser.ErrorAt(src, w.Column[0].Pos, fmt.Sprintf("WATERMARK FOR %s: no such column in %s", w.Column[0].Name, name))
		}
		ct := t.Columns[i].Type
		if !(ct.Kind() == types.KindTimestamp || ct.Kind() == types.KindTimestampLTZ) || ct.Precision() > 3 {
			return parser.ErrorAt(src, w.Column[0].Pos, fmt.Sprintf("the rowtime column %s is %s: it must be TIMESTAMP(3) or TIMESTAMP_LTZ(3)", w.Column[0].Name, ct))
		}
		a.Scope = &tableScope{t: t, computed: true}
		we, err := a.Expr(w.Expr)
		if err != nil {
			return err
		}
		if !we.Type().EqualIgnoringNullability(ct) && !(we.Type().IsTimestamp() && we.Type().Kind() == ct.Kind()) {
			return parser.ErrorAt(src, w.Expr.Position(), fmt.Sprintf("the watermark expression is %s; it must have the rowtime column's type %s", we.Type(), ct))
		}
		t.Rowtime, t.Watermark = i, w.Expr
	}
	if err := c.tableOptions(src, s, t); err != nil {
		return err
	}
	c.Tables[name] = t
	c.defs[name] = src
	return nil
}

// tableOptions reads the WITH options of s, translating Flink's legacy
// 'connector.type' keys, and validates them against the connector.
func (c *Catalog) tableOptions(src string, s *parser.CreateTable, t *Table) error {
	pos := map[string]parser.Pos{}
	legacy := false
	for _, o := range s.Options {
		if o.Key == "connector.type" {
			legacy = true
		}
	}
	for _, o := range s.Options {
		k := o.Key
		if legacy {
			k = legacyKey(k, s.Options)
			if k == "" {
				continue
			}
		}
		if _, dup := t.Options[k]; dup {
			return parser.ErrorAt(src, o.Pos, fmt.Sprintf("option '%s' is set twice", o.Key))
		}
		t.Options[k] = o.Value
		pos[k] = o.Pos
	}
	conn, ok := t.Options["connector"]
	if !ok {
		return parser.ErrorAt(src, s.Name.Pos, fmt.Sprintf("table %s has no 'connector' option: add WITH ('connector' = '...') naming one of %s", t.Name, strings.Join(c.connectorNames(), ", ")))
	}
	t.Connector = conn
	opts := t.connectorOptions()
	if err := c.Connectors.Validate(conn, opts); err != nil {
		var oe *connector.OptionError
		at := pos["connector"]
		if errors.As(err, &oe) {
			if p, ok := pos[oe.Key]; ok {
				at = p
			} else if i := strings.IndexByte(oe.Key, '.'); i > 0 {
				if p, ok := pos["format"]; ok {
					at = p
				}
			}
		}
		return parser.ErrorAt(src, at, fmt.Sprintf("table %s: %v", t.Name, err))
	}
	return nil
}

// connectorOptions returns the options of the table for its connector
// (without 'connector').
func (t *Table) connectorOptions() map[string]string {
	out := make(map[string]string, len(t.Options))
	for k, v := range t.Options {
		if k != "connector" {
			out[k] = v
		}
	}
	return out
}

// legacyKey maps a key of Flink's legacy table options ('connector.type',
// 'connector.path', 'format.type', 'format.x', 'update-mode') to today's
// key, "" for one without a counterpart.
func legacyKey(k string, all []*parser.Option) string {
	switch {
	case k == "connector.type":
		return "connector"
	case k == "format.type":
		return "format"
	case k == "update-mode" || k == "connector.version" || k == "connector.property-version" || k == "format.property-version":
		return ""
	case strings.HasPrefix(k, "connector."):
		return strings.TrimPrefix(k, "connector.")
	case strings.HasPrefix(k, "format."):
		for _, o := range all {
			if o.Key == "format.type" {
				return o.Value + "." + strings.TrimPrefix(k, "format.")
			}
		}
	}
	return k
}

func (c *Catalog) connectorNames() []string {
	var out []string
	for _, s := range c.Connectors.Specs() {
		if s.Kind != connector.FormatKind {
			out = append(out, s.Name)
		}
	}
	return out
}

// column returns the index of the column called name, -1 if none.
func (t *Table) column(name string) int {
	for i, c := range t.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// tableScope resolves the columns of a table in its DDL: the physical and
// metadata columns, and the computed ones too when computed is set.
type tableScope struct {
	t        *Table
	computed bool
}

func (s *tableScope) Column(parts []string) (expr.Expr, int, error) {
	name := parts[0]
	var cands []string
	for i, c := range s.t.Columns {
		if c.Kind == parser.ComputedColumn && !s.computed {
			continue
		}
		cands = append(cands, c.Name)
		if c.Name == name {
			if c.Kind == parser.ComputedColumn && c.Type.Kind() == types.KindNull {
				break
			}
			return &expr.Column{Index: i, Name: c.Name, T: c.Type}, 1, nil
		}
	}
	return nil, 0, fmt.Errorf("unknown column %s; the columns are %s", name, strings.Join(cands, ", "))
}

// CreateView adds the view of a CREATE VIEW statement to the catalog. The
// query is resolved now, so that an error shows at once.
func (c *Catalog) CreateView(src string, s *parser.CreateView) error {
	name, err := objectName(src, s.Name)
	if err != nil {
		return err
	}
	if _, ok := c.Views[name]; ok || c.Tables[name] != nil {
		if s.IfNotExists {
			return nil
		}
		return parser.ErrorAt(src, s.Name.Pos, fmt.Sprintf("%s already exists: drop it first, or write CREATE VIEW IF NOT EXISTS", name))
	}
	v := &View{Name: name, Query: s.Query, Src: src}
	for _, col := range s.Columns {
		v.Columns = append(v.Columns, col.Name)
	}
	q := newQueryPlanner(c, src)
	r, err := q.query(s.Query, nil)
	if err != nil {
		return err
	}
	if len(v.Columns) > 0 && len(v.Columns) != r.Schema().Len() {
		return parser.ErrorAt(src, s.Name.Pos, fmt.Sprintf("view %s names %d columns but its query gives %d", name, len(v.Columns), r.Schema().Len()))
	}
	c.Views[name] = v
	return nil
}

// CreateFunction binds a function name to a function registered in Go
// under the statement's identifier.
func (c *Catalog) CreateFunction(src string, s *parser.CreateFunction) error {
	name, err := objectName(src, s.Name)
	if err != nil {
		return err
	}
	if _, ok := c.Funcs.Lookup(name); ok && !s.Temporary && !s.IfNotExists {
		if _, user := c.UserFuncs[strings.ToUpper(name)]; user {
			return parser.ErrorAt(src, s.Name.Pos, fmt.Sprintf("function %s already exists", name))
		}
	}
	if _, ok := c.Funcs.Lookup(name); ok && s.IfNotExists {
		return nil
	}
	b, ok := c.UserFuncs[s.Identifier.Value]
	if !ok {
		var ids []string
		for id := range c.UserFuncs {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		hint := "none is registered"
		if len(ids) > 0 {
			hint = "the registered ones are " + strings.Join(ids, ", ")
		}
		return parser.ErrorAt(src, s.Identifier.Pos, fmt.Sprintf("no function is registered in Go under %q (eddy runs no Java: register the function with sql.RegisterFunction); %s", s.Identifier.Value, hint))
	}
	fn := *b
	fn.Name = strings.ToUpper(name)
	c.Funcs.Add(&fn)
	c.UserFuncs[strings.ToUpper(name)] = &fn
	return nil
}

// Drop removes a table, view or function.
func (c *Catalog) Drop(src string, s *parser.Drop) error {
	name, err := objectName(src, s.Name)
	if err != nil {
		return err
	}
	var ok bool
	switch s.What {
	case "TABLE":
		_, ok = c.Tables[name]
		delete(c.Tables, name)
	case "VIEW":
		_, ok = c.Views[name]
		delete(c.Views, name)
	case "FUNCTION":
		_, ok = c.UserFuncs[strings.ToUpper(name)]
		delete(c.UserFuncs, strings.ToUpper(name))
		if ok {
			c.Funcs.Remove(name)
		}
	default:
		return parser.ErrorAt(src, s.Pos, fmt.Sprintf("DROP %s is not supported", s.What))
	}
	if !ok && !s.IfExists {
		return parser.ErrorAt(src, s.Name.Pos, fmt.Sprintf("%s %s does not exist", strings.ToLower(s.What), name))
	}
	return nil
}
