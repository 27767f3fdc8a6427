package eddy_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/state"
	"github.com/eddystream/eddy/window"
)

type pageView struct {
	User string
	Page string
	At   int64 // ms
}

func views() []pageView {
	return []pageView{
		{"ann", "/home", 1000}, {"bob", "/home", 1500}, {"ann", "/cart", 4000},
		{"ann", "/pay", 12000}, {"bob", "/help", 13000}, {"cid", "/home", 21000},
	}
}

func Example() {
	env := eddy.NewEnvironment()
	words := eddy.FromSlice(env, []string{"to be", "or not", "to be"}, eddy.NoWatermarks[string]())
	split := eddy.FlatMap(words, func(line string, emit func(string)) {
		for _, w := range strings.Fields(line) {
			emit(w)
		}
	})
	eddy.Print(eddy.Map(split, strings.ToUpper))
	if err := env.Execute(context.Background(), "words"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// TO
	// BE
	// OR
	// NOT
	// TO
	// BE
}

// Count page views per user in tumbling 10-second windows of event time.
func ExampleAggregate() {
	env := eddy.NewEnvironment()
	src := eddy.FromSlice(env, views(), eddy.BoundedOutOfOrder(time.Second, func(v pageView) int64 { return v.At }))
	perUser := eddy.KeyBy(src, func(v pageView) string { return v.User })
	counts := eddy.Aggregate(eddy.Window(perUser, window.Tumbling(10*time.Second)), agg.Count[pageView]())
	eddy.Print(eddy.Map(counts, func(w eddy.Windowed[string, int64]) string {
		return fmt.Sprintf("%s %d-%ds: %d", w.Key, w.Window.Start/1000, w.Window.End/1000, w.Value)
	}))
	if err := env.Execute(context.Background(), "views per user"); err != nil {
		fmt.Println(err)
	}
	// Unordered output:
	// ann 0-10s: 2
	// bob 0-10s: 1
	// ann 10-20s: 1
	// bob 10-20s: 1
	// cid 20-30s: 1
}

// sessionEnd emits a user's view count when the user has been inactive for
// 5 seconds of event time, using keyed state and an event-time timer.
type sessionEnd struct {
	count state.Value[int64]
	last  state.Value[int64]
}

func (f *sessionEnd) Open(ctx *eddy.KeyedContext[string, string]) error {
	f.count = state.NewValue(ctx.Store(), state.ValueDescriptor[int64]{Name: "count"})
	f.last = state.NewValue(ctx.Store(), state.ValueDescriptor[int64]{Name: "last"})
	return nil
}

func (f *sessionEnd) ProcessElement(ctx *eddy.KeyedContext[string, string], v pageView) error {
	n, _ := f.count.Value()
	f.count.Update(n + 1)
	if last, ok := f.last.Value(); ok {
		ctx.DeleteEventTimeTimer(last + 5000)
	}
	f.last.Update(v.At)
	ctx.RegisterEventTimeTimer(v.At + 5000)
	return nil
}

func (f *sessionEnd) OnTimer(ctx *eddy.KeyedContext[string, string], ts int64) error {
	n, _ := f.count.Value()
	ctx.Emit(fmt.Sprintf("%s inactive at %ds after %d views", ctx.Key(), ts/1000, n))
	f.count.Clear()
	f.last.Clear()
	return nil
}

func ExampleProcessKeyed() {
	// Batches of one record make the source advance the watermark after
	// every record, as a slow real-time source would.
	env := eddy.NewEnvironment(eddy.WithBatchSize(1))
	src := eddy.FromSlice(env, views(), eddy.BoundedOutOfOrder(0, func(v pageView) int64 { return v.At }))
	ends := eddy.ProcessKeyed(eddy.KeyBy(src, func(v pageView) string { return v.User }),
		func() eddy.KeyedProcessFunction[string, pageView, string] { return &sessionEnd{} })
	eddy.Print(ends)
	if err := env.Execute(context.Background(), "inactivity"); err != nil {
		fmt.Println(err)
	}
	// The view at 12s reaches ann's function before the watermark passes
	// 9s, so it extends her session.

	// Output:
	// bob inactive at 6s after 1 views
	// ann inactive at 17s after 3 views
	// bob inactive at 18s after 1 views
	// cid inactive at 26s after 1 views
}

type order struct {
	ID int
	At int64
}

type shipment struct {
	Order int
	At    int64
}

// Join each order with its shipment if it shipped within 3 seconds.
func ExampleIntervalJoin() {
	env := eddy.NewEnvironment()
	orders := eddy.FromSlice(env, []order{{1, 1000}, {2, 2000}, {3, 3000}}, eddy.Monotonous(func(o order) int64 { return o.At }))
	ships := eddy.FromSlice(env, []shipment{{1, 2500}, {2, 9000}, {3, 6000}}, eddy.Monotonous(func(s shipment) int64 { return s.At }))
	joined := eddy.IntervalJoin(eddy.ConnectKeyed(
		eddy.KeyBy(orders, func(o order) int { return o.ID }),
		eddy.KeyBy(ships, func(s shipment) int { return s.Order })),
		0, 3*time.Second,
		func(o order, s shipment) string { return fmt.Sprintf("order %d shipped after %dms", o.ID, s.At-o.At) })
	eddy.Print(joined)
	if err := env.Execute(context.Background(), "shipping"); err != nil {
		fmt.Println(err)
	}
	// Unordered output:
	// order 1 shipped after 1500ms
	// order 3 shipped after 3000ms
}

// Route records to a side output.
func ExampleSideOutput() {
	env := eddy.NewEnvironment()
	src := eddy.FromSlice(env, []int{1, -2, 3, -4}, eddy.NoWatermarks[int]())
	negatives := eddy.NewOutputTag[int]("negatives")
	positives := eddy.Process(src, func() eddy.ProcessFunction[int, int] {
		return eddy.ProcessFunc[int, int](func(ctx *eddy.ProcessContext[int], v int) error {
			if v < 0 {
				negatives.Emit(ctx, v)
				return nil
			}
			ctx.Emit(v)
			return nil
		})
	})
	eddy.Print(eddy.Map(positives, func(v int) string { return fmt.Sprint("positive ", v) }))
	eddy.Print(eddy.Map(eddy.SideOutput(positives, negatives), func(v int) string { return fmt.Sprint("negative ", v) }))
	if err := env.Execute(context.Background(), "split"); err != nil {
		fmt.Println(err)
	}
	// Unordered output:
	// positive 1
	// negative -2
	// positive 3
	// negative -4
}
