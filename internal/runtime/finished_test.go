package runtime

import (
	"context"
	"encoding/binary"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/eddystream/eddy/internal/checkpoint"
)

// countSource emits base+pos for pos in [pos, end), one record a step, and
// checkpoints pos. A bounded one ends after end; an unbounded one idles
// there until the job stops.
type countSource struct {
	out       Input[int64]
	base      int64
	pos, end  int64
	bounded   bool
	stepSleep time.Duration
}

func (s *countSource) Step() (StepResult, error) {
	if s.pos >= s.end {
		if !s.bounded {
			time.Sleep(time.Millisecond)
			return StepResult{}, nil
		}
		if err := s.out.ProcessWatermark(MaxWatermark); err != nil {
			return StepResult{}, err
		}
		return StepResult{Done: true}, s.out.EndInput()
	}
	b := NewBatch[int64](1)
	b.Append(s.base+s.pos, NoTimestamp)
	s.pos++
	if s.stepSleep > 0 {
		time.Sleep(s.stepSleep)
	}
	return StepResult{N: 1}, s.out.ProcessBatch(b)
}

func (s *countSource) Close() error { return nil }

func (s *countSource) SnapshotState(int64) (*OperatorSnapshot, error) {
	return &OperatorSnapshot{Lists: map[string][][]byte{"pos": {binary.AppendVarint(nil, s.pos)}}}, nil
}

func countSourceNode(name string, base, end int64, bounded bool, sleep time.Duration) *Node {
	return &Node{
		Name: name, UID: name, Parallelism: 1,
		OutTypes: map[string]*OutType{"": NewOutType[int64]()},
		Source: func(ctx *Context, outs map[string]any) (SourceDriver, error) {
			s := &countSource{out: outs[""].(Input[int64]), base: base, end: end, bounded: bounded, stepSleep: sleep}
			if rs := ctx.Restored; rs != nil {
				for _, b := range rs.Lists["pos"] {
					s.pos, _ = binary.Varint(b)
				}
			}
			return s, nil
		},
	}
}

// summary passes records on and, at end of input, emits how many it saw
// (as -1000-n), the way an operator emits a result at the end.
type summary struct {
	out Input[int64]
	n   int64
}

func (s *summary) ProcessBatch(b *Batch[int64]) error {
	s.n += int64(b.Len())
	return s.out.ProcessBatch(b)
}
func (s *summary) ProcessWatermark(wm int64) error { return s.out.ProcessWatermark(wm) }
func (s *summary) EndInput() error {
	b := NewBatch[int64](1)
	b.Append(-1000-s.n, NoTimestamp)
	if err := s.out.ProcessBatch(b); err != nil {
		return err
	}
	return s.out.EndInput()
}

// collector records what reaches it.
type collector struct {
	mu  sync.Mutex
	got []int64
}

func (c *collector) ProcessBatch(b *Batch[int64]) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, b.Data...)
	return nil
}
func (c *collector) ProcessWatermark(int64) error { return nil }
func (c *collector) EndInput() error              { return nil }

func (c *collector) values() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.got)
}

