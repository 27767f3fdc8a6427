package eddy_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
)

// reuseSource emits the numbers 0 … n-1, perRead a read, as pointers: into
// one buffer it overwrites at every read when its context lets it reuse
// records (connector.ReusesRecords), into fresh memory otherwise.
type reuseSource struct {
	n, perRead int
	reused     *atomic.Int32 // readers told they may reuse
	readers    *atomic.Int32
}

func (s reuseSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) {
		return []connector.Split{{ID: "only"}}, nil
	})
}

func (s reuseSource) NewReader(ctx connector.ReaderContext) (connector.Reader[*int], error) {
	s.readers.Add(1)
	r := &reuseReader{s: s, reuse: connector.ReusesRecords(ctx)}
	if r.reuse {
		s.reused.Add(1)
		r.buf = make([]int, s.perRead)
	}
	return r, nil
}

type reuseReader struct {
	s     reuseSource
	reuse bool
	has   bool
	next  int
	buf   []int
}

func (r *reuseReader) AddSplits(s []connector.Split) error {
	r.has = r.has || len(s) > 0
	return nil
}

func (r *reuseReader) Read(out connector.Output[*int]) error {
	r.step(func() (func(), func(*int)) {
		so := out.Split("only")
		return so.Finish, func(p *int) { so.Emit(p) }
	})
	return nil
}

// step emits the next perRead numbers, or finishes the split after the
// last, through what split returns.
func (r *reuseReader) step(split func() (finish func(), emit func(*int))) {
	if !r.has {
		return
	}
	finish, emit := split()
	if r.next >= r.s.n {
		finish()
		r.has = false
		return
	}
	buf := r.buf
	if !r.reuse {
		buf = make([]int, r.s.perRead)
	}
	for i := 0; i < r.s.perRead && r.next < r.s.n; i++ {
		buf[i] = r.next
		r.next++
		emit(&buf[i])
	}
}

func (r *reuseReader) SnapshotState(int64) ([]connector.Split, error) { return nil, nil }
func (r *reuseReader) Close() error                                   { return nil }

// collectingSink keeps the values its records point to; it keeps nothing of
// the records themselves when copies is set (connector.NonRetainingWriter),
// and keeps the pointers, reading them at the end, otherwise.
type collectingSink struct {
	copies bool
	mu     *sync.Mutex
	ptrs   *[]*int
	vals   *[]int
}

func (s collectingSink) NewWriter(connector.WriterContext) (connector.Writer[*int], error) {
	return s, nil
}

func (s collectingSink) Write(records []*int, _ []int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range records {
		if s.copies {
			*s.vals = append(*s.vals, *r)
		} else {
			*s.ptrs = append(*s.ptrs, r)
		}
	}
	return nil
}

func (collectingSink) Flush() error { return nil }
func (collectingSink) Close() error { return nil }

// RetainsNoRecords is true only for the sink that copies.
func (s collectingSink) RetainsNoRecords() bool { return s.copies }

// values returns what the sink received, sorted.
func (s collectingSink) values() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(*s.vals)
	for _, p := range *s.ptrs {
		out = append(out, *p)
	}
	slices.Sort(out)
	return out
}

// txCollecting is the committer of an exactly-once sink
// (connector.TwoPhase) that hands each record to its collectingSink as it
// is written, and keeps of the records what that sink keeps.
type txCollecting struct{ s collectingSink }

func (c txCollecting) Begin() (struct{}, error)        { return struct{}{}, nil }
func (c txCollecting) Write(_ *struct{}, v *int) error { return c.s.Write([]*int{v}, nil) }
func (c txCollecting) PreCommit(*struct{}) error       { return nil }
func (c txCollecting) Commit(struct{}) error           { return nil }
func (c txCollecting) Abort(struct{}) error            { return nil }
func (c txCollecting) Recover(_, _ []struct{}) error   { return nil }
func (c txCollecting) RetainsNoRecords() bool          { return c.s.copies }

// transactional returns the exactly-once sink that writes into s.
func (s collectingSink) transactional() connector.Sink[*int] {
	return connector.TwoPhase(func(connector.WriterContext) (connector.TwoPhaseCommitter[*int, struct{}], error) {
		return txCollecting{s}, nil
	})
}

func newCollectingSink(copies bool) collectingSink {
	return collectingSink{copies: copies, mu: &sync.Mutex{}, ptrs: new([]*int), vals: new([]int)}
}

