package plan

import (
	"fmt"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/types"
	"github.com/eddystream/eddy/state"
)

// WindowDedupRel is Flink's window deduplication: ROW_NUMBER() OVER
// (PARTITION BY window_start, window_end, ... ORDER BY time ASC|DESC) = 1
// over a windowed relation, time being the rows' event time. It keeps the
// earliest (ASC, the first to arrive among equal times) or the latest
// (DESC, the last to arrive) row of each key and window until the
// watermark passes the window's end, then emits it once, insert-only, and
// forgets the window. Rows of a window the watermark has passed are late
// and dropped.
type WindowDedupRel struct {
	Input  Rel
	Window windowCols
	// Key are the partition columns, window_start and window_end among
	// them.
	Key []int
	// KeepLast keeps the latest row (ORDER BY time DESC).
	KeepLast bool
	// TimeCol is the column of the rows' event time.
	TimeCol int
}

func (d *WindowDedupRel) Schema() *types.RowType { return d.Input.Schema() }

func (d *WindowDedupRel) Props() Props {
	return Props{Mode: changelog.InsertOnly, Rowtime: -1, Proctime: -1}
}

func (d *WindowDedupRel) Inputs() []Rel { return []Rel{d.Input} }

func (d *WindowDedupRel) Describe() string {
	in := d.Input.Schema()
	keep := "FirstRow"
	if d.KeepLast {
		keep = "LastRow"
	}
	return fmt.Sprintf("WindowDeduplicate(window=[%s], keep=[%s], partitionKeys=[%s], orderKey=[%s], order=[ROWTIME])",
		d.Window.describe(in), keep, columnList(in, partitionKeys(d.Window, d.Key)), columnList(in, []int{d.TimeCol}))
}

func (d *WindowDedupRel) build(b *builder) (*eddy.Stream[Rec], error) {
	s, err := b.stream(d.Input)
	if err != nil {
		return nil, err
	}
	keepLast, endCol, timeCol := d.KeepLast, d.Window.end, d.TimeCol
	spec := windowDedupSpec{keepLast: keepLast, endCol: endCol, timeCol: timeCol}
	out := keyedBy(b, d.Input, cloneRows(eddy.AsChangelog(s, changelog.InsertOnly)), d.Key, partitionedBy[*eddy.Stream[Rec]]{
		int: windowDedupBy[int64](spec), nullable: windowDedupBy[nullableInt](spec),
		pair: windowDedupBy[intPair](spec), encoded: anyEncoding(windowDedupBy[string](spec)),
	})
	return eddy.AsChangelog(out, changelog.InsertOnly), nil
}

// windowDedupBy returns the window deduplication, as spec says, of rows
// partitioned by keys of type K.
func windowDedupBy[K comparable](spec windowDedupSpec) func(*eddy.KeyedStream[K, Rec]) *eddy.Stream[Rec] {
	return func(g *eddy.KeyedStream[K, Rec]) *eddy.Stream[Rec] {
		return eddy.ProcessKeyed(g, func() eddy.KeyedProcessFunction[K, Rec, Rec] {
			return &windowDeduper[K]{windowDedupSpec: spec}
		}).Name("WindowDeduplicate")
	}
}

// windowDeduper is the window deduplication of one subtask, keyed by keys
// of type K. The key is the partition with its window; its state is the
// row kept, and a timer at the window's last millisecond emits it.
type windowDeduper[K comparable] struct {
	windowDedupSpec
	kept state.Value[types.Row]
}

// windowDedupSpec is what a window deduplication keeps: the last row of
// its partition (keepLast) or the first, in the order of the time column
// timeCol, of the windows that end at column endCol.
type windowDedupSpec struct {
	keepLast        bool
	endCol, timeCol int
}

func (f *windowDeduper[K]) Open(ctx *eddy.KeyedContext[K, Rec]) error {
	f.kept = state.NewValue(ctx.Store(), state.ValueDescriptor[types.Row]{Name: "window-dedup-row"})
	return nil
}

func (f *windowDeduper[K]) ProcessElement(ctx *eddy.KeyedContext[K, Rec], c Rec) error {
	end := c.Row.TimestampMillis(f.endCol)
	if end-1 <= ctx.CurrentWatermark() {
		return nil // late: the window has fired
	}
	cur, ok := f.kept.Value()
	if !ok {
		f.kept.Update(c.Row)
		ctx.RegisterEventTimeTimer(end - 1)
		return nil
	}
	ts, curTS := c.Row.TimestampMillis(f.timeCol), cur.TimestampMillis(f.timeCol)
	if f.keepLast && ts >= curTS || !f.keepLast && ts < curTS {
		f.kept.Update(c.Row)
	}
	return nil
}

func (f *windowDeduper[K]) OnTimer(ctx *eddy.KeyedContext[K, Rec], ts int64) error {
	if row, ok := f.kept.Value(); ok {
		ctx.EmitAt(Rec{Kind: changelog.Insert, Row: row}, ts)
	}
	f.kept.Clear()
	return nil
}
