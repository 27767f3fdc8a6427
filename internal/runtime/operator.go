package runtime

import "sync/atomic"

// Control receives the in-band events of an operator's inputs that are not
// records. For a one-input operator it is the operator's Input itself; an
// operator with several inputs receives them once, combined over its inputs.
//
// All methods are called on the subtask's goroutine.
type Control interface {
	// ProcessWatermark tells the operator that event time has reached wm on
	// all its inputs: no record with a timestamp <= wm will follow. The
	// operator fires what wm completes, then forwards a watermark (usually wm
	// itself) to its output.
	ProcessWatermark(wm int64) error
	// EndInput tells the operator that all its inputs have ended. The
	// operator emits what it still holds and calls EndInput on its output.
	EndInput() error
}

// Input is the input side of a one-input operator and the type of every
// operator output: a chained successor, an exchange writer and a fan-out are
// all Inputs of the record type they receive.
type Input[T any] interface {
	Control
	// ProcessBatch processes a batch of records. The batch is read-only and
	// valid only during the call.
	ProcessBatch(b *Batch[T]) error
}

// Closer is implemented by operators that hold resources. Close is called
// once when the subtask ends, whether it ended well or not.
type Closer interface {
	Close() error
}

// Built is an operator instance for one subtask, as returned by a node's
// build function.
type Built struct {
	// Inputs holds one Input[T_i] per input of the node, in input order.
	Inputs []any
	// Control receives watermarks and end of input for the whole operator.
	// If nil, Inputs[0] must implement Control.
	Control Control
}

// fanout sends everything to several consumers in order.
type fanout[T any] struct {
	outs []Input[T]
}

func (f *fanout[T]) ProcessBatch(b *Batch[T]) error {
	for _, o := range f.outs {
		if err := o.ProcessBatch(b); err != nil {
			return err
		}
	}
	return nil
}

func (f *fanout[T]) ProcessWatermark(wm int64) error {
	for _, o := range f.outs {
		if err := o.ProcessWatermark(wm); err != nil {
			return err
		}
	}
	return nil
}

func (f *fanout[T]) EndInput() error {
	for _, o := range f.outs {
		if err := o.EndInput(); err != nil {
			return err
		}
	}
	return nil
}

// discard is the output of an operator output that nothing consumes.
type discard[T any] struct{}

func (discard[T]) ProcessBatch(*Batch[T]) error { return nil }
func (discard[T]) ProcessWatermark(int64) error { return nil }
func (discard[T]) EndInput() error              { return nil }

// combine returns one Input that feeds all of outs.
func combine[T any](outs []any) Input[T] {
	switch len(outs) {
	case 0:
		return discard[T]{}
	case 1:
		return outs[0].(Input[T])
	}
	f := &fanout[T]{}
	for _, o := range outs {
		f.outs = append(f.outs, o.(Input[T]))
	}
	return f
}

// countingOutput counts the records an operator emits on its main output.
type countingOutput[T any] struct {
	out Input[T]
	n   *atomic.Int64
}

func (c *countingOutput[T]) ProcessBatch(b *Batch[T]) error {
	c.n.Add(int64(len(b.Data)))
	return c.out.ProcessBatch(b)
}

func (c *countingOutput[T]) ProcessWatermark(wm int64) error { return c.out.ProcessWatermark(wm) }
func (c *countingOutput[T]) EndInput() error                 { return c.out.EndInput() }

// InputRetainer is implemented by operators that can tell whether they keep
// anything of the records they are given (in state, in buffers, or by
// forwarding them) once the call that gave them returns.
type InputRetainer interface {
	// RetainsNoInput reports whether the operator keeps nothing of its
	// input records after the call that gave them.
	RetainsNoInput() bool
}

// InputForwarder is implemented by operators that keep nothing of their
// input records but the records they emit, which are input records as
// they were given (a filter): such an operator retains no input when none
// of the operators chained to its outputs does.
type InputForwarder interface {
	// ForwardsInputOnly reports whether the operator keeps nothing of its
	// input records but those it emits as they are.
	ForwardsInputOnly() bool
}
