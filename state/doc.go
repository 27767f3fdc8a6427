// Package state is the keyed state that user functions of a keyed stream
// declare and use: Value, List, Map, Reducing and Aggregating state, scoped
// to the key of the record being processed, with an optional time to live.
//
// State is declared once, in a keyed function's Open, on the Store of its
// context, and used in every call after:
//
//	type counter struct{ count state.Value[int64] }
//
//	func (f *counter) Open(ctx *eddy.KeyedContext[string, int64]) error {
//		f.count = state.NewValue(ctx.Store(), state.ValueDescriptor[int64]{Name: "count"})
//		return nil
//	}
//
//	func (f *counter) ProcessElement(ctx *eddy.KeyedContext[string, int64], word string) error {
//		n, _ := f.count.Value()
//		f.count.Update(n + 1)
//		ctx.Emit(n + 1)
//		return nil
//	}
//
// and run on a keyed stream of words (Example_counter):
//
//	counts := eddy.ProcessKeyed(eddy.KeyBy(words, func(w string) string { return w }),
//		func() eddy.KeyedProcessFunction[string, string, int64] { return &counter{} })
//
// The handles read the current key from the store at each call: there is
// nothing to pass. They are used on the function's goroutine only.
//
// Declaration errors (a name declared twice with different types, a type
// with no default codec, an invalid TTL) are programming mistakes, so the
// New functions panic with an error value that says what is wrong; the
// runtime recovers the panic and fails the job with a message that names the
// operator. State is snapshotted with checkpoints, by the codecs of the
// descriptors.
package state
