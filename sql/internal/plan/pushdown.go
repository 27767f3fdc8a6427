package plan

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// fieldPath returns the path of a column reference or of a chain of ROW
// field accesses on one (bid.price: [3, 2]).
func fieldPath(e expr.Expr) ([]int, bool) {
	switch x := e.(type) {
	case *expr.Column:
		return []int{x.Index}, true
	case *expr.Field:
		p, ok := fieldPath(x.X)
		if !ok {
			return nil, false
		}
		return append(p, x.Index), true
	}
	return nil, false
}

// walkPaths calls fn with every maximal field path in e.
func walkPaths(e expr.Expr, fn func([]int)) {
	if e == nil {
		return
	}
	if p, ok := fieldPath(e); ok {
		fn(p)
		return
	}
	switch x := e.(type) {
	case *expr.Call:
		for _, a := range x.Args {
			walkPaths(a, fn)
		}
	case *expr.Cast:
		walkPaths(x.X, fn)
	case *expr.Case:
		for _, w := range x.Whens {
			walkPaths(w.Cond, fn)
			walkPaths(w.Result, fn)
		}
		walkPaths(x.Else, fn)
	case *expr.Field:
		walkPaths(x.X, fn)
	}
}

// replacePaths returns e with every maximal field path replaced by repl's
// expression for it.
func replacePaths(e expr.Expr, repl func(p []int, e expr.Expr) expr.Expr) expr.Expr {
	if e == nil {
		return nil
	}
	if p, ok := fieldPath(e); ok {
		return repl(p, e)
	}
	switch x := e.(type) {
	case *expr.Call:
		c := *x
		c.Args = make([]expr.Expr, len(x.Args))
		for i, a := range x.Args {
			c.Args[i] = replacePaths(a, repl)
		}
		return &c
	case *expr.Cast:
		c := *x
		c.X = replacePaths(x.X, repl)
		return &c
	case *expr.Case:
		c := *x
		c.Whens = make([]expr.When, len(x.Whens))
		for i, w := range x.Whens {
			c.Whens[i] = expr.When{Cond: replacePaths(w.Cond, repl), Result: replacePaths(w.Result, repl)}
		}
		c.Else = replacePaths(x.Else, repl)
		return &c
	case *expr.Field:
		c := *x
		c.X = replacePaths(x.X, repl)
		return &c
	}
	return e
}

// pushProjection returns c over a scan of only the columns and nested
// fields c reads, when c reads a table whose source can emit them
// (connector.ProjectableSource): the source then writes one narrow row per
// record instead of the table's whole rows. It returns c as it is unless
// c reads the scan alone (builder.readsAlone): a scan that other
// relations read too is one source for them all (shareScans makes the
// scans of one table one, and sub-plan reuse builds equal scans once), and
// a scan of c's own would open another.
func (c *CalcRel) pushProjection(b *builder, alone bool) *CalcRel {
	if !alone {
		return c
	}
	return c.narrowed(b.cat)
}

// narrowed is pushProjection with the connectors of cat.
func (c *CalcRel) narrowed(cat *Catalog) *CalcRel {
	scan, ok := c.Input.(*ScanRel)
	if !ok {
		return c
	}
	if scan.paths != nil {
		return c.renarrowed(cat, scan)
	}
	exprs := append(append([]expr.Expr{}, c.Projs...), c.Cond, scan.rowtime, scan.watermark)
	var all [][]int
	for _, e := range exprs {
		walkPaths(e, func(p []int) { all = append(all, p) })
	}
	paths := unionPaths(all)
	if len(paths) == 0 || !projects(scan, cat, paths) {
		return c
	}
	narrow, repl := narrowScan(scan, paths)
	out := *c
	out.Input = narrow
	out.Projs = make([]expr.Expr, len(c.Projs))
	for i, e := range c.Projs {
		out.Projs[i] = replacePaths(e, repl)
	}
	out.Cond = replacePaths(c.Cond, repl)
	return &out
}

