// Package state is the keyed state that user functions of a keyed stream
// declare and use: Value, List, Map, Reducing and Aggregating state, scoped
// to the key of the record being processed, with an optional time to live.
//
// State is declared once, in a function's Open, on the Store the runtime
// passes in, and used in every call after:
//
//	func (f *counter) Open(s *state.Store[string]) {
//		f.count = state.NewValue(s, state.ValueDescriptor[int64]{Name: "count"})
//	}
//
//	func (f *counter) Process(...) {
//		n, _ := f.count.Value()
//		f.count.Update(n + 1)
//	}
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
