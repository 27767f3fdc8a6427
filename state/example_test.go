package state_test

import (
	"context"
	"fmt"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/state"
)

// counter is the example of the package comment: it counts the words of
// each key.
type counter struct{ count state.Value[int64] }

func (f *counter) Open(ctx *eddy.KeyedContext[string, int64]) error {
	f.count = state.NewValue(ctx.Store(), state.ValueDescriptor[int64]{Name: "count"})
	return nil
}

func (f *counter) ProcessElement(ctx *eddy.KeyedContext[string, int64], word string) error {
	n, _ := f.count.Value()
	f.count.Update(n + 1)
	ctx.Emit(n + 1)
	return nil
}

// The counter of the package comment, run on a keyed stream of words.
func Example_counter() {
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	words := eddy.FromSlice(env, []string{"to", "be", "or", "not", "to", "be"}, eddy.NoWatermarks[string]())
	counts := eddy.ProcessKeyed(eddy.KeyBy(words, func(w string) string { return w }),
		func() eddy.KeyedProcessFunction[string, string, int64] { return &counter{} })
	eddy.Print(counts)
	if err := env.Execute(context.Background(), "count"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 1
	// 1
	// 1
	// 1
	// 2
	// 2
}