// renarrowed is narrowed for a Calc over a scan already narrowed for a
// wider reader (the Calc of a view, before a join pruned the columns it
// reads): c is read over the scan's whole rows and narrowed again, so
// that the source writes only what c reads. It returns c as it is unless
// that is fewer fields.
func (c *CalcRel) renarrowed(cat *Catalog, scan *ScanRel) *CalcRel {
	if scan.wide == nil {
		return c
	}
	wide := scan.wide
	// Column k of the narrow rows is the field at path scan.paths[k].
	widen := func(e expr.Expr) expr.Expr {
		if e == nil {
			return nil
		}
		return expr.Rewrite(e, func(x expr.Expr) expr.Expr {
			col, ok := x.(*expr.Column)
			if !ok {
				return x
			}
			p := scan.paths[col.Index]
			f := wide.rt.Field(p[0])
			var out expr.Expr = &expr.Column{Index: p[0], Name: f.Name, T: f.Type}
			t := f.Type
			for _, j := range p[1:] {
				sub := t.Row().Field(j)
				t = sub.Type.WithNullability(t.IsNullable() || sub.Type.IsNullable())
				out = &expr.Field{X: out, Index: j, Name: sub.Name, T: t}
			}
			return out
		})
	}
	wc := *c
	wc.Input = wide
	wc.Projs = mapExprs(c.Projs, widen)
	wc.Cond = widen(c.Cond)
	out := wc.narrowed(cat)
	if n, ok := out.Input.(*ScanRel); !ok || n.paths == nil || len(n.paths) >= len(scan.paths) {
		return c
	}
	return out
}

// unionPaths returns the distinct paths of all, in order of first
// occurrence: a path into a column that another path reads whole reads
// that column.
func unionPaths(all [][]int) [][]int {
	whole := map[int]bool{}
	for _, p := range all {
		if len(p) == 1 {
			whole[p[0]] = true
		}
	}
	seen := map[string]bool{}
	var paths [][]int
	for _, p := range all {
		if whole[p[0]] {
			p = p[:1]
		}
		if k := fmt.Sprint(p); !seen[k] {
			seen[k] = true
			paths = append(paths, p)
		}
	}
	return paths
}

// projects tells whether scan's source emits the fields at paths alone
// (connector.ProjectableSource).
func projects(scan *ScanRel, cat *Catalog, paths [][]int) bool {
	src, err := scan.source(cat)
	if err != nil {
		return false
	}
	ps, ok := src.(connector.ProjectableSource)
	if !ok {
		return false
	}
	_, ok = ps.ProjectFields(paths)
	return ok
}

// narrowScan returns the scan of the fields at paths of scan's rows (no
// path inside a column another path reads whole), and the function that
// gives, for an expression e over scan's rows reading the field at path p
// (p among paths or inside one), the expression over the narrow rows.
func narrowScan(scan *ScanRel, paths [][]int) (*ScanRel, func(p []int, e expr.Expr) expr.Expr) {
	whole := map[int]bool{}
	index := map[string]int{}
	key := func(p []int) string { return fmt.Sprint(p) }
	for k, p := range paths {
		if len(p) == 1 {
			whole[p[0]] = true
		}
		index[key(p)] = k
	}
	// The narrow row's types, and the expressions over it. A field is
	// named by its path (bid_price), as Flink names the fields of a
	// nested projection.
	fs := make([]types.Field, len(paths))
	names := map[string]bool{}
	for k, p := range paths {
		t := scan.rt.FieldType(p[0])
		name := scan.rt.Field(p[0]).Name
		for _, j := range p[1:] {
			name += "_" + t.Row().Field(j).Name
			t = t.Row().FieldType(j).WithNullability(t.IsNullable() || t.Row().FieldType(j).IsNullable())
		}
		if names[strings.ToLower(name)] {
			name = fmt.Sprintf("%s$%d", name, k)
		}
		names[strings.ToLower(name)] = true
		fs[k] = types.F(name, t)
	}
	repl := func(p []int, e expr.Expr) expr.Expr {
		if whole[p[0]] && len(p) > 1 {
			// A field of a column read whole: the access over it.
			k := index[key(p[:1])]
			return expr.Rewrite(e, func(x expr.Expr) expr.Expr {
				if col, ok := x.(*expr.Column); ok && col.Index == p[0] {
					return &expr.Column{Index: k, Name: fs[k].Name, T: fs[k].Type}
				}
				return x
			})
		}
		k := index[key(p)]
		return &expr.Column{Index: k, Name: fs[k].Name, T: fs[k].Type}
	}
	narrow := *scan
	narrow.paths = paths
	narrow.wide = scan
	narrow.rt = types.MustRowType(fs...)
	narrow.rowtime = replacePaths(scan.rowtime, repl)
	narrow.watermark = replacePaths(scan.watermark, repl)
	return &narrow, repl
}
