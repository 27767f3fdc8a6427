package eddy_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector/connectortest"
)

// TestReinterpretAsKeyed ranks the results of a join in the join's
// subtasks, keyed by the join's key without an exchange
// (eddy.ReinterpretAsKeyed). A top-N that copies the rows it keeps
// (eddy.CopyingKeptRows) keeps nothing of its input, so the join, chained
// to it, is told it may write its results into memory it reuses; without
// the copies it is not. Either way the final top-N table must be right,
// which a top-N keeping rows in reused memory would break.
func TestReinterpretAsKeyed(t *testing.T) {
	const n, keys = 200, 10
	// The top 2 of key k: the largest left and right values of the key
	// (a*1000 + b), then the largest left with the second right.
	var want []string
	for k := range keys {
		want = append(want, fmt.Sprint((n-keys+k)*1000+n-keys+k), fmt.Sprint((n-keys+k)*1000+n-2*keys+k))
	}
	slices.Sort(want)
	for _, c := range []struct {
		p       int
		copying bool
	}{{1, true}, {1, false}, {2, true}} {
		t.Run(fmt.Sprintf("p=%d, copying kept rows: %v", c.p, c.copying), func(t *testing.T) {
			var reused, readers atomic.Int32
			var mem reusingMemory
			env := eddy.NewEnvironment(eddy.WithParallelism(c.p), eddy.WithBatchSize(16))
			side := func(name string) *eddy.KeyedStream[int, changelog.Change[*int]] {
				s := eddy.FromSource[changelog.Change[*int]](env, name, changeSource{reuseSource{n: n, perRead: 7, reused: &reused, readers: &readers}}, eddy.NoWatermarks[changelog.Change[*int]]())
				return eddy.GroupBy(s, func(p *int) int { return *p % keys })
			}
			joined := eddy.Join[int, *int, *int, *int](side("left"), side("right"), eddy.InnerJoin, nil, eddy.JoinOutputReusing(func(reuse bool) (func(a, b **int) *int, func()) {
				put, rewind := mem.start(reuse)
				return func(a, b **int) *int { return put(**a*1000 + **b) }, rewind
			}))
			var opts []eddy.TableOption
			if c.copying {
				opts = append(opts, eddy.CopyingKeptRows(func(p *int) *int { v := *p; return &v }))
			}
			byKey := eddy.ReinterpretAsKeyed(eddy.AsChangelog(joined, changelog.InsertOnly), func(c changelog.Change[*int]) int { return *c.Row / 1000 % keys })
			top := eddy.TopN(byKey, 2, func(a, b *int) bool { return *a > *b }, opts...)
			sink := connectortest.NewMemorySink[string]()
			eddy.WriteTo(eddy.Map(top, func(c changelog.Change[*int]) string { return fmt.Sprintf("%v %d", c.Kind, *c.Row) }), "sink", sink.Sink())
			if err := env.Execute(context.Background(), "reinterpret"); err != nil {
				t.Fatal(err)
			}
			if got := mem.told.Load() > 0; got != c.copying {
				t.Errorf("the join was told to reuse its memory: %v; want %v", got, c.copying)
			}
			table := map[string]int{}
			for _, ch := range sink.Committed() {
				kind, v, _ := strings.Cut(ch, " ")
				if kind == changelog.Insert.String() {
					table[v]++
				} else {
					table[v]--
				}
			}
			var got []string
			for v, count := range table {
				for range count {
					got = append(got, v)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("final top-N table %v, want %v", got, want)
			}
		})
	}
}

// TestReinterpretAsKeyedParallelism checks that an operator reading a
// stream reinterpreted as keyed with another parallelism than the stream's
// fails the job before it starts, naming the cause.
func TestReinterpretAsKeyedParallelism(t *testing.T) {
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	// FromSlice of changes runs in one subtask, and MapRows with its
	// input's parallelism.
	in := eddy.FromSlice(env, []changelog.Change[int]{changelog.Of(changelog.Insert, 1)}, eddy.NoWatermarks[changelog.Change[int]]())
	out := eddy.AsChangelog(eddy.MapRows(in, func(v int) int { return v }), changelog.InsertOnly)
	top := eddy.TopN(eddy.ReinterpretAsKeyed(out, func(c changelog.Change[int]) int { return c.Row }), 1, func(a, b int) bool { return a < b }).Parallelism(2)
	eddy.WriteTo(top, "sink", connectortest.NewMemorySink[changelog.Change[int]]().Sink())
	err := env.Execute(context.Background(), "mismatch")
	if err == nil || !strings.Contains(err.Error(), "ReinterpretAsKeyed") {
		t.Fatalf("error %v, want one naming eddy.ReinterpretAsKeyed", err)
	}
}
