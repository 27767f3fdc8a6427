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

// setOp plans UNION [ALL], INTERSECT [ALL] and EXCEPT [ALL]. UNION without
// ALL is the distinct rows of the UNION ALL; INTERSECT and EXCEPT are
// planned in intersectExcept.
func (q *queryPlanner) setOp(n *parser.SetOp, outer *scope) (Rel, error) {
	l, err := q.body(n.Left, outer)
	if err != nil {
		return nil, err
	}
	r, err := q.body(n.Right, outer)
	if err != nil {
		return nil, err
	}
	op := map[parser.SetOpKind]string{parser.Union: "UNION", parser.Intersect: "INTERSECT", parser.Except: "EXCEPT"}[n.Op]
	lt, rt := l.Schema(), r.Schema()
	if lt.Len() != rt.Len() {
		return nil, q.errorf(n.Pos, "the queries of %s give %d and %d columns: each side must give as many", op, lt.Len(), rt.Len())
	}
	fs := make([]types.Field, lt.Len())
	for i := range fs {
		t, ok := types.CommonType(lt.FieldType(i), rt.FieldType(i))
		if !ok {
			return nil, q.errorf(n.Pos, "column %d of %s is %s on the left and %s on the right, which have no common type: CAST one side", i+1, op, lt.FieldType(i), rt.FieldType(i))
		}
		fs[i] = types.F(lt.Field(i).Name, t)
	}
	want := types.MustRowType(fs...)
	if n.Op != parser.Union {
		return q.intersectExcept(n, conformTo(l, want), conformTo(r, want))
	}
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

// intersectExcept plans INTERSECT and EXCEPT of two relations of the same
// column types, as Flink's planner rewrites them. Without ALL, the left
// rows that have an equal row on the right (INTERSECT) or none (EXCEPT),
// by a left semi or anti join on every column with IS NOT DISTINCT FROM
// (NULLs are equal in set operations), and their distinct rows. With ALL,
// the copies of each row are counted on both sides (a GroupAggregate of
// the UNION ALL of the two sides, each marking its rows), and each row is
// repeated min(left, right) times (INTERSECT ALL) or left - right times
// (EXCEPT ALL), as Flink's $REPLICATE_ROWS$.
func (q *queryPlanner) intersectExcept(n *parser.SetOp, l, r Rel) (Rel, error) {
	for _, in := range []Rel{l, r} {
		if isUpsertMode(in.Props().Mode) && n.All {
			return nil, q.errorf(n.Pos, "%s ALL reads an upsert stream (%s), which it does not take yet: write it without ALL", map[bool]string{true: "INTERSECT", false: "EXCEPT"}[n.Op == parser.Intersect], in.Props().Mode.Describe())
		}
	}
	if !n.All {
		nl := l.Schema().Len()
		var conds []expr.Expr
		for i, f := range l.Schema().Fields() {
			rf := r.Schema().Field(i)
			c, err := q.call("IS NOT DISTINCT FROM", &expr.Column{Index: i, Name: f.Name, T: f.Type}, &expr.Column{Index: nl + i, Name: rf.Name, T: rf.Type})
			if err != nil {
				return nil, q.errorf(n.Pos, "column %d of the set operation cannot be compared: %v", i+1, err)
			}
			conds = append(conds, c)
		}
		kind := eddy.LeftSemiJoin
		if n.Op == parser.Except {
			kind = eddy.LeftAntiJoin
		}
		return &DistinctRel{Input: q.newSubqueryJoin(kind, l, r, conds)}, nil
	}
	names := l.Schema().Names()
	cols := make([]string, len(names))
	for i := range cols {
		cols[i] = fmt.Sprintf("c%d", i)
	}
	list := strings.Join(cols, ", ")
	count, having := "CASE WHEN COUNT(vcol_left) > COUNT(vcol_right) THEN COUNT(vcol_right) ELSE COUNT(vcol_left) END",
		"COUNT(vcol_left) > 0 AND COUNT(vcol_right) > 0"
	if n.Op == parser.Except {
		count, having = "COUNT(vcol_left) - COUNT(vcol_right)", "COUNT(vcol_left) > COUNT(vcol_right)"
	}
	src := fmt.Sprintf("SELECT %s AS `$f0`, %s FROM ("+
		"SELECT %s, TRUE AS vcol_left, CAST(NULL AS BOOLEAN) AS vcol_right FROM __eddy_left UNION ALL "+
		"SELECT %s, CAST(NULL AS BOOLEAN) AS vcol_left, TRUE AS vcol_right FROM __eddy_right) AS u "+
		"GROUP BY %s HAVING %s", count, list, list, list, list, having)
	counted, err := q.derived(n.Pos, src, derivedInput{"__eddy_left", l, cols}, derivedInput{"__eddy_right", r, cols})
	if err != nil {
		return nil, err
	}
	rep := &ReplicateRowsRel{Input: counted}
	rt := counted.Schema()
	projs := make([]expr.Expr, len(names))
	for i := range projs {
		f := rt.Field(i + 1)
		projs[i] = &expr.Column{Index: i + 1, Name: f.Name, T: f.Type}
	}
	return newCalc(rep, projs, names, nil), nil
}

// ReplicateRowsRel repeats each row of its input as many times as its
// first column (a BIGINT NOT NULL count) says, as Flink's $REPLICATE_ROWS$
// table function does for INTERSECT ALL and EXCEPT ALL: an addition (+I,
// +U) of a row adds its copies (+I), a retraction (-U, -D) takes them
// back (-D).
type ReplicateRowsRel struct {
	Input Rel
}

func (r *ReplicateRowsRel) Schema() *types.RowType { return r.Input.Schema() }
func (r *ReplicateRowsRel) Inputs() []Rel          { return []Rel{r.Input} }

func (r *ReplicateRowsRel) Props() Props {
	mode := changelog.InsertOnly
	if !r.Input.Props().Mode.IsInsertOnly() {
		mode = changelog.ModeOf(changelog.Insert, changelog.Delete)
	}
	return Props{Mode: mode, Rowtime: -1, Proctime: -1}
}

func (r *ReplicateRowsRel) Describe() string {
	names := r.Schema().Names()
	for i, n := range names {
		names[i] = types.QuoteIdentifier(n)
	}
	return fmt.Sprintf("Correlate(invocation=[$REPLICATE_ROWS$(%s)], select=[%s])", strings.Join(names, ", "), strings.Join(names[1:], ", "))
}

func (r *ReplicateRowsRel) build(b *builder) (*eddy.Stream[Rec], error) {
	s, err := b.stream(r.Input)
	if err != nil {
		return nil, err
	}
	out := eddy.FlatMap(s, func(c Rec, emit func(Rec)) {
		kind := changelog.Insert
		if !c.Kind.IsAddition() {
			kind = changelog.Delete
		}
		for n := c.Row.Int64(0); n > 0; n-- {
			emit(Rec{Kind: kind, Row: c.Row})
		}
	})
	return eddy.AsChangelog(out, r.Props().Mode), nil
}