// finishingGraph is a short bounded source (10 records, chained with a
// summary operator) and a long one (records from 1000), both into a
// collecting sink.
func finishingGraph(c *collector, longEnd int64, longBounded bool, longSleep time.Duration) *Graph {
	g := &Graph{}
	short := g.AddNode(countSourceNode("short", 0, 10, true, 0))
	long := g.AddNode(countSourceNode("long", 1000, longEnd, longBounded, longSleep))
	sum := g.AddNode(&Node{
		Name: "summary", UID: "summary", Parallelism: 1, NumInputs: 1,
		InTypes:  []*InType{NewInType[int64]()},
		OutTypes: map[string]*OutType{"": NewOutType[int64]()},
		Build: func(ctx *Context, outs map[string]any) (*Built, error) {
			return &Built{Inputs: []any{Input[int64](&summary{out: outs[""].(Input[int64])})}}, nil
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
	g.Connect(short, "", sum, 0, Forward, nil)
	g.Connect(sum, "", sink, 0, Forward, nil)
	g.Connect(long, "", sink, 0, Forward, nil)
	return g
}

// finishedIn reports whether the newest checkpoint in d marks the subtask
// of operator uid finished, and the checkpoint's id.
func finishedIn(t *testing.T, d *checkpoint.Dir, uid string) (int64, bool) {
	t.Helper()
	refs, err := d.List()
	if err != nil || len(refs) == 0 {
		return 0, false
	}
	l, err := d.Load(refs[0])
	if err != nil {
		return 0, false
	}
	op, ok := l.Metadata.Operator(uid)
	if !ok {
		return 0, false
	}
	for _, st := range op.Subtasks {
		if st.Finished {
			return refs[0].ID, true
		}
	}
	return 0, false
}

// TestCheckpointsAfterTasksFinishAndRestoreDoesNotRerunThem runs a job whose
// short source and its summary operator finish early, checks that
// checkpoints go on completing and mark them finished, takes a savepoint
// then, and restores it: the restored job emits neither the short source's
// records nor the summary again, and the long source resumes.
func TestCheckpointsAfterTasksFinishAndRestoreDoesNotRerunThem(t *testing.T) {
	chk, err := checkpoint.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	first := &collector{}
	job, err := NewJob(finishingGraph(first, 1_000_000, false, 2*time.Millisecond), Config{
		Name: "finishing", Checkpoints: CheckpointConfig{Interval: 5 * time.Millisecond, Storage: chk, Retain: 100},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- job.Run(ctx) }()

	// Wait for two checkpoints that mark the summary finished.
	var seen []int64
	for i := 0; len(seen) < 2; i++ {
		if i > 30000 {
			t.Fatalf("no two checkpoints marked the finished operators finished; checkpoints: %+v", job.CheckpointStats())
		}
		if id, ok := finishedIn(t, chk, "summary"); ok && !slices.Contains(seen, id) {
			seen = append(seen, id)
		}
		time.Sleep(time.Millisecond)
	}
	spDir := t.TempDir()
	var path string
	for i := 0; path == ""; i++ {
		p, err := job.TriggerSavepoint(ctx, spDir, true)
		if err == nil {
			path = p
		} else if i > 1000 {
			t.Fatalf("savepoint with finished tasks: %v", err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	sp, err := checkpoint.LoadPath(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, uid := range []string{"short", "summary"} {
		op, ok := sp.Metadata.Operator(uid)
		if !ok || len(op.Subtasks) != 1 || !op.Subtasks[0].Finished {
			t.Fatalf("savepoint does not mark %s finished: %+v", uid, op)
		}
	}
	if op, _ := sp.Metadata.Operator("long"); op == nil || len(op.Subtasks) != 1 || op.Subtasks[0].Finished {
		t.Fatalf("savepoint marks the running source finished: %+v", op)
	}
	got := first.values()
	if !slices.Contains(got, -1010) {
		t.Fatalf("the first run did not emit the summary -1010: %v", got)
	}

	// Restore with the long source bounded: the job runs to its end.
	st, err := sp.Redistribute("long", 0, 1, 0, 128, nil)
	if err != nil {
		t.Fatal(err)
	}
	longPos, _ := binary.Varint(st.Lists["pos"][0])
	const longEnd = 5000
	if longPos >= longEnd {
		t.Fatalf("the long source passed %d records before the savepoint; the test needs fewer", longPos)
	}
	second := &collector{}
	job2, err := NewJob(finishingGraph(second, longEnd, true, 0), Config{Name: "finishing", Restore: sp})
	if err != nil {
		t.Fatal(err)
	}
	if err := job2.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var want []int64
	for v := 1000 + longPos; v < 1000+longEnd; v++ {
		want = append(want, v)
	}
	if got := second.values(); !slices.Equal(got, want) {
		t.Fatalf("the restored job emitted %d records %v…,\nwant the long source's records from %d only", len(got), got[:min(len(got), 20)], 1000+longPos)
	}
}

// TestJobWithCheckpointsEndsAfterAllTasksFinish checks that a job whose
// tasks finish one after the other while checkpoints are taken ends with
// its final checkpoint and loses no record.
func TestJobWithCheckpointsEndsAfterAllTasksFinish(t *testing.T) {
	chk, err := checkpoint.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{}
	job, err := NewJob(finishingGraph(c, 200, true, 0), Config{
		Name: "ends", Checkpoints: CheckpointConfig{Interval: time.Millisecond, Storage: chk},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	refs, err := chk.List()
	if err != nil || len(refs) == 0 {
		t.Fatalf("no checkpoints: %v", err)
	}
	l, err := chk.Load(refs[0])
	if err != nil {
		t.Fatal(err)
	}
	if !l.Metadata.Final {
		t.Fatalf("the newest checkpoint %s is not the final one", refs[0].Path)
	}
	if got := len(c.values()); got != 10+1+200 {
		t.Fatalf("collected %d records, want %d", got, 10+1+200)
	}
}
