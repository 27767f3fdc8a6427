package plan

import (
	"fmt"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// DistinctRel keeps one row of every distinct row of its input: SELECT
// DISTINCT, and UNION without ALL. Flink plans it as a GroupAggregate on
// every column without aggregates. On an insert-only input it runs as
// eddy.Deduplicate keeping the first row of each value (insert-only
// output, a flag of state per value); on a retracting input it counts the
// copies of each value with eddy.GroupAggregate and emits a row when its
// count rises from 0 (+I) and falls to 0 (-D).
type DistinctRel struct {
	Input Rel
}

func (d *DistinctRel) Schema() *types.RowType { return d.Input.Schema() }

func (d *DistinctRel) Props() Props {
	in := d.Input.Props()
	all := make([]int, d.Schema().Len())
	for i := range all {
		all[i] = i
	}
	p := Props{Mode: changelog.InsertOnly, UpsertKey: all, Rowtime: -1, Proctime: -1}
	if !in.Mode.IsInsertOnly() {
		p.Mode = changelog.ModeOf(changelog.Insert, changelog.Delete)
	}
	return p
}

func (d *DistinctRel) Inputs() []Rel { return []Rel{d.Input} }

func (d *DistinctRel) Describe() string {
	cols := fieldList(d.Schema())
	return fmt.Sprintf("GroupAggregate(groupBy=[%s], select=[%s])", cols, cols)
}

func (d *DistinctRel) build(b *builder) (*eddy.Stream[Rec], error) {
	s, err := b.stream(d.Input)
	if err != nil {
		return nil, err
	}
	inMode := d.Input.Props().Mode
	s = eddy.AsChangelog(s, inMode)
	rt := d.Schema()
	cols := make([]int, rt.Len())
	for i := range cols {
		cols[i] = i
	}
	enc := types.NewKeyEncoder(rt, cols...)
	if inMode.IsInsertOnly() {
		return eddy.Deduplicate(groupByKey(s, enc), eddy.KeepFirst, eddy.ProcessingTime), nil
	}
	// The key of all the columns is the encoding of the row itself.
	counts := eddy.GroupAggregate(groupByKey(s, enc), agg.Count[types.Row]())
	out := eddy.FlatMap(counts, func(c changelog.Change[eddy.Grouped[string, int64]], emit func(Rec)) {
		switch c.Kind {
		case changelog.Insert:
			emit(changelog.InsertOf(enc.KeyRow(c.Row.Key)))
		case changelog.Delete:
			emit(Rec{Kind: changelog.Delete, Row: enc.KeyRow(c.Row.Key)})
		}
	})
	return eddy.AsChangelog(out, changelog.ModeOf(changelog.Insert, changelog.Delete)), nil
}

// distinct plans SELECT DISTINCT over the Calc of the select list.
func (q *queryPlanner) distinct(n *parser.Select, r Rel) (Rel, error) {
	if isUpsertMode(r.Props().Mode) {
		return nil, q.errorf(n.Pos, "SELECT DISTINCT reads an upsert stream (%s), which it does not take yet", r.Props().Mode.Describe())
	}
	return &DistinctRel{Input: r}, nil
}
