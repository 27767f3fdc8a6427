package runtime

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy/internal/checkpoint"
)

// slowSnapshots passes records on; the asynchronous part of its snapshots
// takes a while and records whether a snapshot began while the previous
// one's asynchronous part was still running.
type slowSnapshots struct {
	out      Input[int64]
	running  atomic.Bool
	overlaps atomic.Int64
	taken    atomic.Int64
}

func (s *slowSnapshots) ProcessBatch(b *Batch[int64]) error { return s.out.ProcessBatch(b) }
func (s *slowSnapshots) ProcessWatermark(wm int64) error    { return s.out.ProcessWatermark(wm) }
func (s *slowSnapshots) EndInput() error                    { return s.out.EndInput() }

func (s *slowSnapshots) SnapshotStateAsync(int64) (func() (*OperatorSnapshot, error), error) {
	if s.running.Load() {
		s.overlaps.Add(1)
	}
	s.running.Store(true)
	s.taken.Add(1)
	return func() (*OperatorSnapshot, error) {
		time.Sleep(15 * time.Millisecond)
		s.running.Store(false)
		return &OperatorSnapshot{}, nil
	}, nil
}

// TestAbortedSnapshotsDoNotOverlapTheNext ends a job while a checkpoint is
// in flight, its snapshot's asynchronous part still running: the final
// checkpoint supersedes (aborts) it, and its snapshot of the operator waits
// for that asynchronous part, since an operator's tables hold one snapshot
// at a time.
func TestAbortedSnapshotsDoNotOverlapTheNext(t *testing.T) {
	chk, err := checkpoint.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	slow := &slowSnapshots{}
	c := &collector{}
	g := &Graph{}
	src := g.AddNode(countSourceNode("src", 0, 300, true, 200*time.Microsecond))
	op := g.AddNode(&Node{
		Name: "slow", UID: "slow", Parallelism: 1, NumInputs: 1,
		InTypes:  []*InType{NewInType[int64]()},
		OutTypes: map[string]*OutType{"": NewOutType[int64]()},
		Build: func(ctx *Context, outs map[string]any) (*Built, error) {
			slow.out = outs[""].(Input[int64])
			return &Built{Inputs: []any{Input[int64](slow)}}, nil
		},
	})
	sink := g.AddNode(&Node{
		Name: "sink", UID: "sink", Parallelism: 1, NumInputs: 1,
		InTypes:  []*InType{NewInType[int64]()},
		OutTypes: map[string]*OutType{"": NewOutType[int64]()},
		Build: func(ctx *Context, outs map[string]any) (*Built, error) {
			return &Built{Inputs: []any{Input[int64](c)}}, nil
		},
	})
	g.Connect(src, "", op, 0, Forward, nil)
	g.Connect(op, "", sink, 0, Forward, nil)
	job, err := NewJob(g, Config{
		Name:        "overlap",
		Checkpoints: CheckpointConfig{Interval: time.Millisecond, Timeout: time.Minute, Storage: chk},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := slow.overlaps.Load(); n > 0 {
		t.Errorf("%d of %d snapshots began while the previous one's asynchronous part ran", n, slow.taken.Load())
	}
	if slow.taken.Load() < 2 {
		t.Errorf("took %d snapshots, want at least 2 (the checkpoints did not abort and retrigger)", slow.taken.Load())
	}
	if got := len(c.values()); got != 300 {
		t.Errorf("the sink got %d records, want 300", got)
	}
}
