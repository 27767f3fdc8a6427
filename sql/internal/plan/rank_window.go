package plan

import (
	"fmt"
	"sort"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/types"
	"github.com/eddystream/eddy/state"
)

// WindowRankRel is Flink's window Top-N: ROW_NUMBER() OVER (PARTITION BY
// window_start, window_end, ... ORDER BY ...) filtered on the row number,
// over a windowed relation. It keeps the first End rows of each partition
// and window until the watermark passes the window's end, then emits the
// rows numbered Start to End once, insert-only, and forgets the window.
// Rows of a window the watermark has passed are late and dropped.
type WindowRankRel struct {
	Input  Rel
	Window windowCols
	// PartitionBy are the partition columns, window_start and window_end
	// among them.
	PartitionBy []int
	OrderBy     []types.SortKey
	// Start and End are the row numbers kept, from 1.
	Start, End int64
	// OutputRank appends the row number (BIGINT NOT NULL), named
	// RankName.
	OutputRank bool
	RankName   string

	rt *types.RowType
}

// windowRank plans the ranking of lower (the select list with the
// partition and order keys) as a window Top-N or window deduplication when
// lower is windowed, insert-only, and partitioned by its window_start and
// window_end (Flink's rule). It returns the relation and the column of its
// row number (-1 for none).
func windowRank(lower Rel, partition []int, order []types.SortKey, rr rankRange, rnName string) (Rel, int, bool) {
	w, ok := windowColsOf(lower)
	if !ok || !lower.Props().Mode.IsInsertOnly() {
		return nil, -1, false
	}
	start, end := false, false
	for _, p := range partition {
		start = start || p == w.start
		end = end || p == w.end
	}
	if !start || !end {
		return nil, -1, false
	}
	if len(order) == 1 && rr.start == 1 && rr.end == 1 && !rr.used && w.isTime(order[0].Field) {
		return &WindowDedupRel{Input: lower, Window: w, Key: partition, KeepLast: order[0].Descending, TimeCol: order[0].Field}, -1, true
	}
	r := &WindowRankRel{Input: lower, Window: w, PartitionBy: partition, OrderBy: order, Start: rr.start, End: rr.end,
		OutputRank: rr.used || rr.start > 1, RankName: rnName}
	fs := lower.Schema().Fields()
	if r.OutputRank {
		fs = append(fs, types.F(rnName, types.BigInt().NotNull()))
	}
	r.rt = types.MustRowType(dedupNames(fs)...)
	if r.OutputRank {
		return r, r.rt.Len() - 1, true
	}
	return r, -1, true
}

func (r *WindowRankRel) Schema() *types.RowType { return r.rt }

func (r *WindowRankRel) Props() Props {
	return Props{Mode: changelog.InsertOnly, Rowtime: -1, Proctime: -1}
}

func (r *WindowRankRel) Inputs() []Rel { return []Rel{r.Input} }

// partitionKeys are the partition columns other than the window's.
func partitionKeys(w windowCols, cols []int) []int {
	var out []int
	for _, c := range cols {
		if c != w.start && c != w.end {
			out = append(out, c)
		}
	}
	return out
}

func (r *WindowRankRel) Describe() string {
	in := r.Input.Schema()
	return fmt.Sprintf("WindowRank(window=[%s], rankType=[ROW_NUMBER], rankRange=[rankStart=%d, rankEnd=%d], partitionBy=[%s], orderBy=[%s], select=[%s])",
		r.Window.describe(in), r.Start, r.End, columnList(in, partitionKeys(r.Window, r.PartitionBy)), sortKeysString(in, r.OrderBy), fieldList(r.rt))
}

