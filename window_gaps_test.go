package eddy_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/window"
)

// TestSlidingWindowGapsAreCountedAndSideOutput checks that records falling
// between sliding windows of size 3 ms every 5 ms are counted in the
// window's metrics and reach its late-data side output.
func TestSlidingWindowGapsAreCountedAndSideOutput(t *testing.T) {
	env := eddy.NewEnvironment()
	ts := []int64{1, 2, 3, 4, 5, 7, 8, 12, 14}
	src := eddy.FromSlice(env, ts, eddy.BoundedOutOfOrder(0, func(v int64) int64 { return v }))
	lateTag := eddy.NewOutputTag[int64]("late")
	counts := eddy.Aggregate(eddy.Window(eddy.KeyBy(src, func(int64) int { return 0 }), window.Sliding(3*time.Millisecond, 5*time.Millisecond)).
		SideOutputLateData(lateTag), agg.Count[int64]())
	results := eddy.Collect(counts)
	gaps := eddy.Collect(eddy.SideOutput(counts, lateTag))
	if err := env.Execute(context.Background(), "gaps"); err != nil {
		t.Fatal(err)
	}
	got := gaps.Values()
	slices.Sort(got)
	if want := []int64{3, 4, 8, 14}; !slices.Equal(got, want) {
		t.Fatalf("side output %v, want the records in the gaps %v", got, want)
	}
	var n int64
	for _, w := range results.Values() {
		n += w.Value
	}
	if n != int64(len(ts)-4) {
		t.Fatalf("the windows counted %d records, want %d", n, len(ts)-4)
	}
	var gapCount, late int64
	for _, m := range env.Metrics() {
		gapCount += m.WindowGapRecords
		late += m.LateRecords
	}
	if gapCount != 4 || late != 0 {
		t.Fatalf("metrics: %d window gap records, %d late records; want 4 and 0", gapCount, late)
	}
}
