package eddy_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
)

// dimRow is a row of the external table of the lookup join tests.
type dimRow struct {
	K, Name int64
}

// lookedUp is a result row of the lookup join tests.
type lookedUp struct {
	Row   relRow
	Dim   dimRow
	Found bool
}

func lookedUpOf(r relRow, d *dimRow) lookedUp {
	if d == nil {
		return lookedUp{Row: r}
	}
	return lookedUp{Row: r, Dim: *d, Found: true}
}

// fakeTable is an external table for lookups: fixed rows by key, with
// counters of calls and of calls in flight, an optional delay per call, and
// an optional failure.
type fakeTable struct {
	rows     map[int64][]dimRow
	delay    time.Duration
	fail     func(key int64, attempt int64) error
	calls    atomic.Int64
	inFlight atomic.Int64
	maxIn    atomic.Int64
}

// newFakeTable returns a table with 0 to 2 rows for each key below keys.
func newFakeTable(rng *rand.Rand, keys int) *fakeTable {
	t := &fakeTable{rows: map[int64][]dimRow{}}
	for k := range int64(keys) {
		for i := range rng.Int64N(3) {
			t.rows[k] = append(t.rows[k], dimRow{K: k, Name: k*10 + i})
		}
	}
	return t
}

func (t *fakeTable) lookup(ctx context.Context, key int64) ([]dimRow, error) {
	n := t.calls.Add(1)
	in := t.inFlight.Add(1)
	defer t.inFlight.Add(-1)
	for {
		m := t.maxIn.Load()
		if in <= m || t.maxIn.CompareAndSwap(m, in) {
			break
		}
	}
	if t.delay > 0 {
		select {
		case <-time.After(t.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if t.fail != nil {
		if err := t.fail(key, n); err != nil {
			return nil, err
		}
	}
	return t.rows[key], nil
}

// bruteLookup joins a final table with the fake table.
func bruteLookup(rows map[relRow]int, dims *fakeTable, kind eddy.JoinKind) map[lookedUp]int {
	out := map[lookedUp]int{}
	for r, n := range rows {
		ds := dims.rows[r.G]
		for i := range ds {
			out[lookedUpOf(r, &ds[i])] += n
		}
		if len(ds) == 0 && kind == eddy.LeftJoin {
			out[lookedUpOf(r, nil)] += n
		}
	}
	return out
}

// TestLookupJoinMatchesBruteForce joins a random changelog with a fake
// table whose lookups take a while, so that lookups are in flight when
// checkpoint barriers come, with a failure and a restore from a checkpoint
// in the middle, with and without a cache, and compares the final result
// table with the join of the final input table.
func TestLookupJoinMatchesBruteForce(t *testing.T) {
	for _, backend := range relBackends {
		for _, kind := range []eddy.JoinKind{eddy.InnerJoin, eddy.LeftJoin} {
			for _, mode := range []struct{ cached, sync bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
				cached := mode.cached
				t.Run(fmt.Sprintf("%s/%v/cache=%v/sync=%v", backend, kind, cached, mode.sync), func(t *testing.T) {
					t.Parallel()
					rng := rand.New(rand.NewPCG(21, uint64(kind)))
					dims := newFakeTable(rng, 40)
					dims.delay = 200 * time.Microsecond
					input := randomChangelog(rng, 3000, newRowIn(rng, 40))
					stats := &eddy.LookupStats{}
					opts := []eddy.LookupOption{eddy.LookupConcurrency(8), eddy.LookupStatsTo(stats)}
					if cached {
						opts = append(opts, eddy.LookupCache(20, 0))
					}
					if mode.sync {
						opts = append(opts, eddy.LookupSynchronous())
					}
					out := runRelational(t, relRun{backend: backend, failAfter: 1500, parallelism: 2},
						func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[lookedUp]] {
							rows := relInput(env, "rows", input, hook)
							return eddy.LookupJoin(rows, func(r relRow) int64 { return r.G }, dims.lookup, kind, lookedUpOf, opts...)
						})
					got := finalTable(t, out)
					if d := diffTables(got, bruteLookup(table(t, input), dims, kind)); d != "" {
						t.Fatalf("result table differs from brute force:\n%s", d)
					}
					if n := stats.Hits() + stats.Misses(); n < int64(len(input)) {
						t.Fatalf("hits %d + misses %d < %d input changes", stats.Hits(), stats.Misses(), len(input))
					}
					if stats.Attempts() != dims.calls.Load() {
						t.Fatalf("stats count %d attempts, the table %d calls", stats.Attempts(), dims.calls.Load())
					}
					// Synchronous lookups run one at a time on each of the
					// two subtasks' goroutines.
					if mode.sync && dims.maxIn.Load() > 2 {
						t.Fatalf("%d synchronous lookups ran at once on 2 subtasks", dims.maxIn.Load())
					}
					if cached && stats.Hits() == 0 {
						t.Fatalf("no cache hits")
					}
					if !cached && stats.Hits() != 0 {
						t.Fatalf("%d cache hits without a cache", stats.Hits())
					}
				})
			}
		}
	}
}

// runLookup runs a lookup join of input at parallelism 1, without
// checkpoints, and returns its output in order.
func runLookup(t *testing.T, input []changelog.Change[relRow], dims *fakeTable, kind eddy.JoinKind, opts ...eddy.LookupOption) ([]changelog.Change[lookedUp], error) {
	t.Helper()
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	src := eddy.AsChangelog(eddy.FromSlice(env, input, eddy.NoWatermarks[changelog.Change[relRow]]()), changelog.Retract)
	sink := newMemSink[changelog.Change[lookedUp]]()
	eddy.WriteTo(eddy.LookupJoin(src, func(r relRow) int64 { return r.G }, dims.lookup, kind, lookedUpOf, opts...), "collect", sink)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := env.Execute(ctx, t.Name())
	var out []changelog.Change[lookedUp]
	for _, p := range sink.committed() {
		out = append(out, p...)
	}
	return out, err
}

// TestLookupJoinCacheCounts checks the cache's counts: with room for every
// key, each key is looked up once (later changes of a key hit the cache or
// the lookup in flight), and without a cache every change is a lookup.
func TestLookupJoinCacheCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	dims := newFakeTable(rng, 30)
	input := insertOnly(1000, newRowIn(rng, 30))
	keys := map[int64]bool{}
	for _, c := range input {
		keys[c.Row.G] = true
	}
	stats := &eddy.LookupStats{}
	out, err := runLookup(t, input, dims, eddy.LeftJoin, eddy.LookupCache(1000, time.Hour), eddy.LookupStatsTo(stats))
	if err != nil {
		t.Fatal(err)
	}
	if d := diffTables(table(t, out), bruteLookup(table(t, input), dims, eddy.LeftJoin)); d != "" {
		t.Fatalf("result table differs from brute force:\n%s", d)
	}
	if stats.Misses() != int64(len(keys)) || stats.Hits() != int64(len(input)-len(keys)) || dims.calls.Load() != int64(len(keys)) {
		t.Fatalf("misses %d, hits %d, table calls %d; want %d, %d, %d", stats.Misses(), stats.Hits(), dims.calls.Load(), len(keys), len(input)-len(keys), len(keys))
	}

	// A cache of 2 rows keeps little: most changes miss.
	dims.calls.Store(0)
	small := &eddy.LookupStats{}
	if _, err := runLookup(t, input, dims, eddy.LeftJoin, eddy.LookupCache(2, 0), eddy.LookupStatsTo(small)); err != nil {
		t.Fatal(err)
	}
	if small.Misses() <= stats.Misses() || small.Misses()+small.Hits() != int64(len(input)) {
		t.Fatalf("with a small cache: misses %d, hits %d; want more misses than %d, and %d in all", small.Misses(), small.Hits(), stats.Misses(), len(input))
	}

	dims.calls.Store(0)
	none := &eddy.LookupStats{}
	if _, err := runLookup(t, input, dims, eddy.LeftJoin, eddy.LookupStatsTo(none)); err != nil {
		t.Fatal(err)
	}
	if none.Misses() != int64(len(input)) || none.Hits() != 0 || dims.calls.Load() != int64(len(input)) {
		t.Fatalf("without a cache: misses %d, hits %d, table calls %d; want %d, 0, %d", none.Misses(), none.Hits(), dims.calls.Load(), len(input), len(input))
	}
}

// TestLookupJoinConcurrentInOrder checks that lookups overlap (several in
// flight at once) and that the results keep the order of the input.
func TestLookupJoinConcurrentInOrder(t *testing.T) {
	dims := &fakeTable{rows: map[int64][]dimRow{}, delay: time.Millisecond}
	for k := range int64(50) {
		dims.rows[k] = []dimRow{{K: k, Name: k}}
	}
	// Later keys answer faster, so that lookups complete out of order.
	var input []changelog.Change[relRow]
	for i := range int64(400) {
		input = append(input, changelog.InsertOf(relRow{ID: i, G: i % 50}))
	}
	stats := &eddy.LookupStats{}
	out, err := runLookup(t, input, dims, eddy.InnerJoin, eddy.LookupConcurrency(8), eddy.LookupStatsTo(stats))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(input) {
		t.Fatalf("%d results, want %d", len(out), len(input))
	}
	for i, c := range out {
		if c.Kind != changelog.Insert || c.Row.Row.ID != int64(i) {
			t.Fatalf("result %d is %v; want +I of input row %d: results are out of order", i, c, i)
		}
	}
	if dims.maxIn.Load() < 2 || stats.MaxInFlight() < 2 {
		t.Fatalf("at most %d lookups in flight at once (stats: %d); want several", dims.maxIn.Load(), stats.MaxInFlight())
	}
	if stats.MaxInFlight() > 8 {
		t.Fatalf("%d lookups in flight at once, above the concurrency of 8", stats.MaxInFlight())
	}
}

// TestLookupJoinUpdates checks that an update of an input row comes out as
// updates of its result rows, with lookups in flight and with synchronous
// ones.
func TestLookupJoinUpdates(t *testing.T) {
	dims := &fakeTable{rows: map[int64][]dimRow{1: {{K: 1, Name: 10}, {K: 1, Name: 11}}}}
	input := []changelog.Change[relRow]{
		changelog.InsertOf(relRow{ID: 1, G: 1, V: 1}),
		changelog.Of(changelog.UpdateBefore, relRow{ID: 1, G: 1, V: 1}),
		changelog.Of(changelog.UpdateAfter, relRow{ID: 1, G: 1, V: 2}),
	}
	for _, opt := range []eddy.LookupOption{eddy.LookupConcurrency(4), eddy.LookupSynchronous()} {
		out, err := runLookup(t, input, dims, eddy.InnerJoin, opt)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, c := range out {
			kinds = append(kinds, c.Kind.String())
		}
		if got := strings.Join(kinds, " "); got != "+I +I -U +U -U +U" {
			t.Fatalf("kinds %q, want %q: %v", got, "+I +I -U +U -U +U", out)
		}
		checkPairs(t, out)
		if d := diffTables(table(t, out), bruteLookup(table(t, input), dims, eddy.InnerJoin)); d != "" {
			t.Fatalf("result table differs:\n%s", d)
		}
	}
}

// TestLookupJoinFailures checks that a lookup that keeps failing fails the
// job with an error naming the key, after its retries, and that a lookup
// that takes too long times out.
func TestLookupJoinFailures(t *testing.T) {
	input := []changelog.Change[relRow]{changelog.InsertOf(relRow{ID: 1, G: 3}), changelog.InsertOf(relRow{ID: 2, G: 13})}
	t.Run("retries", func(t *testing.T) {
		dims := &fakeTable{rows: map[int64][]dimRow{}, fail: func(key, _ int64) error {
			if key == 13 {
				return errors.New("connection refused")
			}
			return nil
		}}
		stats := &eddy.LookupStats{}
		_, err := runLookup(t, input, dims, eddy.InnerJoin, eddy.LookupRetries(2, time.Millisecond), eddy.LookupStatsTo(stats))
		if err == nil || !strings.Contains(err.Error(), "key 13") || !strings.Contains(err.Error(), "3 attempt") || !strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("got %v, want an error naming key 13, the attempts and the cause", err)
		}
		if stats.Retries() != 2 {
			t.Fatalf("%d retries, want 2", stats.Retries())
		}
	})
	t.Run("synchronous", func(t *testing.T) {
		// A synchronous lookup that fails fails the job as an asynchronous
		// one does, after its retries.
		dims := &fakeTable{rows: map[int64][]dimRow{3: {{K: 3}}}, fail: func(key, _ int64) error {
			if key == 13 {
				return errors.New("table gone")
			}
			return nil
		}}
		stats := &eddy.LookupStats{}
		_, err := runLookup(t, input, dims, eddy.InnerJoin, eddy.LookupSynchronous(), eddy.LookupRetries(1, 0), eddy.LookupStatsTo(stats))
		if err == nil || !strings.Contains(err.Error(), "key 13") || !strings.Contains(err.Error(), "table gone") {
			t.Fatalf("got %v, want an error naming key 13 and the cause", err)
		}
		if stats.Retries() != 1 {
			t.Fatalf("%d retries, want 1", stats.Retries())
		}
	})
	t.Run("recovers", func(t *testing.T) {
		// The first call fails; its retry succeeds.
		dims := &fakeTable{rows: map[int64][]dimRow{3: {{K: 3}}, 13: {{K: 13}}}, fail: func(_, n int64) error {
			if n == 1 {
				return errors.New("transient")
			}
			return nil
		}}
		out, err := runLookup(t, input, dims, eddy.InnerJoin, eddy.LookupRetries(1, 0), eddy.LookupConcurrency(1))
		if err != nil || len(out) != 2 {
			t.Fatalf("got %v, %v; want 2 results", out, err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		block := make(chan struct{})
		defer close(block)
		dims := &fakeTable{rows: map[int64][]dimRow{}, fail: func(key, _ int64) error {
			if key == 13 {
				<-block // ignores its context
			}
			return nil
		}}
		_, err := runLookup(t, input, dims, eddy.InnerJoin, eddy.LookupTimeout(20*time.Millisecond))
		if err == nil || !strings.Contains(err.Error(), "key 13") || !strings.Contains(err.Error(), "timed out") {
			t.Fatalf("got %v, want an error naming key 13 that says it timed out", err)
		}
	})
}

// TestLookupJoinEachMakesFuncsPerSubtask checks that LookupJoinEach makes
// the functions once when the job is built and once for each subtask, that
// each subtask's rows go through functions of its own, and that the
// result is LookupJoin's.
func TestLookupJoinEachMakesFuncsPerSubtask(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	dims := newFakeTable(rng, 20)
	input := insertOnly(600, newRowIn(rng, 25))
	env := eddy.NewEnvironment(eddy.WithParallelism(3))
	src := eddy.Map(eddy.FromSlice(env, input, eddy.NoWatermarks[changelog.Change[relRow]]()),
		func(c changelog.Change[relRow]) changelog.Change[relRow] { return c }).Parallelism(3)
	var made atomic.Int64
	var owners sync.Map // the subtasks whose functions made results
	newFuncs := func() eddy.LookupFuncs[relRow, int64, dimRow, lookedUp] {
		id := made.Add(1)
		busy := new(atomic.Bool)
		return eddy.LookupFuncs[relRow, int64, dimRow, lookedUp]{
			Key:    func(r relRow) int64 { return r.G },
			Lookup: dims.lookup,
			Result: func(r relRow, d *dimRow) lookedUp {
				// Two subtasks calling one function at once would find
				// it busy.
				if !busy.CompareAndSwap(false, true) {
					t.Errorf("the result function of subtask %d is called by two goroutines at once", id)
				}
				owners.Store(id, true)
				defer busy.Store(false)
				return lookedUpOf(r, d)
			},
		}
	}
	sink := newMemSink[changelog.Change[lookedUp]]()
	eddy.WriteTo(eddy.LookupJoinEach(eddy.AsChangelog(src, changelog.InsertOnly), newFuncs, eddy.LeftJoin, eddy.LookupSynchronous()), "collect", sink)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := env.Execute(ctx, t.Name()); err != nil {
		t.Fatal(err)
	}
	if n := made.Load(); n != 4 {
		t.Errorf("the functions were made %d times, want 4: once when building, once per subtask of 3", n)
	}
	used := 0
	owners.Range(func(any, any) bool { used++; return true })
	if used < 2 {
		t.Errorf("rows went through the functions of %d subtask(s), want those of several", used)
	}
	got := map[lookedUp]int{}
	for _, p := range sink.committed() {
		for _, c := range p {
			got[c.Row]++
		}
	}
	final := map[relRow]int{}
	for _, c := range input {
		final[c.Row]++
	}
	want := bruteLookup(final, dims, eddy.LeftJoin)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %d distinct result rows, want %d:\n%v\nwant\n%v", len(got), len(want), got, want)
	}
}

// TestLookupJoinMatch joins with Match as the rest of the condition (the
// dimension row's name is odd): a LEFT join keeps only the rows found that
// match, and pads an input row once when none of its rows match, with a
// cache and without; the result is compared with brute force.
func TestLookupJoinMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	dims := newFakeTable(rng, 20)
	input := randomChangelog(rng, 800, newRowIn(rng, 25))
	match := func(_ relRow, d *dimRow) bool { return d.Name%2 == 1 }
	want := map[lookedUp]int{}
	for r, n := range table(t, input) {
		found := false
		for i, d := range dims.rows[r.G] {
			if match(r, &d) {
				found = true
				want[lookedUpOf(r, &dims.rows[r.G][i])] += n
			}
		}
		if !found {
			want[lookedUpOf(r, nil)] += n
		}
	}
	for _, opts := range [][]eddy.LookupOption{{eddy.LookupSynchronous()}, {eddy.LookupCache(100, time.Hour)}} {
		env := eddy.NewEnvironment(eddy.WithParallelism(2))
		src := eddy.FromSlice(env, input, eddy.NoWatermarks[changelog.Change[relRow]]())
		newFuncs := func() eddy.LookupFuncs[relRow, int64, dimRow, lookedUp] {
			return eddy.LookupFuncs[relRow, int64, dimRow, lookedUp]{
				Key: func(r relRow) int64 { return r.G }, Lookup: dims.lookup, Result: lookedUpOf, Match: match,
			}
		}
		sink := newMemSink[changelog.Change[lookedUp]]()
		eddy.WriteTo(eddy.LookupJoinEach(src, newFuncs, eddy.LeftJoin, opts...), "collect", sink)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := env.Execute(ctx, t.Name())
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		var out []changelog.Change[lookedUp]
		for _, p := range sink.committed() {
			out = append(out, p...)
		}
		if d := diffTables(table(t, out), want); d != "" {
			t.Fatalf("result table differs from brute force:\n%s", d)
		}
	}
}
