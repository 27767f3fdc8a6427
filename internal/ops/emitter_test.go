package ops

import (
	"errors"
	"github.com/eddystream/eddy/changelog"
	"testing"

	"github.com/eddystream/eddy/internal/runtime"
)

// batchRecorder is an operator output that keeps the batches it is sent.
type batchRecorder struct {
	sizes []int
	got   []int
	fail  error
}

func (r *batchRecorder) ProcessBatch(b *runtime.Batch[int]) error {
	r.sizes = append(r.sizes, len(b.Data))
	r.got = append(r.got, b.Data...)
	return r.fail
}
func (r *batchRecorder) ProcessWatermark(int64) error { return nil }
func (r *batchRecorder) EndInput() error              { return nil }

func TestEmitterSendsFullBatches(t *testing.T) {
	r := &batchRecorder{}
	e := NewEmitter[int](r)
	n := 2*emitterLimit + 7
	for i := range n {
		e.Emit(i, int64(i))
	}
	if len(r.got) != 2*emitterLimit {
		t.Fatalf("before Flush %d records were sent, want %d (two full batches)", len(r.got), 2*emitterLimit)
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(r.got) != n {
		t.Fatalf("%d records sent, want %d", len(r.got), n)
	}
	for i, v := range r.got {
		if v != i {
			t.Fatalf("record %d is %d: order lost", i, v)
		}
	}
	for _, s := range r.sizes {
		if s > emitterLimit {
			t.Fatalf("a batch of %d records, more than %d", s, emitterLimit)
		}
	}
}

func TestEmitterReturnsErrorOfFullBatch(t *testing.T) {
	boom := errors.New("boom")
	r := &batchRecorder{fail: boom}
	e := NewEmitter[int](r)
	for i := range emitterLimit + 3 {
		e.Emit(i, 0)
	}
	if len(r.sizes) != 1 {
		t.Fatalf("%d sends before Flush, want 1", len(r.sizes))
	}
	if err := e.Flush(); !errors.Is(err, boom) {
		t.Fatalf("Flush = %v, want the error of the send Emit made", err)
	}
	if len(r.sizes) != 1 {
		t.Fatalf("Flush sent after a failed send (%d sends)", len(r.sizes))
	}
	r.fail = nil
	e.Emit(1, 0)
	if err := e.Flush(); err != nil || len(r.got) != emitterLimit+1 {
		t.Fatalf("after the error: Flush = %v, %d records sent", err, len(r.got))
	}
}

// changeRecorder keeps the batches of changes it is sent.
type changeRecorder struct{ batches [][]changelog.Change[int] }

func (r *changeRecorder) ProcessBatch(b *runtime.Batch[changelog.Change[int]]) error {
	r.batches = append(r.batches, append([]changelog.Change[int](nil), b.Data...))
	return nil
}
func (r *changeRecorder) ProcessWatermark(int64) error { return nil }
func (r *changeRecorder) EndInput() error              { return nil }

func TestEmitterKeepsUpdatesWhole(t *testing.T) {
	r := &changeRecorder{}
	e := NewEmitter[changelog.Change[int]](r)
	// Inserts, then updates whose -U falls on the limit.
	for i := range emitterLimit - 1 {
		e.Emit(changelog.Change[int]{Kind: changelog.Insert, Row: i}, 0)
	}
	for i := range 3 * emitterLimit {
		e.Emit(changelog.Change[int]{Kind: changelog.UpdateBefore, Row: i}, 0)
		e.Emit(changelog.Change[int]{Kind: changelog.UpdateAfter, Row: i + 1}, 0)
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range r.batches {
		n += len(b)
		if b[len(b)-1].Kind == changelog.UpdateBefore {
			t.Fatalf("a batch of %d ends with a -U", len(b))
		}
		if b[0].Kind == changelog.UpdateAfter {
			t.Fatalf("a batch of %d starts with a +U", len(b))
		}
	}
	if len(r.batches) < 2 || n != emitterLimit-1+6*emitterLimit {
		t.Fatalf("%d records in %d batches", n, len(r.batches))
	}
}
