package queries

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

// The tests compare every query with a brute-force evaluation of its SQL
// over the same generated events, at parallelism 1 and 2.

// testEvents is the number of events of the tests.
const testEvents = 30_000

// testConfig is the generator configuration of the tests: 1 000 events per
// second of event time, so that 30 000 events span 30 s and windows are
// numerous, starting 15 s before a midnight so that days and hours change.
func testConfig() nexmark.Config {
	cfg := nexmark.DefaultConfig()
	cfg.MaxEvents = testEvents
	cfg.FirstEventRate = 1000
	cfg.BaseTime = nexmark.DefaultBaseTime - 15_000
	return cfg
}

// parts returns the events of the parts that the sources of a job with
// parallelism p generate, each part in order.
func parts(t testing.TB, cfg nexmark.Config, p int) [][]nexmark.Event {
	t.Helper()
	out := make([][]nexmark.Event, p)
	for i := range p {
		c := cfg
		c.NumEventGenerators = p
		g, err := nexmark.NewGenerator(c, i, p)
		if err != nil {
			t.Fatal(err)
		}
		var e nexmark.Event
		for g.Next(&e) {
			out[i] = append(out[i], e)
		}
	}
	return out
}

// data is the generated events of a test run split by type.
type data struct {
	bids     []nexmark.Bid
	auctions []nexmark.Auction
	persons  []nexmark.Person
	// byPart holds the bids of every part separately, in order.
	byPart [][]nexmark.Bid
}

func split(ps [][]nexmark.Event) *data {
	d := &data{byPart: make([][]nexmark.Bid, len(ps))}
	for i, p := range ps {
		for _, e := range p {
			switch e.Type {
			case nexmark.BidEvent:
				d.bids = append(d.bids, e.Bid)
				d.byPart[i] = append(d.byPart[i], e.Bid)
			case nexmark.AuctionEvent:
				d.auctions = append(d.auctions, e.Auction)
			case nexmark.PersonEvent:
				d.persons = append(d.persons, e.Person)
			}
		}
	}
	return d
}

// forParallelism runs test at parallelism 1 and 2 with the events the
// sources generate at that parallelism.
func forParallelism(t *testing.T, test func(t *testing.T, p int, cfg nexmark.Config, d *data)) {
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprintf("p%d", p), func(t *testing.T) {
			cfg := testConfig()
			test(t, p, cfg, split(parts(t, cfg, p)))
		})
	}
}

// run executes the job build adds at parallelism p and returns what its
// result stream produced.
func run[T any](t testing.TB, p int, build func(env *eddy.Environment) *eddy.Stream[T]) []T {
	t.Helper()
	env := eddy.NewEnvironment(eddy.WithParallelism(p))
	c := eddy.Collect(build(env))
	if err := env.Execute(context.Background(), t.Name()); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d result records", len(c.Values()))
	return c.Values()
}

// runStream executes env and returns what s produced.
func runStream[T any](t testing.TB, env *eddy.Environment, s *eddy.Stream[T]) []T {
	t.Helper()
	c := eddy.Collect(s)
	if err := env.Execute(context.Background(), t.Name()); err != nil {
		t.Fatal(err)
	}
	return c.Values()
}

// sameMultiset fails t unless got and want hold the same values the same
// number of times.
func sameMultiset[T comparable](t testing.TB, got, want []T) {
	t.Helper()
	counts := make(map[T]int, len(want))
	for _, v := range want {
		counts[v]++
	}
	for _, v := range got {
		counts[v]--
	}
	var missing, extra []string
	for v, n := range counts {
		for ; n > 0; n-- {
			missing = append(missing, fmt.Sprintf("%+v", v))
		}
		for ; n < 0; n++ {
			extra = append(extra, fmt.Sprintf("%+v", v))
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return
	}
	sort.Strings(missing)
	sort.Strings(extra)
	t.Errorf("got %d rows, want %d: %d missing, %d unexpected\nmissing: %s\nunexpected: %s",
		len(got), len(want), len(missing), len(extra), firstFew(missing), firstFew(extra))
}

func firstFew(s []string) string {
	if len(s) > 5 {
		return strings.Join(s[:5], "\n  ") + fmt.Sprintf("\n  … and %d more", len(s)-5)
	}
	return strings.Join(s, "\n  ")
}

// changelogRow is a changelog record type: a row with an Op field.
type changelogRow interface {
	comparable
	Q4Result | Q15Result | Q16Result | Q17Result | Q18Result | Q19Result
}

// opOf returns a changelog record's kind and the row with Op cleared
// (Insert).
func opOf[R changelogRow](r R) (RowKind, R) {
	switch v := any(&r).(type) {
	case *Q4Result:
		op := v.Op
		v.Op = Insert
		return op, r
	case *Q15Result:
		op := v.Op
		v.Op = Insert
		return op, r
	case *Q16Result:
		op := v.Op
		v.Op = Insert
		return op, r
	case *Q17Result:
		op := v.Op
		v.Op = Insert
		return op, r
	case *Q18Result:
		op := v.Op
		v.Op = Insert
		return op, r
	case *Q19Result:
		op := v.Op
		v.Op = Insert
		return op, r
	}
	panic("unreachable")
}

// materialize replays a changelog into the table it describes, keyed by
// key, with the rows' Op cleared. It fails t if the changelog is
// inconsistent: an insert of a present key, a retraction of a row that is
// not the current one, or an update after that is not preceded by its
// retraction.
func materialize[K comparable, R changelogRow](t testing.TB, log []R, key func(R) K) map[K]R {
	t.Helper()
	table := map[K]R{}
	retracted := map[K]bool{}
	bad := 0
	fail := func(format string, args ...any) {
		if bad++; bad <= 5 {
			t.Errorf(format, args...)
		}
	}
	for i, rec := range log {
		op, r := opOf(rec)
		k := key(r)
		cur, ok := table[k]
		switch op {
		case Insert:
			if ok {
				fail("changelog record %d: +I of present key %+v: %+v", i, k, r)
			}
			table[k] = r
		case UpdateBefore, Delete:
			if !ok || cur != r {
				fail("changelog record %d: %v %+v of %+v, which holds %+v", i, op, r, k, cur)
			}
			delete(table, k)
			retracted[k] = op == UpdateBefore
		case UpdateAfter:
			if ok || !retracted[k] {
				fail("changelog record %d: +U of %+v without its -U: %+v", i, k, r)
			}
			table[k] = r
			retracted[k] = false
		}
	}
	return table
}

// sameTable fails t unless got and want hold the same rows.
func sameTable[K comparable, R comparable](t testing.TB, got, want map[K]R) {
	t.Helper()
	var diffs []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("missing %+v: %+v", k, w))
		} else if g != w {
			diffs = append(diffs, fmt.Sprintf("%+v: got %+v, want %+v", k, g, w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("unexpected %+v: %+v", k, g))
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		t.Errorf("tables differ in %d of %d rows (want %d):\n  %s", len(diffs), len(got), len(want), firstFew(diffs))
	}
}

// nonEmpty fails t if a brute-force result is too small to test anything.
func nonEmpty[T any](t testing.TB, want []T, least int) {
	t.Helper()
	if len(want) < least {
		t.Fatalf("the expected result has only %d rows; the test data is too small", len(want))
	}
}
