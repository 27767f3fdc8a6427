package plan

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// aggRef is an aggregate call's result in a select item or HAVING,
// before the items are resolved over the aggregation's output.
type aggRef struct {
	idx int
	c   *aggCall
}

func (r *aggRef) Type() types.Type { return r.c.T }
func (r *aggRef) String() string   { return r.c.text }

// keyRef is a grouping expression's value in a select item or HAVING.
type keyRef struct {
	idx  int
	name string
	t    types.Type
}

func (r *keyRef) Type() types.Type { return r.t }
func (r *keyRef) String() string   { return types.QuoteIdentifier(r.name) }

// aggregation collects the aggregate calls of a SELECT.
type aggregation struct {
	q     *queryPlanner
	base  *expr.Analyzer // over the input, refusing nested aggregates
	calls []*aggCall
	// args and filters are the expressions of the calls' arguments and
	// FILTER conditions over the input, in call order (nil for none).
	args, filters []expr.Expr
	byText        map[string]int
}

// call is the Analyzer hook that turns an aggregate call into an aggRef.
func (g *aggregation) call(c *parser.FuncCall) (expr.Expr, bool, error) {
	name := strings.ToUpper(c.Name.Last().Name)
	if !isAggregateName(name) || c.Over != nil || c.OverName != nil {
		return g.q.refuseAggregate(c)
	}
	if name == "STDDEV" || name == "VARIANCE" {
		name = map[string]string{"STDDEV": "STDDEV_SAMP", "VARIANCE": "VAR_SAMP"}[name]
	}
	ac := &aggCall{Name: name, Star: c.Star, Distinct: c.Distinct, Arg: -1, Filter: -1, text: c.String()}
	if t := expr.JSONAggregateText(c); t != "" && (name == "JSON_ARRAYAGG" || name == "JSON_OBJECTAGG") {
		ac.text = t
	}
	var arg, filter expr.Expr
	switch {
	case c.Star:
		if name != "COUNT" {
			return nil, true, g.q.errorf(c.Pos, "%s(*) is not an aggregate: only COUNT takes *", name)
		}
	case len(c.Args) != 1 && !isApproxAggregate(name) && !valueArgs(name, len(c.Args)):
		return nil, true, g.q.errorf(c.Pos, "%s takes one argument, not %d", name, len(c.Args))
	default:
		params, err := g.approxParams(name, c)
		if err != nil {
			return nil, true, err
		}
		ac.Params = params
		if err := g.valueParams(name, c, ac); err != nil {
			return nil, true, err
		}
		e, err := g.base.Expr(c.Args[0])
		if err != nil {
			return nil, true, err
		}
		arg = e
		ac.ArgType = e.Type()
	}
	if c.Filter != nil {
		f, err := g.q.condition(g.base, c.Filter, "FILTER")
		if err != nil {
			return nil, true, err
		}
		filter = f
	}
	t, err := aggResultType(name, ac.ArgType, c.Star)
	if err != nil {
		return nil, true, g.q.errorf(c.Pos, "%v", err)
	}
	ac.T = t
	if ac.Name == "COUNT" && !c.Star {
		ac.T = types.BigInt().NotNull()
	}
	key := fmt.Sprintf("%s|%v|%v|%v|%v|%v|%q|%v", name, c.Star, c.Distinct, arg, filter, ac.Params, ac.Sep, ac.IgnoreNulls)
	if i, ok := g.byText[key]; ok {
		return &aggRef{idx: i, c: g.calls[i]}, true, nil
	}
	g.byText[key] = len(g.calls)
	g.calls = append(g.calls, ac)
	g.args = append(g.args, arg)
	g.filters = append(g.filters, filter)
	return &aggRef{idx: len(g.calls) - 1, c: ac}, true, nil
}

