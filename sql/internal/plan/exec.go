package plan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// Result is what a statement gives back: nothing for DDL and INSERT, a
// text for SHOW, DESCRIBE and EXPLAIN.
type Result struct {
	// Statement is the statement's text, as canonical SQL.
	Statement string
	// Text is the table or plan the statement shows, "" for none.
	Text string
}

// Script is the state of a session: the catalog and the INSERTs that will
// run as the job.
type Script struct {
	Cat     *Catalog
	Inserts []*SinkRel
	// Queries are the bare SELECTs of the script, whose rows the job
	// prints.
	Queries []Rel
	// Parallelism is the default parallelism of the environment the
	// script's jobs run on (0: eddy's default, 1), which SET
	// 'parallelism.default' overrides. EXPLAIN shows what it gives.
	Parallelism int
	// QueryOutput, if set, makes the sink of the i-th bare query of
	// Build, whose rows are of type rt; nil prints the changes.
	QueryOutput func(i int, rt *types.RowType) func(Rec) error
}

// Exec runs the statements of src: DDL changes the catalog, INSERTs are
// planned and kept for Build.
func (s *Script) Exec(src string) ([]Result, error) {
	stmts, err := parser.Parse(src)
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, st := range stmts {
		text, err := s.exec(src, st)
		if err != nil {
			return out, err
		}
		out = append(out, Result{Statement: st.String(), Text: text})
	}
	return out, nil
}

func (s *Script) exec(src string, st parser.Statement) (string, error) {
	c := s.Cat
	q := newQueryPlanner(c, src)
	switch st := st.(type) {
	case *parser.CreateTable:
		return "", c.CreateTable(src, st)
	case *parser.CreateView:
		return "", c.CreateView(src, st)
	case *parser.CreateFunction:
		return "", c.CreateFunction(src, st)
	case *parser.Drop:
		return "", c.Drop(src, st)
	case *parser.Set:
		if st.Option == nil {
			return c.settingsText(), nil
		}
		c.Settings[st.Option.Key] = st.Option.Value
		return "", nil
	case *parser.Reset:
		if st.Key == nil {
			clear(c.Settings)
		} else {
			delete(c.Settings, st.Key.Value)
		}
		return "", nil
	case *parser.Insert:
		r, err := q.insert(st)
		if err != nil {
			return "", err
		}
		s.Inserts = append(s.Inserts, r)
		return "", nil
	case *parser.StatementSet:
		for _, ins := range st.Inserts {
			r, err := q.insert(ins)
			if err != nil {
				return "", err
			}
			s.Inserts = append(s.Inserts, r)
		}
		return "", nil
	case *parser.Execute:
		return s.exec(src, st.Statement)
	case *parser.Explain:
		return s.explain(src, st)
	case *parser.QueryStatement:
		r, err := q.query(st.Query, nil)
		if err != nil {
			return "", err
		}
		s.Queries = append(s.Queries, r)
		return "", nil
	case *parser.Show:
		return c.show(src, st)
	case *parser.ShowCreate:
		t, v, err := c.lookup(src, st.Name)
		if err != nil {
			return "", err
		}
		if t != nil {
			return c.redactedDef(t).String() + "\n", nil
		}
		return fmt.Sprintf("CREATE VIEW %s AS\n%s\n", types.QuoteIdentifier(v.Name), v.Query), nil
	case *parser.Describe:
		return c.describe(src, q, st)
	case *parser.Use:
		for _, n := range st.Names {
			if _, err := objectName(src, &parser.ObjectName{Pos: n.Pos, Parts: append(append([]*parser.Ident{}, n.Parts...), &parser.Ident{Name: "x"})}); err != nil && st.What == "" {
				return "", err
			}
		}
		return "", nil
	}
	return "", parser.ErrorAt(src, st.Position(), fmt.Sprintf("%T statements are not supported", st))
}

// explain plans the statement of EXPLAIN and renders its plan.
func (s *Script) explain(src string, st *parser.Explain) (string, error) {
	q := newQueryPlanner(s.Cat, src)
	var roots []Rel
	switch inner := st.Statement.(type) {
	case *parser.Insert:
		r, err := q.insert(inner)
		if err != nil {
			return "", err
		}
		roots = append(roots, r)
	case *parser.StatementSet:
		for _, ins := range inner.Inserts {
			r, err := q.insert(ins)
			if err != nil {
				return "", err
			}
			roots = append(roots, r)
		}
	case *parser.QueryStatement:
		r, err := q.query(inner.Query, nil)
		if err != nil {
			return "", err
		}
		roots = append(roots, r)
	default:
		return "", parser.ErrorAt(src, st.Statement.Position(), "EXPLAIN takes a query, an INSERT or a statement set")
	}
	s.prepare(roots)
	asBuilt(roots, s.Cat)
	par, err := s.parallelisms(roots)
	if err != nil {
		return "", parser.ErrorAt(src, st.Pos, "EXPLAIN: "+err.Error())
	}
	return "== Physical Plan ==\n" + explainPlans(roots, par, newReuse(s.Cat)), nil
}

// prepare rewrites the plans of one job before they are built or shown:
// the filters their sources take are pushed into them (pushFilters), a
// lookup join keeps only the columns read above it (pruneLookupJoins),
// and the scans of one table with the same filters become one
// (shareScans).
func (s *Script) prepare(roots []Rel) {
	pushFilters(roots, s.Cat)
	pruneLookupJoins(roots, s.Cat)
	shareScans(roots, s.Cat)
}

