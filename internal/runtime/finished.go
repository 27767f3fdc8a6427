package runtime

import "sort"

// A subtask restored from a checkpoint in which it had finished (see
// checkpoint.Loaded.Redistribute) does not run again: its operator is built,
// so that it restores its state, but what reaches it is dropped, and at the
// end of its input it ends its outputs with the final watermark, as it did
// before. Whatever it emitted at its end (results fired by the final
// watermark, a summary written at end of input) is therefore not emitted
// twice.

// finishedOp is the Control of an operator restored as finished.
type finishedOp struct {
	outs map[string]any // per output name, an Input[T]
}

// ProcessWatermark drops the watermark: the operator passed on the final
// one before it finished.
func (f *finishedOp) ProcessWatermark(int64) error { return nil }

// EndInput sends the final watermark and end of input to every output.
func (f *finishedOp) EndInput() error { return endOutputs(f.outs) }

// endOutputs sends the final watermark and then end of input to every
// output of outs, in the order of their names.
func endOutputs(outs map[string]any) error {
	tags := make([]string, 0, len(outs))
	for tag := range outs {
		tags = append(tags, tag)
	}
	sort.Strings(tags)
	for _, tag := range tags {
		if err := outs[tag].(Control).ProcessWatermark(MaxWatermark); err != nil {
			return err
		}
	}
	for _, tag := range tags {
		if err := outs[tag].(Control).EndInput(); err != nil {
			return err
		}
	}
	return nil
}

// finishedInput is an input of an operator restored as finished.
type finishedInput[T any] struct {
	op   *finishedOp
	ends bool // the input is the operator's Control
}

func (f *finishedInput[T]) ProcessBatch(*Batch[T]) error { return nil }
func (f *finishedInput[T]) ProcessWatermark(int64) error { return nil }

func (f *finishedInput[T]) EndInput() error {
	if f.ends {
		return f.op.EndInput()
	}
	return nil
}

// finishedSource is the driver of a source subtask restored as finished: it
// ends its outputs on its first step. The source's own driver is kept for
// its snapshots and Close.
type finishedSource struct {
	d    SourceDriver
	outs map[string]any
}

func (f *finishedSource) Step() (StepResult, error) {
	return StepResult{Done: true}, endOutputs(f.outs)
}

func (f *finishedSource) Close() error { return f.d.Close() }