// aggregate plans a SELECT with GROUP BY or aggregate calls.
func (q *queryPlanner) aggregate(n *parser.Select, in Rel, sc *scope, cond expr.Expr) (Rel, error) {
	// A legacy group window (GROUP BY TUMBLE(ts, size), HOP, SESSION) is a
	// window table function over the input, grouped by its bounds.
	groupBy, in, sc, legacy, err := q.legacyGroupWindow(n, in, sc)
	if err != nil {
		return nil, err
	}
	base := q.analyzer(sc)
	var groups []expr.Expr
	var groupNames []string
	for _, ge := range groupBy {
		if gs, ok := ge.(*parser.GroupingSets); ok {
			return nil, q.errorf(gs.Pos, "GROUPING SETS, ROLLUP and CUBE are not supported")
		}
		e, err := base.Expr(ge)
		if err != nil {
			return nil, err
		}
		groups = append(groups, e)
		name := fmt.Sprintf("$f%d", len(groupNames))
		if c, ok := e.(*expr.Column); ok {
			name = c.Name
		}
		groupNames = append(groupNames, name)
	}
	g := &aggregation{q: q, base: base, byText: map[string]int{}}
	a := q.analyzer(sc)
	a.Call = g.call
	if legacy != nil {
		a.Call = legacy.auxiliary(g.call)
	}
	var items []expr.Expr
	var names []string
	for _, it := range n.Items {
		if it.Star {
			return nil, q.errorf(it.Pos, "SELECT * cannot be used with GROUP BY: list the grouped columns and aggregates")
		}
		e, err := a.Expr(it.Expr)
		if err != nil {
			return nil, err
		}
		items = append(items, e)
		names = append(names, itemName(it, len(names)))
	}
	var having expr.Expr
	if n.Having != nil {
		h, err := q.condition(a, n.Having, "HAVING")
		if err != nil {
			return nil, err
		}
		having = h
	}
	// The items and HAVING read the grouping expressions and the calls.
	bind := func(e expr.Expr, pos parser.Pos) (expr.Expr, error) {
		out := expr.Rewrite(e, func(x expr.Expr) expr.Expr {
			for i, ge := range groups {
				if x.String() == ge.String() {
					return &keyRef{idx: i, name: groupNames[i], t: ge.Type()}
				}
			}
			return x
		})
		var bad expr.Expr
		expr.Walk(out, func(x expr.Expr) bool {
			if c, ok := x.(*expr.Column); ok && bad == nil {
				bad = c
			}
			return true
		})
		if bad != nil {
			return nil, q.errorf(pos, "column %s is neither in GROUP BY nor in an aggregate function", bad)
		}
		k := len(groups)
		return expr.Rewrite(out, func(x expr.Expr) expr.Expr {
			switch r := x.(type) {
			case *keyRef:
				return &expr.Column{Index: r.idx, Name: r.name, T: r.t}
			case *aggRef:
				return &expr.Column{Index: k + r.idx, Name: fmt.Sprintf("EXPR$%d", r.idx), T: r.c.T}
			}
			return x
		}), nil
	}
	for i, e := range items {
		b, err := bind(e, n.Items[i].Pos)
		if err != nil {
			return nil, err
		}
		items[i] = b
	}
	if having != nil {
		h, err := bind(having, n.Having.Position())
		if err != nil {
			return nil, err
		}
		having = h
	}
	if w, ok := windowOf(in, groups); ok {
		return q.windowAggregate(n, w, groups, groupNames, g, cond, items, names, having)
	}
	if wc, ok := attachedWindows(in, groups); ok {
		return q.attachedWindowAggregate(n, in, wc, groups, groupNames, g, cond, items, names, having) // window_attached.go
	}
	if err := q.refuseLateRows(n); err != nil { // late.go
		return nil, err
	}
	// The pre-projection: the grouping expressions, then the calls'
	// arguments and filters, each distinct expression once (preColumn), so
	// that the DISTINCT calls of one argument share its view (see
	// sqlAgg.groups) and a filter several calls share is evaluated once.
	pre := append([]expr.Expr{}, groups...)
	preNames := append([]string{}, groupNames...)
	seen := map[string]int{}
	for i, c := range g.calls {
		if g.args[i] != nil {
			c.Arg, pre, preNames = preColumn(pre, preNames, seen, g.args[i], fmt.Sprintf("$a%d", i))
		}
		if g.filters[i] != nil {
			c.Filter, pre, preNames = preColumn(pre, preNames, seen, g.filters[i], fmt.Sprintf("$f%d", i))
		}
	}
	preCalc := newCalc(in, pre, uniqueNames(preNames), cond)
	agg := &AggregateRel{Input: preCalc, Keys: len(groups), KeyNames: groupNames, Calls: g.calls, cat: q.cat}
	if err := agg.init(); err != nil {
		return nil, q.errorf(n.Pos, "%v", err)
	}
	var r Rel = newCalc(agg, items, uniqueNames(names), having)
	if n.Distinct {
		return q.distinct(n, r)
	}
	return r, nil
}

// preColumn returns the column of the pre-projection pre that computes e,
// appending it (named name) unless an argument or filter column already
// computes the same value (expr.SharedKey); seen maps the keys of the
// expressions appended so far to their columns. An expression with a
// volatile call (RAND, UUID, NOW) has no key and is its own: two calls
// may give different values.
func preColumn(pre []expr.Expr, names []string, seen map[string]int, e expr.Expr, name string) (int, []expr.Expr, []string) {
	if key, ok := expr.SharedKey(e); ok {
		if i, found := seen[key]; found {
			return i, pre, names
		}
		seen[key] = len(pre)
	}
	return len(pre), append(pre, e), append(names, name)
}

// AggregateRel is an unbounded GROUP BY: the changelog of the groups'
// aggregates (Flink's GroupAggregate).
type AggregateRel struct {
	Input    Rel
	Keys     int // the first Keys columns of the input are the group key
	KeyNames []string
	Calls    []*aggCall
	cat      *Catalog
	rt       *types.RowType
	fn       *sqlAgg
}

