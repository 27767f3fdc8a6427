package eddy_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/window"
)

// TestAggregatePanesMatchesAggregate checks that AggregatePanes hands each
// firing window the accumulators of its panes: the sums of the panes agree
// with Aggregate's results for sliding, tumbling and session windows, over
// two subtasks (each with its own function from newFire).
func TestAggregatePanesMatchesAggregate(t *testing.T) {
	assigners := []window.Assigner{
		window.Sliding(10*time.Millisecond, 2*time.Millisecond),
		window.Tumbling(5 * time.Millisecond),
		window.Session(3 * time.Millisecond),
	}
	for _, a := range assigners {
		t.Run(a.String(), func(t *testing.T) {
			var recs []int64
			for i := range int64(400) {
				recs = append(recs, i*7%97+i/3)
			}
			env := eddy.NewEnvironment(eddy.WithParallelism(2))
			src := eddy.FromSlice(env, recs, eddy.BoundedOutOfOrder(100*time.Millisecond, func(v int64) int64 { return v }))
			key := func(v int64) int64 { return v % 5 }
			want := eddy.Collect(eddy.Map(eddy.Aggregate(eddy.Window(eddy.KeyBy(src, key), a), agg.Sum(func(v int64) int64 { return v })),
				func(w eddy.Windowed[int64, int64]) string { return fmt.Sprint(w.Key, w.Window, w.Value) }))
			got := eddy.Collect(eddy.AggregatePanes(eddy.Window(eddy.KeyBy(src, key), a), agg.Sum(func(v int64) int64 { return v }),
				func() eddy.PanesFunc[int64, int64, string] {
					return func(k int64, w window.Window, accs []int64, emit func(string)) error {
						var n int64
						for _, acc := range accs {
							n += acc
						}
						emit(fmt.Sprint(k, w, n))
						return nil
					}
				}))
			if err := env.Execute(context.Background(), "panes"); err != nil {
				t.Fatal(err)
			}
			g, w := got.Values(), want.Values()
			slices.Sort(g)
			slices.Sort(w)
			if len(w) == 0 || !slices.Equal(g, w) {
				t.Fatalf("AggregatePanes gave %d results, Aggregate %d:\n%v\n%v", len(g), len(w), g, w)
			}
		})
	}
}
