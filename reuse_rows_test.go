package eddy_test

import (
	"context"
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
			var reused, readers atomic.Int32
			env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithBatchSize(16))
			src := eddy.FromSource[changelog.Change[*int]](env, "numbers", changeSource{reuseSource{n: n, perRead: 7, reused: &reused, readers: &readers}}, eddy.NoWatermarks[changelog.Change[*int]]())
			sinks := c.build(src)
			if err := env.Execute(context.Background(), "reuse"); err != nil {
				t.Fatal(err)
			}
			if got := reused.Load() > 0; got != c.reuse || readers.Load() == 0 {
				t.Errorf("%d of %d readers were told they may reuse records; want reuse %v", reused.Load(), readers.Load(), c.reuse)
			}
			for k, s := range sinks {
				if got := s.values(); !slices.Equal(got, want) {
					t.Errorf("sink %d received %d values %v…; want the even numbers below %d once each", k, len(got), got[:min(len(got), 20)], n)
				}
			}
		})
	}
}