func (r *AggregateRel) init() error {
	in := r.Input.Schema()
	fs := make([]types.Field, 0, r.Keys+len(r.Calls))
	for i := 0; i < r.Keys; i++ {
		fs = append(fs, types.F(r.KeyNames[i], in.FieldType(i)))
	}
	for i, c := range r.Calls {
		fs = append(fs, types.F(fmt.Sprintf("EXPR$%d", i), c.T))
	}
	r.rt = types.MustRowType(dedupNames(fs)...)
	f, err := newSQLAgg(r.Calls, in, !r.Input.Props().Mode.IsInsertOnly())
	if err != nil {
		return err
	}
	r.fn = f
	if r.Input.Props().Mode == changelog.Upsert {
		return fmt.Errorf("an aggregation over an upsert stream is not supported yet")
	}
	return nil
}

func (r *AggregateRel) Schema() *types.RowType { return r.rt }

func (r *AggregateRel) Props() Props {
	keys := make([]int, r.Keys)
	for i := range keys {
		keys[i] = i
	}
	return Props{Mode: changelog.Retract, UpsertKey: keys, Rowtime: -1, Proctime: -1}
}

func (r *AggregateRel) Inputs() []Rel { return []Rel{r.Input} }

func (r *AggregateRel) Describe() string {
	in := r.Input.Schema().Names()
	calls := make([]string, len(r.Calls))
	for i, c := range r.Calls {
		calls[i] = c.text
	}
	return fmt.Sprintf("GroupAggregate(groupBy=[%s], select=[%s])", strings.Join(in[:r.Keys], ", "), strings.Join(append(append([]string{}, in[:r.Keys]...), calls...), ", "))
}

func (r *AggregateRel) build(b *builder) (*eddy.Stream[Rec], error) {
	s, err := b.stream(r.Input)
	if err != nil {
		return nil, err
	}
	opts, err := tableOptions(b.cat)
	if err != nil {
		return nil, err
	}
	if ttl, ok := b.cat.Settings["table.exec.state.ttl"]; ok {
		d, _ := settingDuration("table.exec.state.ttl", ttl)
		r.fn.touch = d > 0
	}
	keys := seq(r.Keys)
	cols := leadingKey(r.Keys)
	return keyedBy(b, r.Input, s, keys, partitionedBy[*eddy.Stream[Rec]]{
		int:      aggregateBy(r, opts, intKeyWriter(cols)),
		nullable: aggregateBy(r, opts, nullableIntKeyWriter(cols)),
		pair:     aggregateBy(r, opts, intPairKeyWriter(cols)),
		encoded: func(g *eddy.KeyedStream[string, Rec], enc *types.KeyEncoder) *eddy.Stream[Rec] {
			return aggregateBy(r, opts, encodedKeyWriter(enc, cols))(g)
		},
	}), nil
}

// aggregateBy returns the aggregation of r, with the table options opts,
// over its input grouped by keys of type K, which setKey writes into the
// result rows.
func aggregateBy[K comparable](r *AggregateRel, opts []eddy.TableOption, setKey func(K, *types.RowWriter)) func(*eddy.KeyedStream[K, Rec]) *eddy.Stream[Rec] {
	return func(g *eddy.KeyedStream[K, Rec]) *eddy.Stream[Rec] {
		rows := newGroupRows(r.fn, r.Keys, setKey, r.rt)
		return eddy.GroupAggregateRows[K, types.Row, Acc, string](g, r.fn, rows.row, opts...)
	}
}

// groupByKey partitions s by the key enc encodes: the exchange routes each
// row by the hash of its key, computed without building the key, so that
// the key is built once per row, by the keyed operator.
func groupByKey(s *eddy.Stream[Rec], enc *types.KeyEncoder) *eddy.KeyedStream[string, Rec] {
	return eddy.GroupBy(s, enc.Key).WithRecordHash(func(c Rec) uint64 { return enc.Hash(c.Row) })
}

// seq returns 0..n-1.
func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// tableOptions returns the options of the relational operators that the
// session's settings give: state TTL and mini-batches.
func tableOptions(c *Catalog) ([]eddy.TableOption, error) {
	var opts []eddy.TableOption
	if v, ok := c.Settings["table.exec.state.ttl"]; ok {
		d, err := settingDuration("table.exec.state.ttl", v)
		if err != nil {
			return nil, err
		}
		if d > 0 {
			opts = append(opts, eddy.StateTTL(d))
		}
	}
	if v := c.Settings["table.exec.mini-batch.enabled"]; strings.EqualFold(v, "true") {
		latency, size := time.Second, 1000
		if v, ok := c.Settings["table.exec.mini-batch.allow-latency"]; ok {
			d, err := settingDuration("table.exec.mini-batch.allow-latency", v)
			if err != nil {
				return nil, err
			}
			latency = d
		}
		if v, ok := c.Settings["table.exec.mini-batch.size"]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("setting 'table.exec.mini-batch.size' = '%s': want a positive integer", v)
			}
			size = n
		}
		opts = append(opts, eddy.MiniBatch(size, latency))
	}
	return opts, nil
}

func settingDuration(key, v string) (time.Duration, error) {
	d, err := connector.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("setting '%s' = '%s': %w", key, v, err)
	}
	return d, nil
}
