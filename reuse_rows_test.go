package eddy_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// changeSource is reuseSource emitting its numbers as insertions.
type changeSource struct{ reuseSource }

func (s changeSource) NewReader(ctx connector.ReaderContext) (connector.Reader[changelog.Change[*int]], error) {
	r, err := s.reuseSource.NewReader(ctx)
	if err != nil {
		return nil, err
	}
	return &changeReader{r.(*reuseReader)}, nil
}

type changeReader struct{ *reuseReader }

func (r *changeReader) Read(out connector.Output[changelog.Change[*int]]) error {
	r.step(func() (func(), func(*int)) {
		so := out.Split("only")
		return so.Finish, func(p *int) { so.Emit(changelog.Of(changelog.Insert, p)) }
	})
	return nil
}

// TestRecordReuseThroughRows checks that a source may reuse its records'
// memory when its changes reach, through filters that keep nothing
// (eddy.FilterRowsNonRetaining), maps that copy their rows
// (eddy.MapRowsCopying), and not when a filter's predicate may keep rows, a
// map passes rows on as they are or another reader keeps them. The sink keeps the pointers it gets and reads
// them at the end, so a reader reusing memory that is still read gives
// wrong values.
func TestRecordReuseThroughRows(t *testing.T) {
	const n = 1000
	even := func() func(*int) bool { return func(p *int) bool { return *p%2 == 0 } }
	copyRow := func() func(*int) *int { return func(p *int) *int { v := *p; return &v } }
	same := func() func(*int) *int { return func(p *int) *int { return p } }
	toSink := func(s *eddy.Stream[changelog.Change[*int]], name string) collectingSink {
		sink := newCollectingSink(false)
		eddy.WriteTo(eddy.Map(s, func(c changelog.Change[*int]) *int { return c.Row }), name, sink)
		return sink
	}
	cases := []struct {
		name  string
		build func(src *eddy.Stream[changelog.Change[*int]]) []collectingSink
		reuse bool
	}{
		{"a filter, then a map that copies", func(src *eddy.Stream[changelog.Change[*int]]) []collectingSink {
			return []collectingSink{toSink(eddy.MapRowsCopying(eddy.FilterRowsNonRetaining(src, even), copyRow), "copies")}
		}, true},
		{"two filters, then a map that copies", func(src *eddy.Stream[changelog.Change[*int]]) []collectingSink {
			f := eddy.FilterRowsNonRetaining(eddy.FilterRowsNonRetaining(src, even), func() func(*int) bool { return func(*int) bool { return true } })
			return []collectingSink{toSink(eddy.MapRowsCopying(f, copyRow), "copies")}
		}, true},
		{"a filter, then a map that passes rows on", func(src *eddy.Stream[changelog.Change[*int]]) []collectingSink {
			return []collectingSink{toSink(eddy.MapRowsEach(eddy.FilterRowsNonRetaining(src, even), same), "keeps")}
		}, false},
		{"a filter whose predicate may keep rows, then a map that copies", func(src *eddy.Stream[changelog.Change[*int]]) []collectingSink {
			return []collectingSink{toSink(eddy.MapRowsCopying(eddy.FilterRowsEach(src, even), copyRow), "copies")}
		}, false},
		{"a filter alone", func(src *eddy.Stream[changelog.Change[*int]]) []collectingSink {
			return []collectingSink{toSink(eddy.FilterRowsNonRetaining(src, even), "keeps")}
		}, false},
		{"a map that copies and a reader that keeps the rows", func(src *eddy.Stream[changelog.Change[*int]]) []collectingSink {
			f := eddy.FilterRowsNonRetaining(src, even)
			return []collectingSink{toSink(eddy.MapRowsCopying(f, copyRow), "copies"), toSink(f, "keeps")}
		}, false},
	}
	var want []int
	for i := 0; i < n; i += 2 {
		want = append(want, i)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runReuse(t, n, func(s reuseSource) connector.Source[changelog.Change[*int]] { return changeSource{s} }, c.build, c.reuse, want, fmt.Sprintf("the even numbers below %d once each", n))
		})
	}
}

