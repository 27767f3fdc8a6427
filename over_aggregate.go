package eddy

import (
	"fmt"

	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// UnboundedPreceding is the Preceding of an OverFrame that reaches back to
// the first row of the partition (SQL's UNBOUNDED PRECEDING).
const UnboundedPreceding int64 = -1

// OverFrame is the frame of an OVER aggregation: the rows of a partition,
// ordered by time, that the aggregate of a row covers. It always ends at the
// row itself (CURRENT ROW).
type OverFrame struct {
	// Domain orders the rows: EventTime by their timestamps (rows wait for
	// the watermark), ProcessingTime by their arrival.
	Domain TimeDomain
	// Rows measures the frame in rows (SQL's ROWS BETWEEN n PRECEDING AND
	// CURRENT ROW); otherwise in time (RANGE BETWEEN INTERVAL ... PRECEDING
	// AND CURRENT ROW), in which rows of one time are all in each other's
	// frames.
	Rows bool
	// Preceding is how far the frame reaches before the row: a number of
	// rows with Rows, milliseconds otherwise, or UnboundedPreceding.
	Preceding int64
}

// String renders the frame as SQL does.
func (f OverFrame) String() string {
	unit := "RANGE"
	if f.Rows {
		unit = "ROWS"
	}
	if f.Preceding < 0 {
		return unit + " BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
	}
	if f.Rows {
		return fmt.Sprintf("ROWS BETWEEN %d PRECEDING AND CURRENT ROW", f.Preceding)
	}
	return fmt.Sprintf("RANGE BETWEEN %d ms PRECEDING AND CURRENT ROW", f.Preceding)
}

// OverRow is a row of an OVER aggregation's result: an input row and the
// aggregate of its frame.
type OverRow[T, V any] struct {
	Row   T `json:"row"`
	Value V `json:"value"`
}

// OverAggregate computes f over a frame of every row of an insert-only
// changelog, as SQL's
//
//	SELECT *, agg(x) OVER (PARTITION BY key ORDER BY time ROWS|RANGE BETWEEN ... PRECEDING AND CURRENT ROW) FROM t
//
// does (Flink's OverAggregate): every input row comes out once, with the
// aggregate of the rows of its partition (the keys of g, see GroupBy) in
// its frame. The output is insert-only.
//
// On event time a row waits in state until the watermark passes its
// timestamp; the rows of a partition are then processed in order of time,
// rows of equal times in arrival order, and go out with their timestamps.
// A row that arrives with a timestamp at or before the watermark is late:
// it is dropped and counted in LateRecords. Input records need event
// timestamps (a watermark strategy with a timestamp extractor on the
// source). On processing time a row is processed when it arrives.
//
// A bounded frame keeps its rows in state and takes those that leave it
// back out of the accumulator: f must be able to (agg.CanRetract);
// agg.MinRetract and agg.MaxRetract keep their values in views to do so. A
// RANGE frame drops a partition's state once every row has left its frame.
// An unbounded frame keeps only the accumulator.
//
// The state is checkpointed and redistributed by key group. Options:
// StateTTL.
func OverAggregate[K comparable, T, ACC, OUT any](g *KeyedStream[K, changelog.Change[T]], frame OverFrame, f agg.Function[T, ACC, OUT], opts ...TableOption) *Stream[changelog.Change[OverRow[T, OUT]]] {
	env := g.s.env
	cfg := tableOptions(env, "OverAggregate", []string{"StateTTL"}, opts)
	if in := g.s.ChangelogMode(); !in.IsInsertOnly() {
		env.fail(fmt.Errorf("eddy: OverAggregate after %q: the input is a %s stream, but an OVER aggregation needs an insert-only one (a row emitted with the aggregate of its frame cannot be taken back); aggregate the changelog with eddy.GroupAggregate instead", g.s.node.Name, in.Describe()))
	}
	if frame.Domain != EventTime && frame.Domain != ProcessingTime {
		env.fail(fmt.Errorf("eddy: OverAggregate after %q: the frame's domain is %d; use eddy.EventTime or eddy.ProcessingTime", g.s.node.Name, frame.Domain))
	}
	if frame.Preceding < UnboundedPreceding {
		env.fail(fmt.Errorf("eddy: OverAggregate after %q: the frame reaches %d back; give a count of rows or milliseconds of at least 0, or eddy.UnboundedPreceding", g.s.node.Name, frame.Preceding))
	}
	bounded := frame.Preceding >= 0
	if bounded && !agg.CanRetract(f) {
		env.fail(fmt.Errorf("eddy: OverAggregate after %q: the frame %s takes rows back out of the aggregate as they leave it, but %T cannot take rows back; use aggregates that can (agg.Count, agg.Sum, agg.Avg, agg.MinRetract, agg.MaxRetract, or agg.WithRetract), or an unbounded frame", g.s.node.Name, frame, f))
	}
	logic := ops.OverAggLogic[T, ACC, OUT, OverRow[T, OUT]]{
		Create:    f.Create,
		Add:       func(acc ACC, row T, _ agg.Views) ACC { return f.Add(acc, row) },
		Views:     agg.NumViews(f),
		Result:    f.Result,
		Output:    func(row T, v OUT) OverRow[T, OUT] { return OverRow[T, OUT]{Row: row, Value: v} },
		Rows:      frame.Rows,
		Preceding: frame.Preceding,
		EventTime: frame.Domain == EventTime,
		TTL:       cfg.ttl,
	}
	// Resolve once what the function can do, so that a row costs one call.
	vf, isView := f.(agg.ViewFunction[T, ACC, OUT])
	r, isRetracting := f.(agg.Retracting[T, ACC])
	switch {
	case isView && logic.Views > 0:
		logic.Add = func(acc ACC, row T, v agg.Views) ACC { return vf.AddWith(acc, row, v, 0) }
		if bounded {
			logic.Retract = func(acc ACC, row T, v agg.Views) ACC { return vf.RetractWith(acc, row, v, 0) }
		}
	case bounded && isRetracting:
		logic.Retract = func(acc ACC, row T, _ agg.Views) ACC { return r.Retract(acc, row) }
	case bounded && agg.CanRetract(f):
		logic.Retract = func(acc ACC, row T, v agg.Views) ACC { return agg.RetractWith(f, acc, row, v, 0) }
	}
	out := keyedNode[K, changelog.Change[T], changelog.Change[OverRow[T, OUT]]](g, "OverAggregate", func(ctx *runtime.Context, outs map[string]any) (runtime.Input[changelog.Change[T]], error) {
		return ops.NewOverAgg(ctx, g.spec, env.backendFactory(), logic, outs)
	})
	return out.withMode(changelog.InsertOnly)
}
