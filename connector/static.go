package connector

import "fmt"

// StaticEnumerator is the enumerator of a source whose splits are known when
// the job first starts (a list of files, a number of generator parts): on a
// fresh start it calls discover once and deals the splits round-robin to the
// readers, split i to the reader of subtask i mod parallelism; then it
// signals that no more splits will come. Its state is the splits not yet
// handed to a reader, dealt again over the readers of a restored job.
type StaticEnumerator struct {
	ctx     EnumeratorContext
	pending [][]Split // per subtask
}

// NewStaticEnumerator returns the enumerator over the splits discover
// returns for the job's parallelism (on a fresh start, restored == nil) or
// over the restored state.
func NewStaticEnumerator(ctx EnumeratorContext, restored []byte, discover func(parallelism int) ([]Split, error)) (*StaticEnumerator, error) {
	p := ctx.Parallelism()
	e := &StaticEnumerator{ctx: ctx, pending: make([][]Split, p)}
	var splits []Split
	if len(restored) > 0 {
		s, err := DecodeSplits(restored)
		if err != nil {
			return nil, fmt.Errorf("source %q: restoring the enumerator: %w", ctx.SourceName(), err)
		}
		splits = s
	} else if restored == nil {
		s, err := discover(p)
		if err != nil {
			return nil, err
		}
		splits = s
	}
	for i, s := range splits {
		e.pending[i%p] = append(e.pending[i%p], s)
	}
	return e, nil
}

// AddReader assigns the reader its share of the splits and signals that no
// more will come.
func (e *StaticEnumerator) AddReader(subtask int) error {
	if len(e.pending[subtask]) > 0 {
		e.ctx.AssignSplits(subtask, e.pending[subtask]...)
		e.pending[subtask] = nil
	}
	e.ctx.SignalNoMoreSplits(subtask)
	return nil
}

// HandleSplitRequest does nothing: every reader gets its splits when it
// starts.
func (e *StaticEnumerator) HandleSplitRequest(int) error { return nil }

// HandleEvent rejects events: a static source's readers send none.
func (e *StaticEnumerator) HandleEvent(subtask int, _ []byte) error {
	return fmt.Errorf("source %q: unexpected event from reader %d", e.ctx.SourceName(), subtask)
}

// SnapshotState encodes the splits not yet assigned.
func (e *StaticEnumerator) SnapshotState(int64) ([]byte, error) {
	var all []Split
	for _, l := range e.pending {
		all = append(all, l...)
	}
	return EncodeSplits(all), nil
}

// Close does nothing.
func (e *StaticEnumerator) Close() error { return nil }
