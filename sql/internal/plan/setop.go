package plan

import (
	"fmt"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// UnionRel is UNION ALL: the rows of all its inputs, which have the same
// column types, named as the first input's. It runs as eddy.Union; its
// changelog carries the changes of every input.
type UnionRel struct {
	Ins []Rel
}

func (u *UnionRel) Schema() *types.RowType { return u.Ins[0].Schema() }

func (u *UnionRel) Props() Props {
	p := Props{Rowtime: u.Ins[0].Props().Rowtime, Proctime: u.Ins[0].Props().Proctime}
	for _, in := range u.Ins {
		ip := in.Props()
		p.Mode = p.Mode.Union(ip.Mode)
		// A time attribute survives if every input has it at one place.
		if ip.Rowtime != p.Rowtime {
			p.Rowtime = -1
		}
		if ip.Proctime != p.Proctime {
			p.Proctime = -1
		}
	}
	return p
}

func (u *UnionRel) Inputs() []Rel { return u.Ins }

func (u *UnionRel) Describe() string {
	return fmt.Sprintf("Union(all=[true], union=[%s])", fieldList(u.Schema()))
}

func (u *UnionRel) build(b *builder) (*eddy.Stream[Rec], error) {
	var ss []*eddy.Stream[Rec]
	for _, in := range u.Ins {
		s, err := b.stream(in)
		if err != nil {
			return nil, err
		}
		ss = append(ss, eddy.AsChangelog(s, in.Props().Mode))
	}
	return eddy.Union(ss[0], ss[1:]...), nil
}

// setOp plans UNION [ALL]; UNION without ALL is the distinct rows of the
// UNION ALL. INTERSECT and EXCEPT are refused.
func (q *queryPlanner) setOp(n *parser.SetOp, outer *scope) (Rel, error) {
	switch n.Op {
	case parser.Intersect:
		return nil, q.errorf(n.Pos, "INTERSECT is not supported yet: write it as a join of the two queries on all their columns (with SELECT DISTINCT for INTERSECT without ALL)")
	case parser.Except:
		return nil, q.errorf(n.Pos, "EXCEPT is not supported yet: write it as NOT EXISTS or a LEFT JOIN keeping the rows without a match")
	}
	l, err := q.body(n.Left, outer)
	if err != nil {
		return nil, err
	}
	r, err := q.body(n.Right, outer)
	if err != nil {
		return nil, err
	}
	lt, rt := l.Schema(), r.Schema()
	if lt.Len() != rt.Len() {
		return nil, q.errorf(n.Pos, "the queries of UNION give %d and %d columns: each side must give as many", lt.Len(), rt.Len())
	}
	fs := make([]types.Field, lt.Len())
	for i := range fs {
		t, ok := types.CommonType(lt.FieldType(i), rt.FieldType(i))
		if !ok {
			return nil, q.errorf(n.Pos, "column %d of UNION is %s on the left and %s on the right, which have no common type: CAST one side", i+1, lt.FieldType(i), rt.FieldType(i))
		}
		fs[i] = types.F(lt.Field(i).Name, t)
	}
	want := types.MustRowType(fs...)
	var ins []Rel
	for _, side := range []Rel{conformTo(l, want), conformTo(r, want)} {
		if u, ok := side.(*UnionRel); ok {
			ins = append(ins, u.Ins...)
		} else {
			ins = append(ins, side)
		}
	}
	var out Rel = &UnionRel{Ins: ins}
	if !n.All {
		if isUpsertMode(out.Props().Mode) {
			return nil, q.errorf(n.Pos, "UNION reads an upsert stream (%s), which it does not take yet: write UNION ALL", out.Props().Mode.Describe())
		}
		out = &DistinctRel{Input: out}
	}
	return out, nil
}

// conformTo casts the columns of r to the types of want, if they differ
// (the union is named by its first input).
func conformTo(r Rel, want *types.RowType) Rel {
	have := r.Schema()
	same := true
	projs := make([]expr.Expr, want.Len())
	for i, f := range want.Fields() {
		src := have.Field(i)
		var e expr.Expr = &expr.Column{Index: i, Name: src.Name, T: src.Type}
		if !src.Type.Equal(f.Type) {
			e = &expr.Cast{X: e, T: f.Type}
			same = false
		}
		projs[i] = e
	}
	if same {
		return r
	}
	return newCalc(r, projs, want.Names(), nil)
}
