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
	in := d.Input.Schema()
	keepLast, endCol, timeCol := d.KeepLast, d.Window.end, d.TimeCol
	g := eddy.GroupBy(cloneRows(eddy.AsChangelog(s, changelog.InsertOnly)), partitionKey(in, d.Key))
	out := eddy.ProcessKeyed(g, func() eddy.KeyedProcessFunction[string, Rec, Rec] {
		return &windowDeduper{keepLast: keepLast, endCol: endCol, timeCol: timeCol}
	}).Name("WindowDeduplicate")
	return eddy.AsChangelog(out, changelog.InsertOnly), nil
}

// windowDeduper is the window deduplication of one subtask. The key is the
// partition with its window; its state is the row kept, and a timer at
// the window's last millisecond emits it.
type windowDeduper struct {
	keepLast        bool
	endCol, timeCol int
	kept            state.Value[types.Row]
}

func (f *windowDeduper) Open(ctx *eddy.KeyedContext[string, Rec]) error {
	f.kept = state.NewValue(ctx.Store(), state.ValueDescriptor[types.Row]{Name: "window-dedup-row"})
	return nil
}

func (f *windowDeduper) ProcessElement(ctx *eddy.KeyedContext[string, Rec], c Rec) error {
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

func (f *windowDeduper) OnTimer(ctx *eddy.KeyedContext[string, Rec], ts int64) error {
	if row, ok := f.kept.Value(); ok {
		ctx.EmitAt(Rec{Kind: changelog.Insert, Row: row}, ts)
	}
	f.kept.Clear()
	return nil
}
