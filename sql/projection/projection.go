// Package projection compiles a SELECT list and a WHERE condition in eddy's
// SQL expression language over rows of one type, for the transforms of
// pipelines and programs that filter and reshape rows outside a SQL query.
package projection

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// Projection is a SELECT list and a WHERE condition compiled over rows of
// one type, in eddy's SQL expression language: what a pipeline's transform
// rule applies to each row of a table. It is not safe for concurrent use.
type Projection struct {
	in, out *types.RowType
	setters []func(in types.Row, w *types.RowWriter)
	keep    func(types.Row) (bool, bool) // value, null
	used    []bool
	w       *types.RowWriter
	src     string
}

// Option tunes Compile.
type Option func(*projectionConfig)

type projectionConfig struct{ hidden map[string]bool }

// HiddenColumns names input columns that expressions may read but that '*'
// leaves out, such as metadata columns.
func HiddenColumns(names ...string) Option {
	return func(c *projectionConfig) {
		for _, n := range names {
			c.hidden[n] = true
		}
	}
}

// Compile compiles projection (a SELECT list: '*', columns,
// expressions with 'AS name'; empty means '*') and filter (a condition;
// empty keeps every row) over rows of type in.
func Compile(in *types.RowType, projection, filter string, opts ...Option) (*Projection, error) {
	cfg := projectionConfig{hidden: map[string]bool{}}
	for _, o := range opts {
		o(&cfg)
	}
	list := strings.TrimSpace(projection)
	if list == "" {
		list = "*"
	}
	src := "SELECT " + list + " FROM t"
	if strings.TrimSpace(filter) != "" {
		src += " WHERE " + filter
	}
	st, err := parser.ParseStatement(src)
	if err != nil {
		return nil, fmt.Errorf("transform: %w", err)
	}
	q, ok := st.(*parser.QueryStatement)
	var sel *parser.Select
	if ok {
		sel, _ = q.Query.Body.(*parser.Select)
	}
	if sel == nil || sel.Distinct || len(sel.GroupBy) > 0 || sel.Having != nil {
		return nil, fmt.Errorf("transform %q: a projection is a plain list of expressions", src)
	}
	p := &Projection{in: in, used: make([]bool, in.Len()), src: src}
	a := &expr.Analyzer{Src: src, Funcs: expr.Builtins(), Scope: projectionScope{p}}
	var fields []types.Field
	var exprs []expr.Expr
	for _, it := range sel.Items {
		if it.Star {
			if it.Qualifier != nil {
				return nil, fmt.Errorf("transform %q: write '*' without a qualifier", src)
			}
			for i, f := range in.Fields() {
				if cfg.hidden[f.Name] {
					continue
				}
				p.used[i] = true
				fields = append(fields, f)
				exprs = append(exprs, &expr.Column{Index: i, Name: f.Name, T: f.Type})
			}
			continue
		}
		e, err := a.Expr(it.Expr)
		if err != nil {
			return nil, fmt.Errorf("transform: %w", err)
		}
		name := ""
		switch {
		case it.Alias != nil:
			name = it.Alias.Name
		case isRef(it.Expr):
			name = it.Expr.(*parser.Ref).Parts[len(it.Expr.(*parser.Ref).Parts)-1].Name
		default:
			return nil, fmt.Errorf("transform %q: name the expression %s with AS", src, e)
		}
		// A computed column named as an input column replaces it.
		replaced := false
		for i := range fields {
			if fields[i].Name == name {
				fields[i], exprs[i], replaced = types.F(name, e.Type()), e, true
			}
		}
		if !replaced {
			fields = append(fields, types.F(name, e.Type()))
			exprs = append(exprs, e)
		}
	}
	out, err := types.NewRowType(fields...)
	if err != nil {
		return nil, fmt.Errorf("transform %q: %w", src, err)
	}
	p.out = out
	for i, e := range exprs {
		s, err := expr.Setter(e, i)
		if err != nil {
			return nil, fmt.Errorf("transform %q: %w", src, err)
		}
		p.setters = append(p.setters, s)
	}
	if sel.Where != nil {
		e, err := a.Expr(sel.Where)
		if err != nil {
			return nil, fmt.Errorf("transform: %w", err)
		}
		if e.Type().Kind() != types.KindBoolean {
			return nil, fmt.Errorf("transform %q: the filter is a %s, not a condition", src, e.Type())
		}
		ev, err := expr.Compile(e)
		if err != nil {
			return nil, fmt.Errorf("transform %q: %w", src, err)
		}
		p.keep = ev.Bool
	}
	p.w = types.NewRowWriter(out, types.NewArena(64<<10))
	return p, nil
}

func isRef(e parser.Expr) bool { _, ok := e.(*parser.Ref); return ok }

// Type returns the type of the rows Apply returns.
func (p *Projection) Type() *types.RowType { return p.out }

// Uses reports whether the projection or the filter reads input column i.
func (p *Projection) Uses(i int) bool { return p.used[i] }

// Apply returns the projected row of in and whether the filter keeps it
// (a NULL condition drops it, as WHERE does). The row is the caller's to
// keep. An expression that fails (an overflow, a bad cast) gives
// an error naming it.
func (p *Projection) Apply(in types.Row) (out types.Row, keep bool, err error) {
	err = expr.Catch(func() {
		if p.keep != nil {
			if v, null := p.keep(in); null || !v {
				return
			}
		}
		keep = true
		for _, s := range p.setters {
			s(in, p.w)
		}
		out = p.w.Finish()
	})
	if err != nil {
		return types.Row{}, false, fmt.Errorf("transform %q: %w", p.src, err)
	}
	return out, keep, nil
}

// projectionScope resolves the columns of a projection's input.
type projectionScope struct{ p *Projection }

func (s projectionScope) Column(parts []string) (expr.Expr, int, error) {
	in := s.p.in
	i, ok := in.Index(parts[0])
	if !ok {
		for j, f := range in.Fields() {
			if strings.EqualFold(f.Name, parts[0]) {
				i, ok = j, true
				break
			}
		}
	}
	if !ok {
		return nil, 0, fmt.Errorf("unknown column %s; the table has %s", parts[0], strings.Join(in.Names(), ", "))
	}
	s.p.used[i] = true
	f := in.Field(i)
	return &expr.Column{Index: i, Name: f.Name, T: f.Type}, 1, nil
}
