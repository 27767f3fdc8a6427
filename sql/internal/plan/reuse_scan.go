package plan

import (
	"fmt"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// shareScans makes the scans of one table read by different Calcs one
// scan, as Flink's ScanReuser does, unless SET
// 'table.optimizer.reuse-source-enabled' = 'false': a source that projects
// (connector.ProjectableSource) emits for each Calc only the fields it
// reads (pushProjection), so two Calcs reading different fields of one
// table would open two sources, each reading the whole table. Scans of one
// table with the same filters pushed into them (and of insert-only rows)
// become one scan of the union of the fields they emit, and each Calc
// reads its fields out of it; the equal scans are then built once
// (reuse). Scans with different filters stay apart, each reading only the
// rows its filter keeps; so do scans that a relation other than a Calc
// reads (it reads the rows as they are). Calcs are rewritten in place, as
// pushFilters does.
func shareScans(roots []Rel, cat *Catalog) {
	if !settingOn(cat, reuseSourceSetting) {
		return
	}
	u := newReuse(cat)
	type group struct {
		base    *ScanRel
		readers []*CalcRel
		keys    map[int]bool // the readers' keys
		blocked bool
	}
	groups := map[int]*group{}
	var order []*group
	walkRels(roots, func(r Rel) bool {
		for _, in := range r.Inputs() {
			if s, ok := in.(*ScanRel); ok {
				base := s
				if s.paths != nil {
					base = s.wide
				}
				if base == nil {
					continue
				}
				id := u.d.id(base)
				g, ok := groups[id]
				if !ok {
					g = &group{base: base, keys: map[int]bool{}}
					groups[id] = g
					order = append(order, g)
				}
				c, isCalc := r.(*CalcRel)
				if !isCalc || s.mode != changelog.InsertOnly || len(s.upsertKey) > 0 {
					g.blocked = true
				} else {
					g.readers = append(g.readers, c)
					g.keys[u.key(c)] = true
				}
			}
		}
		return true
	})
	for _, g := range order {
		if g.blocked || len(g.keys) < 2 {
			continue
		}
		// Every reader over the fields it reads, then one scan of them
		// all.
		var all [][]int
		whole := false
		for _, c := range g.readers {
			if n := c.narrowed(cat); n != c {
				*c = *n
			}
			s := c.Input.(*ScanRel)
			if s.paths == nil && readsColumns(c) {
				whole = true
			}
			all = append(all, s.paths...)
		}
		shared := g.base
		if paths := unionPaths(all); !whole && len(paths) > 0 && projects(g.base, cat, paths) {
			shared, _ = narrowScan(g.base, paths)
		}
		for _, c := range g.readers {
			if s := c.Input.(*ScanRel); s != shared && u.d.id(s) != u.d.id(shared) {
				if over, ok := c.over(shared); ok {
					*c = *over
				}
			}
		}
	}
}

// over returns c reading the scan shared instead of its own, a scan of the
// same table with the same filters whose fields include those c reads:
// every column of c's scan becomes the expression of its path over
// shared's rows. It returns false if a column c reads is not in shared's
// rows, or its type would change.
func (c *CalcRel) over(shared *ScanRel) (*CalcRel, bool) {
	s := c.Input.(*ScanRel)
	ok := true
	subst := func(e expr.Expr) expr.Expr {
		return expr.Rewrite(e, func(x expr.Expr) expr.Expr {
			col, isCol := x.(*expr.Column)
			if !isCol {
				return x
			}
			p := []int{col.Index}
			if s.paths != nil {
				p = s.paths[col.Index]
			}
			y, found := shared.pathExpr(p)
			if !found || !y.Type().Equal(col.T) {
				ok = false
				return x
			}
			return y
		})
	}
	out := *c
	out.Input = shared
	out.Projs = mapExprs(c.Projs, subst)
	out.Cond = subst(c.Cond)
	return &out, ok
}

// readsColumns tells whether c reads a column of its input.
func readsColumns(c *CalcRel) bool {
	for _, e := range append(append([]expr.Expr{}, c.Projs...), c.Cond) {
		if len(expr.Columns(e)) > 0 {
			return true
		}
	}
	return false
}

// pathExpr returns the expression over s's rows of the field at path p of
// the table's rows (over the scan's whole rows): the column that emits it,
// or the accesses of its nested fields over the column that emits the ROW
// it is in.
func (s *ScanRel) pathExpr(p []int) (expr.Expr, bool) {
	index := map[string]int{}
	for k := 0; k < s.rt.Len(); k++ {
		q := []int{k}
		if s.paths != nil {
			q = s.paths[k]
		}
		index[fmt.Sprint(q)] = k
	}
	for n := len(p); n > 0; n-- {
		k, ok := index[fmt.Sprint(p[:n])]
		if !ok {
			continue
		}
		var e expr.Expr = &expr.Column{Index: k, Name: s.rt.Field(k).Name, T: s.rt.FieldType(k)}
		for _, j := range p[n:] {
			t := e.Type()
			if t.Kind() != types.KindRow || j >= t.Row().Len() {
				return nil, false
			}
			f := t.Row().Field(j)
			ft := f.Type.WithNullability(t.IsNullable() || f.Type.IsNullable())
			e = &expr.Field{X: e, Index: j, Name: f.Name, T: ft}
		}
		return e, true
	}
	return nil, false
}
