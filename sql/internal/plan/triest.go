package plan

import (
	"fmt"
	"math"
	"strings"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// TRIEST is a table function that estimates the triangles of the graph an
// edge table gives, with the TRIEST estimators of package sketch (De
// Stefani et al., KDD 2016), keeping at most BUDGET edges:
//
//	SELECT * FROM TABLE(TRIEST(
//	    TABLE edges, DESCRIPTOR(src), DESCRIPTOR(dst),
//	    [BUDGET =>] 10000,           -- M, the edges kept (at least 6); default 10000
//	    [MODE => 'improved'],        -- 'base', 'improved' or 'fully-dynamic'
//	    [LOCAL => 10],               -- the local estimates of the top 10 vertices instead
//	    [EVERY => 1],                -- emit after every so many edges, and at the end
//	    [SEED => 1]))                -- the seed of the edge sample
//
// Each row of edges is the undirected edge {src, dst} between vertices
// given by integer columns; a NULL end or a self-loop is skipped. Over an
// insert-only table the modes are TRIEST-BASE and TRIEST-IMPR (the default,
// of lower variance); over a changelog the mode is TRIEST-FD, the fully
// dynamic variant, which takes +I and +U as insertions and -U and -D as
// deletions of edges. While the graph has at most BUDGET edges every mode
// is exact.
//
// The function's output is an updating table. By default it is one row
// (edges BIGINT, triangles DOUBLE): the edges of the graph (for
// fully-dynamic, those present; otherwise those inserted) and the estimated
// number of triangles, inserted at the first edge and updated (-U, +U) as
// it changes. With LOCAL => k it is the rows (vertex BIGINT, triangles
// DOUBLE) of the k vertices with the largest local estimates (the
// triangles that contain the vertex; vertices in none are not listed),
// keyed by vertex: a vertex enters with +I, changes with -U/+U and leaves
// with -D. The table is brought up to date after every EVERY edges and
// when the input ends.
//
// TRIEST keeps one sample of the whole edge stream, which does not split
// or merge, so the function runs in one subtask. Its estimator lives in
// keyed state in its binary encoding (sample, counters and random state),
// so a restored job goes on where it stopped.

// triestParams are the parameters of TRIEST, in order.
var triestParams = []string{"DATA", "SRC", "DST", "BUDGET", "MODE", "LOCAL", "EVERY", "SEED"}

// Triest modes.
const (
	triestBase     = "base"
	triestImproved = "improved"
	triestFD       = "fully-dynamic"
)

// TriestRel is TABLE(TRIEST(...)) over an edge table.
type TriestRel struct {
	Input    Rel
	Src, Dst int // the vertex columns of the input
	Budget   int
	Mode     string
	Local    int // 0: the global estimate; k: the top k local estimates
	Every    int
	Seed     uint64
	rt       *types.RowType
}

// isTriest tells whether a table function call is TRIEST.
func isTriest(c *parser.FuncCall) bool { return strings.EqualFold(c.Name.Last().Name, "TRIEST") }

// triest plans TABLE(TRIEST(...)).
func (q *queryPlanner) triest(n *parser.TableFunction, outer *scope) (Rel, *scope, error) {
	c := n.Call
	args := map[string]parser.Expr{}
	for i, a := range c.Args {
		if na, ok := a.(*parser.NamedArg); ok {
			name := strings.ToUpper(na.Name.Name)
			if !isTriestParam(name) {
				return nil, nil, q.errorf(na.Pos, "TRIEST has no parameter %s; its parameters are %s", na.Name.Name, strings.Join(triestParams, ", "))
			}
			args[name] = na.Value
			continue
		}
		if i >= len(triestParams) {
			return nil, nil, q.errorf(a.Position(), "TRIEST takes at most %d arguments (%s)", len(triestParams), strings.Join(triestParams, ", "))
		}
		args[triestParams[i]] = a
	}
	data, ok := args["DATA"].(*parser.TableArg)
	if !ok {
		return nil, nil, q.errorf(c.Pos, "the first argument of TRIEST is the edge table: TABLE name")
	}
	if len(data.PartitionBy) > 0 || len(data.OrderBy) > 0 {
		return nil, nil, q.errorf(data.Pos, "TRIEST takes the whole edge table: it has no PARTITION BY or ORDER BY")
	}
	in, qual, err := q.tableName(&parser.TableName{Pos: data.Pos, Name: data.Name})
	if err != nil {
		return nil, nil, err
	}
	r := &TriestRel{Input: in, Budget: 10000, Every: 1, Seed: 1}
	column := func(key string) (int, error) {
		d, ok := args[key].(*parser.Descriptor)
		if !ok || len(d.Columns) != 1 {
			return 0, q.errorf(c.Pos, "the %s argument of TRIEST is a vertex column: DESCRIPTOR(column)", key)
		}
		i, ok := in.Schema().Index(d.Columns[0].Name)
		if !ok {
			return 0, q.errorf(d.Columns[0].Pos, "%s has no column %s; its columns are %s", qual, d.Columns[0].Name, strings.Join(in.Schema().Names(), ", "))
		}
		switch in.Schema().FieldType(i).Kind() {
		case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		default:
			return 0, q.errorf(d.Pos, "TRIEST's vertices are integers, but %s is %s; number the vertices (a BIGINT id per vertex) first", d.Columns[0].Name, in.Schema().FieldType(i))
		}
		return i, nil
	}
	if r.Src, err = column("SRC"); err != nil {
		return nil, nil, err
	}
	if r.Dst, err = column("DST"); err != nil {
		return nil, nil, err
	}
	constant := func(key string) (any, parser.Pos, error) {
		e := args[key]
		a := &expr.Analyzer{Src: q.src, Funcs: q.cat.Funcs}
		x, err := a.Expr(e)
		if err != nil {
			return nil, e.Position(), err
		}
		l, ok := x.(*expr.Literal)
		if !ok || l.V == nil {
			return nil, e.Position(), q.errorf(e.Position(), "the %s argument of TRIEST must be a constant, not %s", key, x)
		}
		return l.V, e.Position(), nil
	}
	integer := func(key string, min int64, def *int) error {
		if args[key] == nil {
			return nil
		}
		v, pos, err := constant(key)
		if err != nil {
			return err
		}
		f, ok := literalFloat(v)
		if !ok || f != math.Trunc(f) || f < float64(min) || f > math.MaxInt32 {
			return q.errorf(pos, "the %s argument of TRIEST must be an integer from %d to %d, not %v", key, min, math.MaxInt32, v)
		}
		*def = int(f)
		return nil
	}
	if err := integer("BUDGET", 6, &r.Budget); err != nil {
		return nil, nil, err
	}
	if err := integer("LOCAL", 0, &r.Local); err != nil {
		return nil, nil, err
	}
	if err := integer("EVERY", 1, &r.Every); err != nil {
		return nil, nil, err
	}
	seed := 1
	if err := integer("SEED", 0, &seed); err != nil {
		return nil, nil, err
	}
	r.Seed = uint64(seed)
	mode := in.Props().Mode
	if mode.Contains(changelog.UpdateAfter) && !mode.Contains(changelog.UpdateBefore) {
		return nil, nil, q.errorf(data.Pos, "TRIEST reads the edges an update replaces from its -U rows, but %s is an upsert changelog (%s); read it through a query that retracts rows", qual, mode.Describe())
	}
	r.Mode = triestImproved
	if !mode.IsInsertOnly() {
		r.Mode = triestFD
	}
	if args["MODE"] != nil {
		v, pos, err := constant("MODE")
		if err != nil {
			return nil, nil, err
		}
		s, _ := v.(string)
		switch strings.ToLower(s) {
		case triestBase, triestImproved, triestFD:
			r.Mode = strings.ToLower(s)
		default:
			return nil, nil, q.errorf(pos, "the MODE of TRIEST is 'base', 'improved' or 'fully-dynamic', not %v", v)
		}
		if r.Mode != triestFD && !mode.IsInsertOnly() {
			return nil, nil, q.errorf(pos, "TRIEST in mode '%s' takes insertions only, but %s is a changelog (%s); use MODE => 'fully-dynamic', which takes deletions", r.Mode, qual, mode.Describe())
		}
	}
	fs := []types.Field{types.F("edges", types.BigInt().NotNull()), types.F("triangles", types.Double().NotNull())}
	if r.Local > 0 {
		fs[0] = types.F("vertex", types.BigInt().NotNull())
	}
	r.rt = types.MustRowType(fs...)
	var out Rel = r
	qual = ""
	if n.Alias != nil {
		if out, qual, err = q.alias(out, qual, n.Alias); err != nil {
			return nil, nil, err
		}
	}
	sc := &scope{outer: outer}
	sc.add(qual, out.Schema())
	return out, sc, nil
}

func isTriestParam(name string) bool {
	for _, p := range triestParams {
		if p == name {
			return true
		}
	}
	return false
}

// Schema is (edges, triangles), or (vertex, triangles) with LOCAL.
func (r *TriestRel) Schema() *types.RowType { return r.rt }

// Props: a retract changelog, keyed by vertex for the local estimates.
func (r *TriestRel) Props() Props {
	p := Props{Mode: changelog.Retract, Rowtime: -1, Proctime: -1}
	if r.Local > 0 {
		p.UpsertKey = []int{0}
	}
	return p
}

// Inputs is the edge table.
func (r *TriestRel) Inputs() []Rel { return []Rel{r.Input} }

// Describe is the function's line in EXPLAIN.
func (r *TriestRel) Describe() string {
	in := r.Input.Schema()
	out := "global"
	if r.Local > 0 {
		out = fmt.Sprintf("local top %d", r.Local)
	}
	return fmt.Sprintf("Triest(edges=[%s, %s], budget=[%d], mode=[%s], output=[%s], every=[%d], seed=[%d])",
		in.Field(r.Src).Name, in.Field(r.Dst).Name, r.Budget, r.Mode, out, r.Every, r.Seed)
}

// build sends every edge to one subtask, where the estimator runs.
func (r *TriestRel) build(b *builder) (*eddy.Stream[Rec], error) {
	s, err := b.stream(r.Input)
	if err != nil {
		return nil, err
	}
	all := eddy.KeyBy(s, func(Rec) struct{} { return struct{}{} })
	out := eddy.ProcessKeyed(all, r.newFunction).Name("Triest").Parallelism(1)
	return eddy.AsChangelog(out, changelog.Retract), nil
}
