package plan

import (
	"fmt"
	"math"
	"sort"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/types"
	"github.com/eddystream/eddy/state"
)

// TemporalSortRel sorts an insert-only stream by its rowtime attribute,
// ascending, then by further keys: Flink's temporal sort (ORDER BY the
// rowtime first, without LIMIT). The rows of a timestamp wait in state
// until the watermark passes it, then come out sorted by the further keys
// (rows that tie in arrival order). A row whose timestamp is not after the
// last one emitted is late and dropped, as Flink drops it. All rows go to
// one subtask, as a global order needs.
//
// Sorted by its processing-time attribute first, the stream is in that
// order as it comes: the rows that come within a millisecond wait until
// the clock passes it and then come out sorted by the further keys, as
// Flink's processing-time sort does; with no further keys they pass as they
// come.
type TemporalSortRel struct {
	Input Rel
	// Keys are the sort keys; the first is the rowtime or the
	// processing-time attribute, ascending.
	Keys []types.SortKey
}

func (r *TemporalSortRel) Schema() *types.RowType { return r.Input.Schema() }

func (r *TemporalSortRel) Props() Props {
	p := r.Input.Props()
	return Props{Mode: changelog.InsertOnly, Rowtime: p.Rowtime, Proctime: p.Proctime}
}

func (r *TemporalSortRel) Inputs() []Rel { return []Rel{r.Input} }

func (r *TemporalSortRel) Describe() string {
	return fmt.Sprintf("TemporalSort(orderBy=[%s])", sortKeysString(r.Input.Schema(), r.Keys))
}

func (r *TemporalSortRel) build(b *builder) (*eddy.Stream[Rec], error) {
	s, err := b.stream(r.Input)
	if err != nil {
		return nil, err
	}
	in := r.Input.Schema()
	rowtime, rest := r.Keys[0].Field, r.Keys[1:]
	var cmp *types.RowComparator
	if len(rest) > 0 {
		cmp = types.NewRowComparator(in, rest...)
	}
	all := eddy.KeyBy(cloneRows(eddy.AsChangelog(s, changelog.InsertOnly)), func(Rec) struct{} { return struct{}{} })
	var out *eddy.Stream[Rec]
	if p := r.Input.Props(); rowtime == p.Proctime && p.Proctime >= 0 {
		out = eddy.ProcessKeyed(all, func() eddy.KeyedProcessFunction[struct{}, Rec, Rec] {
			return &procTimeSorter{cmp: cmp}
		}).Name("TemporalSort").Parallelism(1)
	} else {
		out = eddy.ProcessKeyed(all, func() eddy.KeyedProcessFunction[struct{}, Rec, Rec] {
			return &temporalSorter{rowtime: rowtime, cmp: cmp}
		}).Name("TemporalSort").Parallelism(1)
	}
	return eddy.AsChangelog(out, changelog.InsertOnly), nil
}

// temporalSorter is the temporal sort's function. Its state, under the
// one key, is the rows per timestamp and the last timestamp emitted; an
// event-time timer per timestamp emits its rows.
type temporalSorter struct {
	rowtime int
	cmp     *types.RowComparator // the keys after the rowtime, nil if none
	rows    state.Map[int64, []types.Row]
	last    state.Value[int64]
}

func (f *temporalSorter) Open(ctx *eddy.KeyedContext[struct{}, Rec]) error {
	f.rows = state.NewMap(ctx.Store(), state.MapDescriptor[int64, []types.Row]{Name: "temporal-sort-rows"})
	f.last = state.NewValue(ctx.Store(), state.ValueDescriptor[int64]{Name: "temporal-sort-last"})
	return nil
}

func (f *temporalSorter) ProcessElement(ctx *eddy.KeyedContext[struct{}, Rec], c Rec) error {
	if c.Row.IsNull(f.rowtime) {
		return nil
	}
	ts := c.Row.TimestampMillis(f.rowtime)
	if last, ok := f.last.Value(); ok && ts <= last {
		return nil // late: the rows of its time have been emitted
	}
	rows, _ := f.rows.Get(ts)
	f.rows.Put(ts, append(rows[:len(rows):len(rows)], c.Row))
	ctx.RegisterEventTimeTimer(ts)
	return nil
}

func (f *temporalSorter) OnTimer(ctx *eddy.KeyedContext[struct{}, Rec], ts int64) error {
	rows, ok := f.rows.Get(ts)
	if ok {
		if f.cmp != nil {
			sort.SliceStable(rows, func(i, j int) bool { return f.cmp.Compare(rows[i], rows[j]) < 0 })
		}
		for _, row := range rows {
			ctx.EmitAt(Rec{Kind: changelog.Insert, Row: row}, ts)
		}
		f.rows.Delete(ts)
	}
	f.last.Update(ts)
	return nil
}

// procTimeSorter is the processing-time sort's function: without further
// keys it passes rows on; with them, the rows that come until the clock
// passes the millisecond of the first wait in state (under the one key)
// for a processing-time timer, which emits them sorted, or for the end of
// the input, whichever comes first.
type procTimeSorter struct {
	cmp  *types.RowComparator // the keys after the attribute, nil if none
	rows state.List[types.Row]
}

func (f *procTimeSorter) Open(ctx *eddy.KeyedContext[struct{}, Rec]) error {
	f.rows = state.NewList(ctx.Store(), state.ListDescriptor[types.Row]{Name: "proctime-sort-rows"})
	return nil
}

func (f *procTimeSorter) ProcessElement(ctx *eddy.KeyedContext[struct{}, Rec], c Rec) error {
	if f.cmp == nil {
		ctx.Emit(c)
		return nil
	}
	if len(f.rows.Get()) == 0 {
		ctx.RegisterProcessingTimeTimer(ctx.ProcessingTime() + 1)
		// The end of a bounded input (its last watermark) emits them too,
		// if the clock has not passed their millisecond by then.
		ctx.RegisterEventTimeTimer(math.MaxInt64)
	}
	f.rows.Add(c.Row)
	return nil
}

func (f *procTimeSorter) OnTimer(ctx *eddy.KeyedContext[struct{}, Rec], _ int64) error {
	rows := f.rows.Get()
	if len(rows) == 0 {
		return nil // emitted by the other timer
	}
	rows = append([]types.Row(nil), rows...) // the list's own must not change
	sort.SliceStable(rows, func(i, j int) bool { return f.cmp.Compare(rows[i], rows[j]) < 0 })
	for _, row := range rows {
		ctx.Emit(Rec{Kind: changelog.Insert, Row: row})
	}
	f.rows.Clear()
	return nil
}