// changeCollectingSink is collectingSink for changes: it keeps their rows.
type changeCollectingSink struct{ collectingSink }

func (s changeCollectingSink) NewWriter(connector.WriterContext) (connector.Writer[changelog.Change[*int]], error) {
	return s, nil
}

func (s changeCollectingSink) Write(records []changelog.Change[*int], ts []int64) error {
	rows := make([]*int, len(records))
	for i, r := range records {
		rows[i] = r.Row
	}
	return s.collectingSink.Write(rows, ts)
}

// reusingMemory is the memory of an operator's function that writes its
// values into memory it reuses: put writes into memory that rewind hands
// out again, and told and rewinds count the subtasks told they may reuse
// and the rewinds. Room for more than a batch: rewound, the next batch
// overwrites the values of the last.
type reusingMemory struct {
	told, rewinds atomic.Int32
}

// start returns a subtask's put and rewind.
func (m *reusingMemory) start(reuse bool) (put func(int) *int, rewind func()) {
	if reuse {
		m.told.Add(1)
	}
	buf := make([]int, 0, 64)
	put = func(v int) *int {
		if len(buf) == cap(buf) {
			buf = make([]int, 0, cap(buf))
		}
		buf = append(buf, v)
		return &buf[len(buf)-1]
	}
	return put, func() { m.rewinds.Add(1); buf = buf[:0] }
}

// check checks that what wrote into m was told it may reuse its memory,
// and had it rewound, if and only if reuse, and that the sink received
// want.
func (m *reusingMemory) check(t *testing.T, what string, reuse bool, sink changeCollectingSink, want []int) {
	t.Helper()
	if got := m.told.Load() > 0; got != reuse {
		t.Errorf("the %s was told to reuse its memory: %v; want %v", what, got, reuse)
	}
	if got := m.rewinds.Load() > 0; got != reuse {
		t.Errorf("the %s's memory was rewound %d times; want rewinds %v", what, m.rewinds.Load(), reuse)
	}
	if got := sink.values(); !slices.Equal(got, want) {
		t.Errorf("the sink received %d values %v…; want %d: %v…", len(got), got[:min(len(got), 20)], len(want), want[:min(len(want), 20)])
	}
}

// numbers returns f(i) for i below n.
func numbers(n int, f func(int) int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// TestMapRowsReusing checks that a map writing its rows into memory it
// reuses (eddy.MapRowsReusing) is told it may, and has its memory rewound
// after each batch, only when the operators reading its rows keep nothing
// of them: a sink that copies, through a filter that keeps nothing; not a
// sink that keeps the pointers it gets and reads them at the end, which
// would then read overwritten values.
func TestMapRowsReusing(t *testing.T) {
	const n = 1000
	even := func() func(*int) bool { return func(p *int) bool { return *p%2 == 0 } }
	cases := []struct {
		name           string
		copies, filter bool
	}{
		{"a sink that copies", true, false},
		{"a filter that keeps nothing, then a sink that copies", true, true},
		{"a sink that keeps the rows", false, false},
		{"a filter that keeps nothing, then a sink that keeps the rows", false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var reused, readers atomic.Int32
			var mem reusingMemory
			env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithBatchSize(16))
			src := eddy.FromSource[changelog.Change[*int]](env, "numbers", changeSource{reuseSource{n: n, perRead: 7, reused: &reused, readers: &readers}}, eddy.NoWatermarks[changelog.Change[*int]]())
			m := eddy.MapRowsReusing(src, func(reuse bool) (func(*int) *int, func()) {
				put, rewind := mem.start(reuse)
				return func(p *int) *int { return put(*p) }, rewind
			})
			want := numbers(n, func(i int) int { return i })
			if c.filter {
				m = eddy.FilterRowsNonRetaining(m, even)
				want = slices.DeleteFunc(want, func(v int) bool { return v%2 != 0 })
			}
			sink := changeCollectingSink{newCollectingSink(c.copies)}
			eddy.WriteTo(m, "sink", sink)
			if err := env.Execute(context.Background(), "reuse"); err != nil {
				t.Fatal(err)
			}
			mem.check(t, "map", c.copies, sink, want)
		})
	}
}

