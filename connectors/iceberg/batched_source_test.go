package iceberg

import (
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// batchedSource emits its batches one per checkpoint: a batch, then nothing
// until a checkpoint taken after it has completed, so that each batch lands
// in a commit of its own however slow the machine is.
type batchedSource struct {
	batches [][]changelog.Change[types.Row]
}

func (s *batchedSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) {
		return []connector.Split{{ID: "batches"}}, nil
	})
}

func (s *batchedSource) NewReader(connector.ReaderContext) (connector.Reader[changelog.Change[types.Row]], error) {
	return &batchedReader{s: s}, nil
}

type batchedReader struct {
	s       *batchedSource
	has     bool
	next    int   // the batch to emit next
	emitted bool  // batch next has been emitted
	after   int64 // the first checkpoint taken after it, 0 before
}

func (r *batchedReader) AddSplits(s []connector.Split) error { r.has = r.has || len(s) > 0; return nil }

func (r *batchedReader) Read(out connector.Output[changelog.Change[types.Row]]) error {
	if !r.has {
		return nil
	}
	so := out.Split("batches")
	switch {
	case r.next == len(r.s.batches):
		so.Finish()
		r.has = false
	case !r.emitted:
		for _, c := range r.s.batches[r.next] {
			so.Emit(c)
		}
		r.emitted = true
	default:
		time.Sleep(time.Millisecond)
	}
	return nil
}

func (r *batchedReader) SnapshotState(id int64) ([]connector.Split, error) {
	if r.emitted && r.after == 0 {
		r.after = id
	}
	if !r.has {
		return nil, nil
	}
	return []connector.Split{{ID: "batches"}}, nil
}

func (r *batchedReader) NotifyCheckpointComplete(id int64) error {
	if r.after != 0 && id >= r.after {
		r.next++
		r.emitted, r.after = false, 0
	}
	return nil
}

func (r *batchedReader) Close() error { return nil }
