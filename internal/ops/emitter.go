package ops

import "github.com/eddystream/eddy/internal/runtime"

// Emitter buffers the records an operator emits one at a time and sends
// them downstream as a batch.
type Emitter[T any] struct {
	out runtime.Input[T]
	buf *runtime.Batch[T]
	// before reports whether a record is a -U, which must reach the
	// output in one batch with its +U (nil for records without a kind).
	before func(T) bool
	// err is the error of a send Emit made when the buffer was full,
	// returned by the next Flush.
	err error
}

// emitterLimit is the number of records an emitter buffers before Emit
// sends them (one more when the last is the -U of an update): an operator emitting many records in one step (a watermark
// firing every window) sends them in batches of this size instead of one
// batch grown to hold them all.
const emitterLimit = runtime.DefaultBatchSize

// NewEmitter returns an emitter writing to out.
func NewEmitter[T any](out runtime.Input[T]) *Emitter[T] {
	return &Emitter[T]{out: out, buf: runtime.NewBatch[T](0), before: runtime.UpdateBeforeOf[T]()}
}

// Emit buffers v with timestamp ts. A full buffer is sent, unless v is a
// -U: an update's two halves travel in one batch.
func (e *Emitter[T]) Emit(v T, ts int64) {
	e.buf.Data = append(e.buf.Data, v)
	e.buf.TS = append(e.buf.TS, ts)
	if len(e.buf.Data) >= emitterLimit && e.err == nil && (e.before == nil || !e.before(v)) {
		e.err = e.send()
	}
}

// Flush sends what is buffered.
func (e *Emitter[T]) Flush() error {
	if err := e.err; err != nil {
		e.err = nil
		e.buf.Reset()
		return err
	}
	return e.send()
}

// send sends what is buffered.
func (e *Emitter[T]) send() error {
	if len(e.buf.Data) == 0 {
		return nil
	}
	err := e.out.ProcessBatch(e.buf)
	e.buf.Reset()
	return err
}

// Out returns the output the emitter writes to.
func (e *Emitter[T]) Out() runtime.Input[T] { return e.out }

// flushable is an emitter of any type.
type flushable interface{ Flush() error }

// SideOutputs holds an operator's emitters for its side outputs, by tag.
type SideOutputs struct {
	byTag map[string]any
	all   []flushable
}

// NewSideOutputs returns the side outputs of an operator whose outputs are
// outs; the main output "" is left out.
func NewSideOutputs() *SideOutputs {
	return &SideOutputs{byTag: map[string]any{}}
}

// SideEmitter returns the emitter of side output tag, or nil if nothing
// consumes it.
func SideEmitter[T any](s *SideOutputs, tag string, outs map[string]any) *Emitter[T] {
	if e, ok := s.byTag[tag]; ok {
		return e.(*Emitter[T])
	}
	out, ok := outs[tag]
	if !ok {
		s.byTag[tag] = (*Emitter[T])(nil)
		return nil
	}
	e := NewEmitter(out.(runtime.Input[T]))
	s.byTag[tag] = e
	s.all = append(s.all, e)
	return e
}

// Flush flushes every side output.
func (s *SideOutputs) Flush() error {
	for _, e := range s.all {
		if err := e.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// ForwardWatermark sends wm to every side output in outs.
func ForwardWatermark(outs map[string]any, wm int64) error {
	for tag, o := range outs {
		if tag == "" {
			continue
		}
		if err := o.(runtime.Control).ProcessWatermark(wm); err != nil {
			return err
		}
	}
	return nil
}

// ForwardEnd sends end of input to every side output in outs.
func ForwardEnd(outs map[string]any) error {
	for tag, o := range outs {
		if tag == "" {
			continue
		}
		if err := o.(runtime.Control).EndInput(); err != nil {
			return err
		}
	}
	return nil
}
