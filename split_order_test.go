package eddy_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
)

// orderedRecord is a record of orderSource: the reader's subtask and the
// record's place in the sequence of all splits.
type orderedRecord struct {
	Subtask int
	Seq     int
}

// orderSource has six splits of 50 records, split k holding 50k … 50k+49,
// which its readers read one after the other in the order they got them.
// With hold, a reader stops after its first split until hold is closed.
// With ordered, it asks eddy to keep its readers' splits together and in
// order (connector.OrderedSplits).
type orderSource struct {
	ordered bool
	hold    chan struct{}
}

const orderSplits, orderPerSplit = 6, 50

func (s orderSource) KeepsSplitOrder() bool { return s.ordered }

func (s orderSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) {
		// All splits go to the first reader, in order.
		out := make([]connector.Split, orderSplits)
		for k := range out {
			out[k] = connector.Split{ID: fmt.Sprint("split-", k), State: binary.AppendVarint(binary.AppendVarint(nil, int64(k)), 0)}
		}
		return out, nil
	})
}

func (s orderSource) NewReader(ctx connector.ReaderContext) (connector.Reader[orderedRecord], error) {
	return &orderReader{s: s, subtask: ctx.Subtask()}, nil
}

// orderSplit is a split being read: its index and the next record.
type orderSplit struct {
	id       string
	k, next  int64
	finished bool
}

type orderReader struct {
	s       orderSource
	subtask int
	splits  []*orderSplit
	done    int
}

func (r *orderReader) AddSplits(splits []connector.Split) error {
	for _, sp := range splits {
		k, n := binary.Varint(sp.State)
		next, m := binary.Varint(sp.State[n:])
		if n <= 0 || m <= 0 {
			return fmt.Errorf("split %s: corrupt state", sp.ID)
		}
		r.splits = append(r.splits, &orderSplit{id: sp.ID, k: k, next: next})
	}
	return nil
}

func (r *orderReader) Read(out connector.Output[orderedRecord]) error {
	if len(r.splits) == 0 {
		time.Sleep(time.Millisecond)
		return nil
	}
	if r.done > 0 && r.s.hold != nil {
		select {
		case <-r.s.hold:
		default:
			time.Sleep(time.Millisecond)
			return nil
		}
	}
	sp := r.splits[0]
	so := out.Split(sp.id)
	for ; sp.next < orderPerSplit && out.Room() > 0; sp.next++ {
		so.Emit(orderedRecord{Subtask: r.subtask, Seq: int(sp.k*orderPerSplit + sp.next)})
	}
	if sp.next == orderPerSplit {
		so.Finish()
		r.splits = r.splits[1:]
		r.done++
	}
	return nil
}

func (r *orderReader) SnapshotState(int64) ([]connector.Split, error) {
	out := make([]connector.Split, len(r.splits))
	for i, sp := range r.splits {
		out[i] = connector.Split{ID: sp.id, State: binary.AppendVarint(binary.AppendVarint(nil, sp.k), sp.next)}
	}
	return out, nil
}

func (r *orderReader) Close() error { return nil }

// TestOrderedSplitsStayTogether takes a savepoint of a job whose one
// reader holds five splits it has not read yet, and restores it at
// parallelism 3: a source that keeps its splits' order has them read by
// one reader, in order; another has them dealt out over the readers.
func TestOrderedSplitsStayTogether(t *testing.T) {
	for _, ordered := range []bool{true, false} {
		t.Run(fmt.Sprint("ordered=", ordered), func(t *testing.T) {
			// The first run reads split 0, then holds.
			hold := make(chan struct{})
			env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithBatchSize(8))
			var first atomic.Int64
			eddy.SinkTo(eddy.FromSource[orderedRecord](env, "ordered", orderSource{ordered: ordered, hold: hold}, eddy.NoWatermarks[orderedRecord]()),
				func(orderedRecord) error { first.Add(1); return nil })
			done := make(chan error, 1)
			go func() { done <- env.Execute(context.Background(), "first") }()
			for first.Load() < orderPerSplit {
				select {
				case err := <-done:
					t.Fatalf("the job ended after %d records: %v", first.Load(), err)
				case <-time.After(time.Millisecond):
				}
			}
			path := stopWithSavepoint(t, env, done)
			if n := first.Load(); n != orderPerSplit {
				t.Fatalf("the first run emitted %d records; want split 0's %d", n, orderPerSplit)
			}

			// The restored run reads the rest at parallelism 3.
			env = eddy.NewEnvironment(eddy.WithParallelism(3), eddy.WithRestoreFrom(path), eddy.WithBatchSize(8))
			var mu sync.Mutex
			var got []orderedRecord
			eddy.SinkTo(eddy.FromSource[orderedRecord](env, "ordered", orderSource{ordered: ordered}, eddy.NoWatermarks[orderedRecord]()),
				func(r orderedRecord) error { mu.Lock(); got = append(got, r); mu.Unlock(); return nil })
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := env.Execute(ctx, "restored"); err != nil {
				t.Fatal(err)
			}
			if want := (orderSplits - 1) * orderPerSplit; len(got) != want {
				t.Fatalf("the restored run emitted %d records; want the %d of splits 1 to %d", len(got), want, orderSplits-1)
			}
			subtasks := map[int]bool{}
			last := map[int]int{}
			inOrder := true
			for _, r := range got {
				subtasks[r.Subtask] = true
				if l, ok := last[r.Subtask]; ok && r.Seq <= l {
					inOrder = false
				}
				last[r.Subtask] = r.Seq
			}
			if ordered && (len(subtasks) != 1 || !subtasks[0] || !inOrder) {
				t.Errorf("the splits of an ordered source were read by the readers %v (in order %v); want reader 0 alone, in order", subtasks, inOrder)
			}
			if !ordered && len(subtasks) < 2 {
				t.Errorf("the splits of a source that keeps no order were read by the readers %v; want them dealt out", subtasks)
			}
		})
	}
}
