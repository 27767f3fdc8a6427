package plan

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// ValuesRel is a bounded, insert-only relation of constant rows: VALUES,
// and SELECT without FROM. It runs as eddy.FromSlice of the rows, written
// when the job is built.
type ValuesRel struct {
	// Rows are the expressions of every row, of the schema's types.
	Rows [][]expr.Expr
	rt   *types.RowType
}

func (v *ValuesRel) Schema() *types.RowType { return v.rt }

func (v *ValuesRel) Props() Props {
	return Props{Mode: changelog.InsertOnly, Rowtime: -1, Proctime: -1}
}

func (v *ValuesRel) Inputs() []Rel { return nil }

func (v *ValuesRel) Describe() string {
	rows := make([]string, len(v.Rows))
	for i, r := range v.Rows {
		vals := make([]string, len(r))
		for j, e := range r {
			vals[j] = e.String()
		}
		rows[i] = "{ " + strings.Join(vals, ", ") + " }"
	}
	return fmt.Sprintf("Values(tuples=[[%s]], values=[%s])", strings.Join(rows, ", "), fieldList(v.rt))
}

func (v *ValuesRel) build(b *builder) (*eddy.Stream[Rec], error) {
	empty := types.NewRowWriter(types.MustRowType(), types.NewArena(0)).Finish()
	arena := types.NewArena(0)
	recs := make([]Rec, len(v.Rows))
	for i, r := range v.Rows {
		p, err := newProjector(v.rt, r)
		if err != nil {
			return nil, err
		}
		p.w = types.NewRowWriter(v.rt, arena)
		var row types.Row
		if err := expr.Catch(func() { row = p.project(empty) }); err != nil {
			return nil, fmt.Errorf("VALUES row %d: %w", i+1, err)
		}
		recs[i] = changelog.InsertOf(row)
	}
	return eddy.FromSlice(b.env, recs, eddy.NoWatermarks[Rec]()), nil
}

// values plans VALUES (...), ...: the type of a column is the common type
// of its values, to which the others are cast. A SELECT without FROM
// comes here as one row, named by its select list.
func (q *queryPlanner) values(n *parser.Values) (Rel, error) {
	if len(n.Rows) == 0 {
		return nil, q.errorf(n.Pos, "VALUES needs a row")
	}
	a := q.analyzer(&scope{})
	width := len(n.Rows[0])
	rows := make([][]expr.Expr, len(n.Rows))
	for i, r := range n.Rows {
		if len(r) != width {
			return nil, q.errorf(n.Pos, "row %d of VALUES has %d values but the first has %d", i+1, len(r), width)
		}
		for _, x := range r {
			if x == nil {
				return nil, q.errorf(n.Pos, "SELECT * needs a FROM clause")
			}
			e, err := a.Expr(x)
			if err != nil {
				return nil, err
			}
			rows[i] = append(rows[i], e)
		}
	}
	names := valuesNames(q.src, n)
	fs := make([]types.Field, width)
	for j := range width {
		ts := make([]types.Type, len(rows))
		for i := range rows {
			ts[i] = rows[i][j].Type()
		}
		t, ok := types.CommonType(ts...)
		if !ok {
			if allNull(ts) {
				return nil, q.errorf(n.Rows[0][j].Position(), "column %s of VALUES is only NULLs: CAST one of them to its type", names[j])
			}
			return nil, q.errorf(n.Rows[0][j].Position(), "the values of column %s of VALUES have no common type (%s)", names[j], typeList(ts))
		}
		for i := range rows {
			if e := rows[i][j]; !e.Type().EqualIgnoringNullability(t) {
				rows[i][j] = &expr.Cast{X: e, T: t}
			}
		}
		fs[j] = types.F(names[j], t)
	}
	return &ValuesRel{Rows: rows, rt: types.MustRowType(fs...)}, nil
}

func allNull(ts []types.Type) bool {
	for _, t := range ts {
		if t.Kind() != types.KindNull {
			return false
		}
	}
	return true
}

func typeList(ts []types.Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}

// valuesNames names the columns of VALUES as Flink does (EXPR$0, ...), or
// by the select list of the SELECT without FROM it stands for.
func valuesNames(src string, n *parser.Values) []string {
	names := make([]string, len(n.Rows[0]))
	for i := range names {
		names[i] = fmt.Sprintf("EXPR$%d", i)
	}
	if len(n.Rows) != 1 {
		return names
	}
	if sel := selectAt(src, n.Pos); sel != nil && sel.From == nil && len(sel.Items) == len(names) {
		for i, it := range sel.Items {
			if it.Expr == nil {
				return names
			}
			names[i] = itemName(it, i)
		}
	}
	return uniqueNames(names)
}

// selectAt finds the SELECT at pos in the statements of src.
func selectAt(src string, pos parser.Pos) *parser.Select {
	stmts, err := parser.Parse(src)
	if err != nil {
		return nil
	}
	var found *parser.Select
	for _, st := range stmts {
		walkSyntax(st, func(x parser.Node) bool {
			if s, ok := x.(*parser.Select); ok && s.Pos == pos {
				found = s
			}
			return found == nil
		})
	}
	return found
}