func (r *WindowRankRel) build(b *builder) (*eddy.Stream[Rec], error) {
	if r.End < r.Start || r.End > 1<<20 {
		return nil, fmt.Errorf("%s: keeping rows %d to %d of each window is not supported: keep at most %d rows", r.Describe(), r.Start, r.End, 1<<20)
	}
	s, owned, err := b.keptStream(r.Input)
	if err != nil {
		return nil, err
	}
	in, rt := r.Input.Schema(), r.rt
	cmp := types.NewRowComparator(in, r.OrderBy...)
	n, start, endCol, outputRank := int(r.End), r.Start, r.Window.end, r.OutputRank
	s = eddy.AsChangelog(s, changelog.InsertOnly)
	if !owned {
		s = cloneRows(s)
	}
	newRanker := func() *windowRankLogic {
		f := &windowRankLogic{n: n, start: start, endCol: endCol, less: func(a, b types.Row) bool { return cmp.Compare(a, b) < 0 }}
		if outputRank {
			f.rt, f.arena = rt, types.NewArena(0)
		}
		return f
	}
	out := keyedBy(b, r.Input, s, r.PartitionBy, partitionedBy[*eddy.Stream[Rec]]{
		int: windowRankBy[int64](newRanker), nullable: windowRankBy[nullableInt](newRanker),
		pair: windowRankBy[intPair](newRanker), encoded: anyEncoding(windowRankBy[string](newRanker)),
	})
	return eddy.AsChangelog(out, changelog.InsertOnly), nil
}

// windowRankBy returns the window Top-N of rows partitioned by keys of
// type K, each subtask's with the logic newLogic makes.
func windowRankBy[K comparable](newLogic func() *windowRankLogic) func(*eddy.KeyedStream[K, Rec]) *eddy.Stream[Rec] {
	return func(g *eddy.KeyedStream[K, Rec]) *eddy.Stream[Rec] {
		return eddy.ProcessKeyed(g, func() eddy.KeyedProcessFunction[K, Rec, Rec] {
			return &windowRanker[K]{windowRankLogic: newLogic()}
		}).Name("WindowRank")
	}
}

// windowRanker is the window Top-N of one subtask, keyed by keys of type
// K. The key is the partition with its window; its state is the first n
// rows of the partition in order, and a timer at the window's last
// millisecond emits them.
type windowRanker[K comparable] struct {
	*windowRankLogic
}

// windowRankLogic is what a windowRanker does, whatever its key type.
type windowRankLogic struct {
	n      int
	start  int64
	endCol int
	less   func(a, b types.Row) bool
	top    state.Value[[]types.Row]
	// rt, when the row number is output, is the type of the rows with it,
	// written in arena.
	rt    *types.RowType
	arena *types.Arena
}

func (f *windowRanker[K]) Open(ctx *eddy.KeyedContext[K, Rec]) error {
	f.top = state.NewValue(ctx.Store(), state.ValueDescriptor[[]types.Row]{Name: "window-rank-top"})
	return nil
}

func (f *windowRanker[K]) ProcessElement(ctx *eddy.KeyedContext[K, Rec], c Rec) error {
	end := c.Row.TimestampMillis(f.endCol)
	if end-1 <= ctx.CurrentWatermark() {
		return nil // late: the window has fired
	}
	rows, ok := f.top.Value()
	if len(rows) >= f.n && !f.less(c.Row, rows[f.n-1]) {
		return nil
	}
	// After the rows it ties with: the first to arrive ranks first.
	i := sort.Search(len(rows), func(i int) bool { return f.less(c.Row, rows[i]) })
	next := make([]types.Row, 0, min(len(rows)+1, f.n))
	next = append(next, rows[:i]...)
	next = append(next, c.Row)
	next = append(next, rows[i:min(len(rows), f.n-1)]...)
	f.top.Update(next)
	if !ok {
		ctx.RegisterEventTimeTimer(end - 1)
	}
	return nil
}

func (f *windowRanker[K]) OnTimer(ctx *eddy.KeyedContext[K, Rec], ts int64) error {
	rows, _ := f.top.Value()
	for i, row := range rows {
		rank := int64(i + 1)
		if rank < f.start {
			continue
		}
		if f.rt != nil {
			row = f.arena.AppendInt64(f.rt, row, rank)
		}
		ctx.EmitAt(Rec{Kind: changelog.Insert, Row: row}, ts)
	}
	f.top.Clear()
	return nil
}
