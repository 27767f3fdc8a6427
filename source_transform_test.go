package eddy

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// countingWatermarks counts the records its generators see.
type countingWatermarks struct {
	seen *atomic.Int64
	max  int64
}

func (g *countingWatermarks) OnEvent(_ int, ts int64) {
	g.seen.Add(1)
	g.max = max(g.max, ts)
}

func (g *countingWatermarks) Watermark() int64 { return g.max }

// TestTransformInSource checks that a function run in the source emits its
// results in place of the records, drops those it refuses after the
// watermark generator has seen them, and is made once per subtask.
func TestTransformInSource(t *testing.T) {
	for _, p := range []int{1, 2} {
		data := make([]int, 1000)
		for i := range data {
			data[i] = i
		}
		var seen atomic.Int64
		var made atomic.Int64
		env := NewEnvironment(WithParallelism(p), WithBatchSize(7))
		ws := CustomWatermarks(func(v int) int64 { return int64(v) }, func() WatermarkGenerator[int] {
			return &countingWatermarks{seen: &seen}
		})
		s := FromSource(env, "numbers", &sliceSource[int]{data: data}, ws, TransformInSource(func() func(int) (int, bool) {
			made.Add(1)
			return func(v int) (int, bool) { return 10 * v, v%3 == 0 }
		}))
		var mu sync.Mutex
		var got []int
		SinkTo(s, func(v int) error {
			mu.Lock()
			got = append(got, v)
			mu.Unlock()
			return nil
		})
		if err := env.Execute(context.Background(), "transform"); err != nil {
			t.Fatal(err)
		}
		var want []int
		for _, v := range data {
			if v%3 == 0 {
				want = append(want, 10*v)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("p=%d: got %d records %v..., want %d", p, len(got), got[:min(5, len(got))], len(want))
		}
		if n := seen.Load(); n != int64(len(data)) {
			t.Errorf("p=%d: the watermark generators saw %d records, want all %d", p, n, len(data))
		}
		if n := made.Load(); n != int64(p) {
			t.Errorf("p=%d: the transform was made %d times, want once per subtask", p, n)
		}
	}
}

// TestTransformInSourceOfAnotherType checks that a transform of another
// type than the source's records fails the job with an error naming it.
func TestTransformInSourceOfAnotherType(t *testing.T) {
	env := NewEnvironment()
	s := FromSource(env, "numbers", &sliceSource[int]{data: []int{1}}, NoWatermarks[int](), TransformInSource(func() func(string) (string, bool) {
		return func(v string) (string, bool) { return v, true }
	}))
	SinkTo(s, func(int) error { return nil })
	err := env.Execute(context.Background(), "transform")
	if err == nil || !strings.Contains(err.Error(), "TransformInSource") {
		t.Fatalf("got %v, want an error naming TransformInSource", err)
	}
}
