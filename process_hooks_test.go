package eddy_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddystream/eddy"
)

// bufferingCounter counts the records of each key in a Go map, outside
// keyed state, and emits the counts when a checkpoint's barrier arrives
// and at the end of the input: what it emits before the barrier belongs
// to the checkpoint, so no count is lost or doubled across failures.
type bufferingCounter struct {
	counts map[int64]int64
}

func (b *bufferingCounter) ProcessElement(ctx *eddy.KeyedContext[int64, string], v int64) error {
	if b.counts == nil {
		b.counts = map[int64]int64{}
	}
	b.counts[ctx.Key()]++
	return nil
}

func (b *bufferingCounter) emit(emit func(string), id int64) {
	for k, n := range b.counts {
		emit(fmt.Sprintf("%d %d %d", k, n, id))
	}
	clear(b.counts)
}

func (b *bufferingCounter) PrepareSnapshot(ctx *eddy.KeyedContext[int64, string], id int64) error {
	b.emit(ctx.Emit, id)
	return nil
}

func (b *bufferingCounter) EndInput(ctx *eddy.KeyedContext[int64, string]) error {
	b.emit(ctx.Emit, 0)
	return nil
}

func TestPrepareSnapshotEmitsAheadOfTheBarrier(t *testing.T) {
	const n, keys = 40000, 7
	out, chk := t.TempDir(), t.TempDir()
	env := eddy.NewEnvironment(eddy.WithParallelism(2),
		eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(chk),
		eddy.WithRestartStrategy(eddy.FixedDelayRestart(10, 5*time.Millisecond)))
	var mu sync.Mutex
	panicAt := map[int64]bool{9000: true, 23000: true}
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: n, RatePerSecond: 80000},
		func(i int64) int64 { return i }, eddy.NoWatermarks[int64]())
	checked := eddy.Map(src, func(i int64) int64 {
		mu.Lock()
		boom := panicAt[i]
		delete(panicAt, i)
		mu.Unlock()
		if boom {
			panic(fmt.Sprintf("injected failure at record %d", i))
		}
		return i
	}).Parallelism(1) // one subtask, so that each injected failure is a restart of its own
	counts := eddy.ProcessKeyed(eddy.KeyBy(checked, func(i int64) int64 { return i % keys }),
		func() eddy.KeyedProcessFunction[int64, int64, string] { return &bufferingCounter{} })
	eddy.WriteFiles(counts, out)
	if err := env.Execute(context.Background(), "hooks"); err != nil {
		t.Fatal(err)
	}
	if r := env.Restarts(); r != 2 {
		t.Fatalf("job restarted %d times, want 2", r)
	}
	sums := map[int64]int64{}
	atCheckpoints := 0
	for _, l := range committedLines(t, out) {
		// The file sink writes each string as JSON.
		f := strings.Fields(strings.Trim(l, `"`))
		k, err1 := strconv.ParseInt(f[0], 10, 64)
		c, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("line %q is not 'key count checkpoint'", l)
		}
		sums[k] += c
		if f[2] != "0" {
			atCheckpoints++
		}
	}
	for k := int64(0); k < keys; k++ {
		want := int64(n / keys)
		if k < n%keys {
			want++
		}
		if sums[k] != want {
			t.Errorf("key %d: counted %d records, want %d", k, sums[k], want)
		}
	}
	if atCheckpoints == 0 {
		t.Error("no counts were emitted at a checkpoint: PrepareSnapshot was never called")
	}
}

// holdingFunc holds records and emits them only from PrepareSnapshot: it
// has no EndInput, so the end of the input calls PrepareSnapshot.
type holdingFunc struct{ held []int64 }

func (h *holdingFunc) ProcessElement(_ *eddy.ProcessContext[int64], v int64) error {
	h.held = append(h.held, v)
	return nil
}

func (h *holdingFunc) PrepareSnapshot(ctx *eddy.ProcessContext[int64], _ int64) error {
	for _, v := range h.held {
		ctx.Emit(v)
	}
	h.held = h.held[:0]
	return nil
}

func TestPrepareSnapshotAtTheEndOfInput(t *testing.T) {
	const n = 5000
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(5*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: n, RatePerSecond: 50000}, func(i int64) int64 { return i }, eddy.NoWatermarks[int64]())
	held := eddy.Process(src, func() eddy.ProcessFunction[int64, int64] { return &holdingFunc{} })
	var mu sync.Mutex
	seen := map[int64]int{}
	eddy.SinkTo(held, func(v int64) error {
		mu.Lock()
		seen[v]++
		mu.Unlock()
		return nil
	})
	if err := env.Execute(context.Background(), "held"); err != nil {
		t.Fatal(err)
	}
	if len(seen) != n {
		t.Fatalf("%d of %d records arrived", len(seen), n)
	}
}