// Build adds the script's INSERTs to env as one job; bare queries print
// their rows with the print connector's form. Equal sub-plans of the
// INSERTs and queries are built once (see reuse).
func (s *Script) Build(env *eddy.Environment) error {
	if len(s.Inserts) == 0 && len(s.Queries) == 0 {
		return fmt.Errorf("sql: the script has no INSERT INTO or query to run")
	}
	var roots []Rel
	for _, r := range s.Inserts {
		roots = append(roots, r)
	}
	roots = append(roots, s.Queries...)
	s.prepare(roots)
	b := newBuilder(env, s.Cat)
	b.countReads(roots)
	for _, r := range s.Inserts {
		if _, err := b.stream(r); err != nil {
			return err
		}
	}
	for i, r := range s.Queries {
		st, err := b.stream(r)
		if err != nil {
			return err
		}
		rt := r.Schema()
		out := func(c Rec) error {
			fmt.Println(types.FormatChange(c.Kind, rt, c.Row))
			return nil
		}
		if s.QueryOutput != nil {
			out = s.QueryOutput(i, rt)
		}
		eddy.SinkTo(st, out)
	}
	return nil
}

func (c *Catalog) settingsText() string {
	keys := make([]string, 0, len(c.Settings))
	for k := range c.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "'%s' = '%s'\n", k, c.Settings[k])
	}
	return b.String()
}

func (c *Catalog) show(src string, st *parser.Show) (string, error) {
	var names []string
	switch st.What {
	case "TABLES":
		for n := range c.Tables {
			names = append(names, n)
		}
		for n := range c.Views {
			names = append(names, n)
		}
	case "VIEWS":
		for n := range c.Views {
			names = append(names, n)
		}
	case "FUNCTIONS", "USER FUNCTIONS":
		if st.What == "FUNCTIONS" {
			names = c.Funcs.Names()
		}
		for n := range c.UserFuncs {
			names = append(names, n)
		}
	case "CATALOGS", "CURRENT CATALOG":
		names = []string{"default_catalog"}
	case "DATABASES", "CURRENT DATABASE":
		names = []string{"default_database"}
	default:
		return "", parser.ErrorAt(src, st.Pos, fmt.Sprintf("SHOW %s is not supported", st.What))
	}
	if st.Like != nil {
		var kept []string
		for _, n := range names {
			if likeMatch(n, st.Like.Value, st.ILike) != st.NotLike {
				kept = append(kept, n)
			}
		}
		names = kept
	}
	sort.Strings(names)
	names = compactStrings(names)
	return strings.Join(names, "\n") + "\n", nil
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// likeMatch matches a SHOW ... LIKE pattern (% and _).
func likeMatch(s, pattern string, fold bool) bool {
	if fold {
		s, pattern = strings.ToLower(s), strings.ToLower(pattern)
	}
	var match func(s, p []rune) bool
	match = func(s, p []rune) bool {
		for len(p) > 0 {
			switch p[0] {
			case '%':
				for i := 0; i <= len(s); i++ {
					if match(s[i:], p[1:]) {
						return true
					}
				}
				return false
			case '_':
				if len(s) == 0 {
					return false
				}
			default:
				if len(s) == 0 || s[0] != p[0] {
					return false
				}
			}
			s, p = s[1:], p[1:]
		}
		return len(s) == 0
	}
	return match([]rune(s), []rune(pattern))
}

// describe renders the columns of a table or view as Flink's DESCRIBE.
func (c *Catalog) describe(src string, q *queryPlanner, st *parser.Describe) (string, error) {
	t, v, err := c.lookup(src, st.Name)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-16s %-28s %-5s %-12s %-30s %s\n", "name", "type", "null", "key", "extras", "watermark")
	if t != nil {
		for i, col := range t.Columns {
			typ := col.Type.Nullable().String() // nullability is the null column
			if i == t.Rowtime {
				typ += " *ROWTIME*"
			}
			null := "TRUE"
			if !col.Type.IsNullable() {
				null = "FALSE"
			}
			key := ""
			for _, k := range t.PrimaryKey {
				if k == col.Name {
					key = "PRI(" + strings.Join(t.PrimaryKey, ", ") + ")"
				}
			}
			extras := ""
			switch col.Kind {
			case parser.ComputedColumn:
				extras = "AS " + col.Expr.String()
			case parser.MetadataColumn:
				extras = "METADATA FROM '" + col.MetadataKey + "'"
				if col.Virtual {
					extras += " VIRTUAL"
				}
			}
			wm := ""
			if i == t.Rowtime {
				wm = t.Watermark.String()
			}
			fmt.Fprintf(&b, "%-16s %-28s %-5s %-12s %-30s %s\n", col.Name, typ, null, key, extras, wm)
		}
		return b.String(), nil
	}
	vq := &queryPlanner{cat: c, src: v.Src, views: map[string]bool{}}
	r, err := vq.query(v.Query, nil)
	if err != nil {
		return "", err
	}
	r, _ = renameColumns(r, v.Columns)
	for _, f := range r.Schema().Fields() {
		null := "TRUE"
		if !f.Type.IsNullable() {
			null = "FALSE"
		}
		fmt.Fprintf(&b, "%-16s %-28s %-5s %-12s %-30s %s\n", f.Name, f.Type.Nullable().String(), null, "", "", "")
	}
	return b.String(), nil
}
