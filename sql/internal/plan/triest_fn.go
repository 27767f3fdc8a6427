package plan

import (
	"encoding"
	"fmt"
	"math"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sketch"
	"github.com/eddystream/eddy/sql/types"
	"github.com/eddystream/eddy/state"
)

// triestEstimator is what the three TRIEST estimators of package sketch
// have in common.
type triestEstimator interface {
	Add(u, v uint64)
	Global() float64
	TopLocal(k int) []sketch.VertexEstimate
}

// triestState is a TRIEST estimator type of package sketch: a pointer that
// marshals itself, for sketch.BinaryCodec.
type triestState[T any] interface {
	*T
	triestEstimator
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// triestShown is what the function last emitted, so that it can retract
// it: the global row, or the local rows in the order of TopLocal.
type triestShown struct {
	Shown     bool
	Edges     int64
	Triangles float64
	Top       []sketch.VertexEstimate
}

// newFunction returns the process function of one subtask.
func (r *TriestRel) newFunction() eddy.KeyedProcessFunction[struct{}, Rec, Rec] {
	switch r.Mode {
	case triestBase:
		return &triestFn[sketch.TriestBase, *sketch.TriestBase]{r: r, create: func() *sketch.TriestBase { return sketch.NewTriestBase(r.Budget, r.Seed) }}
	case triestFD:
		return &triestFn[sketch.TriestFD, *sketch.TriestFD]{r: r, create: func() *sketch.TriestFD { return sketch.NewTriestFD(r.Budget, r.Seed) }}
	}
	return &triestFn[sketch.TriestImpr, *sketch.TriestImpr]{r: r, create: func() *sketch.TriestImpr { return sketch.NewTriestImpr(r.Budget, r.Seed) }}
}

// triestFn runs a TRIEST estimator over the edges, all of which it reads
// (the stream is keyed by one key).
type triestFn[T any, P triestState[T]] struct {
	r      *TriestRel
	create func() P
	est    state.Value[P]
	seen   state.Value[int64] // the edges (changes) read, for EVERY
	shown  state.Value[triestShown]
	w      *types.RowWriter
}

// Open declares the state: the estimator in its binary encoding.
func (f *triestFn[T, P]) Open(ctx *eddy.KeyedContext[struct{}, Rec]) error {
	f.est = state.NewValue(ctx.Store(), state.ValueDescriptor[P]{Name: "triest", Codec: sketch.BinaryCodec[T, P]()})
	f.seen = state.NewValue(ctx.Store(), state.ValueDescriptor[int64]{Name: "triest-seen"})
	f.shown = state.NewValue(ctx.Store(), state.ValueDescriptor[triestShown]{Name: "triest-shown"})
	f.w = types.NewRowWriter(f.r.rt, types.NewArena(0))
	return nil
}

// ProcessElement adds or removes the edge of a change.
func (f *triestFn[T, P]) ProcessElement(ctx *eddy.KeyedContext[struct{}, Rec], c Rec) error {
	row := c.Row
	if row.IsNull(f.r.Src) || row.IsNull(f.r.Dst) {
		return nil
	}
	u, v := uint64(row.Int64(f.r.Src)), uint64(row.Int64(f.r.Dst))
	est, ok := f.est.Value()
	if !ok {
		est = f.create()
		// The end of the input brings the estimates up to date.
		ctx.RegisterEventTimeTimer(math.MaxInt64)
	}
	if c.Kind.IsAddition() {
		est.Add(u, v)
	} else {
		fd, ok := any(est).(*sketch.TriestFD)
		if !ok {
			return fmt.Errorf("TRIEST in mode '%s' received a %v change, but takes insertions only", f.r.Mode, c.Kind) // the planner prevents it
		}
		fd.Remove(u, v)
	}
	f.est.Update(est)
	n, _ := f.seen.Value()
	n++
	f.seen.Update(n)
	if n%int64(f.r.Every) == 0 {
		f.show(ctx, est)
	}
	return nil
}

// OnTimer brings the estimates up to date when the input has ended.
func (f *triestFn[T, P]) OnTimer(ctx *eddy.KeyedContext[struct{}, Rec], _ int64) error {
	if est, ok := f.est.Value(); ok {
		f.show(ctx, est)
	}
	return nil
}

// edges is the number of edges of the graph the estimator has seen: those
// present for TRIEST-FD, those inserted for the others.
func edgesOf(est triestEstimator) int64 {
	switch e := est.(type) {
	case *sketch.TriestFD:
		return int64(e.Edges())
	case *sketch.TriestBase:
		return int64(e.Time())
	case *sketch.TriestImpr:
		return int64(e.Time())
	}
	return 0
}

// show emits the changes that bring the output table to the estimator's
// current estimates.
func (f *triestFn[T, P]) show(ctx *eddy.KeyedContext[struct{}, Rec], est P) {
	old, _ := f.shown.Value()
	if f.r.Local == 0 {
		now := triestShown{Shown: true, Edges: edgesOf(est), Triangles: est.Global()}
		if old.Shown && old.Edges == now.Edges && old.Triangles == now.Triangles {
			return
		}
		if old.Shown {
			ctx.Emit(Rec{Kind: changelog.UpdateBefore, Row: f.row(old.Edges, old.Triangles)})
			ctx.Emit(Rec{Kind: changelog.UpdateAfter, Row: f.row(now.Edges, now.Triangles)})
		} else {
			ctx.Emit(Rec{Kind: changelog.Insert, Row: f.row(now.Edges, now.Triangles)})
		}
		f.shown.Update(now)
		return
	}
	var top []sketch.VertexEstimate
	for _, x := range est.TopLocal(f.r.Local) {
		if x.Estimate > 0 {
			top = append(top, x)
		}
	}
	now := make(map[uint64]float64, len(top))
	for _, x := range top {
		now[x.Vertex] = x.Estimate
	}
	was := make(map[uint64]float64, len(old.Top))
	for _, x := range old.Top {
		was[x.Vertex] = x.Estimate
		if _, stays := now[x.Vertex]; !stays {
			ctx.Emit(Rec{Kind: changelog.Delete, Row: f.row(int64(x.Vertex), x.Estimate)})
		}
	}
	for _, x := range top {
		before, ok := was[x.Vertex]
		switch {
		case !ok:
			ctx.Emit(Rec{Kind: changelog.Insert, Row: f.row(int64(x.Vertex), x.Estimate)})
		case before != x.Estimate:
			ctx.Emit(Rec{Kind: changelog.UpdateBefore, Row: f.row(int64(x.Vertex), before)})
			ctx.Emit(Rec{Kind: changelog.UpdateAfter, Row: f.row(int64(x.Vertex), x.Estimate)})
		}
	}
	f.shown.Update(triestShown{Shown: true, Top: top})
}

// row writes an output row.
func (f *triestFn[T, P]) row(first int64, triangles float64) types.Row {
	f.w.Reset()
	f.w.SetInt64(0, first)
	f.w.SetFloat64(1, triangles)
	return f.w.Finish()
}