// TestRecordReuse checks when eddy lets a source's reader reuse its
// records' memory: only when every output of the source is chained to a
// sink whose writer keeps nothing of the records. In every case the sinks
// must receive every number once, which a reader reusing memory that a
// sink still held would break.
func TestRecordReuse(t *testing.T) {
	const n = 1000
	cases := []struct {
		name  string
		build func(src *eddy.Stream[*int]) []collectingSink
		reuse bool
	}{
		{"a chained sink that keeps nothing", func(src *eddy.Stream[*int]) []collectingSink {
			s := newCollectingSink(true)
			eddy.WriteTo[*int](src, "copies", s)
			return []collectingSink{s}
		}, true},
		{"a sink that keeps the records", func(src *eddy.Stream[*int]) []collectingSink {
			s := newCollectingSink(false)
			eddy.WriteTo[*int](src, "keeps", s)
			return []collectingSink{s}
		}, false},
		{"an exactly-once sink whose committer keeps nothing", func(src *eddy.Stream[*int]) []collectingSink {
			s := newCollectingSink(true)
			eddy.WriteTo(src, "copies", s.transactional())
			return []collectingSink{s}
		}, true},
		{"an exactly-once sink whose committer keeps the records", func(src *eddy.Stream[*int]) []collectingSink {
			s := newCollectingSink(false)
			eddy.WriteTo(src, "keeps", s.transactional())
			return []collectingSink{s}
		}, false},
		{"a Map before the sink", func(src *eddy.Stream[*int]) []collectingSink {
			s := newCollectingSink(true)
			eddy.WriteTo(eddy.Map(src, func(p *int) *int { return p }), "copies", s)
			return []collectingSink{s}
		}, false},
		{"a sink at another parallelism", func(src *eddy.Stream[*int]) []collectingSink {
			s := newCollectingSink(true)
			eddy.WriteTo[*int](src, "copies", s).Parallelism(2)
			return []collectingSink{s}
		}, false},
		{"two sinks, one keeping the records", func(src *eddy.Stream[*int]) []collectingSink {
			a, b := newCollectingSink(true), newCollectingSink(false)
			eddy.WriteTo[*int](src, "copies", a)
			eddy.WriteTo[*int](src, "keeps", b)
			return []collectingSink{a, b}
		}, false},
		{"two sinks that keep nothing", func(src *eddy.Stream[*int]) []collectingSink {
			a, b := newCollectingSink(true), newCollectingSink(true)
			eddy.WriteTo[*int](src, "copies", a)
			eddy.WriteTo[*int](src, "copies too", b)
			return []collectingSink{a, b}
		}, true},
	}
	want := make([]int, n)
	for i := range want {
		want[i] = i
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runReuse(t, n, func(s reuseSource) connector.Source[*int] { return s }, c.build, c.reuse, want, fmt.Sprintf("0 … %d once each", n-1))
		})
	}
}

// runReuse runs the job that build makes over a source of the numbers
// below n (source turns a reuseSource into it), and checks that its
// readers were told they may reuse their records if and only if reuse, and
// that every sink received want (wantDesc in words).
func runReuse[T any](t *testing.T, n int, source func(reuseSource) connector.Source[T], build func(*eddy.Stream[T]) []collectingSink, reuse bool, want []int, wantDesc string) {
	t.Helper()
	var reused, readers atomic.Int32
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithBatchSize(16))
	src := eddy.FromSource[T](env, "numbers", source(reuseSource{n: n, perRead: 7, reused: &reused, readers: &readers}), eddy.NoWatermarks[T]())
	sinks := build(src)
	if err := env.Execute(context.Background(), "reuse"); err != nil {
		t.Fatal(err)
	}
	if got := reused.Load() > 0; got != reuse || readers.Load() == 0 {
		t.Errorf("%d of %d readers were told they may reuse records; want reuse %v", reused.Load(), readers.Load(), reuse)
	}
	for k, s := range sinks {
		if got := s.values(); !slices.Equal(got, want) {
			t.Errorf("sink %d received %d values %v…; want %s", k, len(got), got[:min(len(got), 20)], wantDesc)
		}
	}
}

// TestTransformInSourceReusing checks that a transform in the source is
// told it may reuse memory when the source's records reach only a sink
// that keeps nothing, and that its rewind runs before each read.
func TestTransformInSourceReusing(t *testing.T) {
	const n = 500
	for _, copies := range []bool{true, false} {
		var reused, readers, rewinds atomic.Int32
		var told []bool
		var mu sync.Mutex
		env := eddy.NewEnvironment(eddy.WithParallelism(1))
		src := eddy.FromSource[*int](env, "numbers", reuseSource{n: n, perRead: 5, reused: &reused, readers: &readers}, eddy.NoWatermarks[*int](),
			eddy.TransformInSourceReusing(func(reuse bool) (func(*int) (*int, bool), func()) {
				mu.Lock()
				told = append(told, reuse)
				mu.Unlock()
				// Doubles into a buffer of its own, reused when allowed.
				buf, used := make([]int, 0, 8), 0
				fn := func(p *int) (*int, bool) {
					if !reuse || used == cap(buf) {
						buf, used = make([]int, 8), 0
					}
					buf = buf[:cap(buf)]
					buf[used] = 2 * *p
					used++
					return &buf[used-1], true
				}
				return fn, func() { rewinds.Add(1); used = 0 }
			}))
		s := newCollectingSink(copies)
		eddy.WriteTo[*int](src, "sink", s)
		if err := env.Execute(context.Background(), "reuse"); err != nil {
			t.Fatal(err)
		}
		if len(told) == 0 || told[0] != copies {
			t.Errorf("sink copies %v: the transform was told reuse %v", copies, told)
		}
		if copies && rewinds.Load() < n/5 {
			t.Errorf("rewind ran %d times for %d reads of 5 records", rewinds.Load(), n/5)
		}
		if !copies && rewinds.Load() != 0 {
			t.Errorf("rewind ran %d times though the sink keeps the records", rewinds.Load())
		}
		got := s.values()
		if len(got) != n {
			t.Fatalf("sink copies %v: %d records, want %d", copies, len(got), n)
		}
		for i, v := range got {
			if v != 2*i {
				t.Fatalf("sink copies %v: record %d is %d, want %d", copies, i, v, 2*i)
			}
		}
	}
}
