package sketch_test

import (
	"context"
	"fmt"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/sketch"
	"github.com/eddystream/eddy/window"
)

// Distinct users per page in tumbling 10-second windows, with a
// HyperLogLog per window (exact at these sizes, in its sparse form).
func ExampleHLLAgg() {
	type view struct {
		Page string
		User int64
		At   int64 // ms
	}
	views := []view{
		{"home", 1, 1000}, {"home", 2, 2000}, {"home", 1, 3000}, {"cart", 1, 4000},
		{"home", 3, 11000}, {"cart", 2, 12000}, {"cart", 2, 13000},
	}
	env := eddy.NewEnvironment()
	src := eddy.FromSlice(env, views, eddy.Monotonous(func(v view) int64 { return v.At }))
	byPage := eddy.KeyBy(src, func(v view) string { return v.Page })
	users := eddy.Aggregate(eddy.Window(byPage, window.Tumbling(10*time.Second)),
		sketch.HLLAgg(12, func(v view) int64 { return v.User }))
	eddy.Print(eddy.Map(users, func(w eddy.Windowed[string, uint64]) string {
		return fmt.Sprintf("%s %d-%ds: %d users", w.Key, w.Window.Start/1000, w.Window.End/1000, w.Value)
	}))
	if err := env.Execute(context.Background(), "distinct users"); err != nil {
		fmt.Println(err)
	}
	// Unordered output:
	// home 0-10s: 2 users
	// cart 0-10s: 1 users
	// home 10-20s: 1 users
	// cart 10-20s: 1 users
}