// TestJoinOutputReusing checks that a join whose results are written into
// memory it reuses (eddy.JoinOutputReusing), an inner join or a semi join,
// is told it may, and has its memory rewound after each batch, only when
// the sink reading its results keeps nothing of them; a sink that keeps
// the pointers it gets would read overwritten values.
func TestJoinOutputReusing(t *testing.T) {
	const n = 500
	for _, kind := range []eddy.JoinKind{eddy.InnerJoin, eddy.LeftSemiJoin} {
		for _, copies := range []bool{true, false} {
			t.Run(fmt.Sprintf("%v, a sink that copies: %v", kind, copies), func(t *testing.T) {
				var reused, readers atomic.Int32
				var mem reusingMemory
				env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithBatchSize(16))
				side := func(name string) *eddy.KeyedStream[int, changelog.Change[*int]] {
					s := eddy.FromSource[changelog.Change[*int]](env, name, changeSource{reuseSource{n: n, perRead: 7, reused: &reused, readers: &readers}}, eddy.NoWatermarks[changelog.Change[*int]]())
					return eddy.GroupBy(s, func(p *int) int { return *p })
				}
				out := eddy.Join[int, *int, *int, *int](side("left"), side("right"), kind, nil, eddy.JoinOutputReusing(func(reuse bool) (func(a, b **int) *int, func()) {
					put, rewind := mem.start(reuse)
					return func(a, b **int) *int {
						if b == nil {
							return put(**a)
						}
						return put(**a + **b)
					}, rewind
				}))
				sink := changeCollectingSink{newCollectingSink(copies)}
				eddy.WriteTo(out, "sink", sink)
				if err := env.Execute(context.Background(), "reuse"); err != nil {
					t.Fatal(err)
				}
				// An inner join's result is the sum of the pair, a semi
				// join's its left row.
				want := numbers(n, func(i int) int { return 2 * i })
				if kind == eddy.LeftSemiJoin {
					want = numbers(n, func(i int) int { return i })
				}
				mem.check(t, "join", copies, sink, want)
			})
		}
	}
}

// TestLookupOutputReusing checks that a lookup join whose results are
// written into memory it reuses (eddy.LookupOutputReusing), with
// synchronous lookups or lookups on goroutines of their own, is told it
// may, and has its memory rewound after each batch, only when the sink
// reading its results keeps nothing of them.
func TestLookupOutputReusing(t *testing.T) {
	const n = 500
	for _, sync := range []bool{true, false} {
		for _, copies := range []bool{true, false} {
			t.Run(fmt.Sprintf("synchronous: %v, a sink that copies: %v", sync, copies), func(t *testing.T) {
				var reused, readers atomic.Int32
				var mem reusingMemory
				env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithBatchSize(16))
				src := eddy.FromSource[changelog.Change[*int]](env, "numbers", changeSource{reuseSource{n: n, perRead: 7, reused: &reused, readers: &readers}}, eddy.NoWatermarks[changelog.Change[*int]]())
				opts := []eddy.LookupOption{eddy.LookupOutputReusing(func(reuse bool) (func(row *int, m *int) *int, func()) {
					put, rewind := mem.start(reuse)
					return func(row *int, m *int) *int { return put(*row + *m) }, rewind
				})}
				if sync {
					opts = append(opts, eddy.LookupSynchronous())
				}
				out := eddy.LookupJoinEach(src, func() eddy.LookupFuncs[*int, int, int, *int] {
					return eddy.LookupFuncs[*int, int, int, *int]{
						Key:    func(p *int) int { return *p },
						Lookup: func(_ context.Context, k int) ([]int, error) { return []int{10 * k}, nil },
					}
				}, eddy.InnerJoin, opts...)
				sink := changeCollectingSink{newCollectingSink(copies)}
				eddy.WriteTo(out, "sink", sink)
				if err := env.Execute(context.Background(), "reuse"); err != nil {
					t.Fatal(err)
				}
				mem.check(t, "lookup join", copies, sink, numbers(n, func(i int) int { return 11 * i }))
			})
		}
	}
}
