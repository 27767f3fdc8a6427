package eddy_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

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
			got := finalValues(sink.Committed())
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

// TestCopyingKeptRowsRetracting ranks a retracting changelog whose rows are
// written into memory that is overwritten after every batch
// (eddy.MapRowsReusing), read without an exchange at parallelism 1 (where
// every stream is in the subtasks of its keys). With few distinct rows, many
// copies of each lie beyond the top N, in the operator's map of rows, where
// retractions look them up; most rows are retracted in the end, so that
// the top is made of those. The top-N (eddy.CopyingKeptRows) must keep and
// look up copies only. The final top-N table must match the brute force on
// both state backends.
func TestCopyingKeptRowsRetracting(t *testing.T) {
	const n, groups, rows = 2, 3, 3000
	rng := rand.New(rand.NewPCG(5, 6))
	// Rows "g:v" of few values; a retraction takes back a row added
	// before.
	var input []changelog.Change[string]
	var live []string
	for range rows {
		if len(live) > 0 && rng.IntN(3) == 0 {
			i := rng.IntN(len(live))
			input = append(input, changelog.Of(changelog.Delete, live[i]))
			live = append(live[:i], live[i+1:]...)
			continue
		}
		r := fmt.Sprintf("%d:%d", rng.IntN(groups), rng.IntN(6))
		input = append(input, changelog.Of(changelog.Insert, r))
		live = append(live, r)
	}
	// Then most rows are retracted, so that the top comes from the rows
	// that were beyond it.
	for len(live) > 10 {
		i := rng.IntN(len(live))
		input = append(input, changelog.Of(changelog.Delete, live[i]))
		live = append(live[:i], live[i+1:]...)
	}
	less := func(a, b string) bool { return a > b }
	var want []string
	for g := range groups {
		var rs []string
		for _, r := range live {
			if r[0] == byte('0'+g) {
				rs = append(rs, r)
			}
		}
		slices.SortFunc(rs, func(a, b string) int { return strings.Compare(b, a) })
		want = append(want, rs[:min(n, len(rs))]...)
	}
	slices.Sort(want)
	for _, backend := range relBackends {
		t.Run(backend, func(t *testing.T) {
			opts := []eddy.Option{eddy.WithParallelism(1), eddy.WithBatchSize(16)}
			if backend == "pebble" {
				opts = append(opts, eddy.WithStateBackend(eddy.PebbleState(t.TempDir(), 64<<20)))
			}
			env := eddy.NewEnvironment(opts...)
			src := eddy.AsChangelog(eddy.FromSlice(env, input, eddy.NoWatermarks[changelog.Change[string]]()), changelog.Retract)
			var rewinds atomic.Int32
			reused := eddy.MapRowsReusing(src, func(reuse bool) (func(string) string, func()) {
				buf := make([]byte, 0, 4096)
				return func(r string) string {
						if len(buf)+len(r) > cap(buf) {
							buf = make([]byte, 0, cap(buf))
						}
						buf = append(buf, r...)
						return unsafe.String(&buf[len(buf)-len(r)], len(r))
					}, func() {
						rewinds.Add(1)
						// Overwrite what the batch's rows pointed at.
						for i := range buf {
							buf[i] = '#'
						}
						buf = buf[:0]
					}
			})
			byGroup := eddy.ReinterpretAsKeyed(reused, func(c changelog.Change[string]) int { return int(c.Row[0] - '0') })
			top := eddy.TopN(byGroup, n, less, eddy.CopyingKeptRows(strings.Clone))
			sink := connectortest.NewMemorySink[string]()
			eddy.WriteTo(eddy.Map(top, func(c changelog.Change[string]) string { return c.Kind.String() + " " + c.Row }), "sink", sink.Sink())
			if err := env.Execute(context.Background(), "retracting"); err != nil {
				t.Fatal(err)
			}
			if rewinds.Load() == 0 {
				t.Fatal("the map was not told to reuse its memory: the test needs it")
			}
			got := finalValues(sink.Committed())
			if !slices.Equal(got, want) {
				t.Errorf("final top-N table %v, want %v", got, want)
			}
		})
	}
}

// finalValues applies changes rendered as "kind value" (+I or -D) and
// returns the values of the final table, sorted.
func finalValues(changes []string) []string {
	table := map[string]int{}
	for _, ch := range changes {
		kind, v, _ := strings.Cut(ch, " ")
		if kind == changelog.Insert.String() {
			table[v]++
		} else {
			table[v]--
		}
	}
	var out []string
	for v, count := range table {
		for range count {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}
