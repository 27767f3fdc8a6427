package eddy_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/changelog"
)

// benchBackend returns the options that select a state backend by name.
func benchBackend(b *testing.B, backend string) []eddy.Option {
	if backend == "pebble" {
		return []eddy.Option{eddy.WithStateBackend(eddy.PebbleState(b.TempDir(), 256<<20))}
	}
	return nil
}

// updates is a changelog of n changes over rows rows: index i changes row
// i mod rows; the first change of a row inserts it, later ones update it
// (-U of its previous version, +U of the new one), moving it to a group of
// groups chosen by a hash of the row and version.
func updates(env *eddy.Environment, n int64, rows, groups int64) *eddy.Stream[changelog.Change[relRow]] {
	version := func(r, v int64) relRow {
		h := uint64(r)*0x9E3779B97F4A7C15 ^ uint64(v)*0xBF58476D1CE4E5B9
		h ^= h >> 31
		return relRow{ID: r, G: int64(h % uint64(groups)), V: int64(h>>20) % 1000}
	}
	steps := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: (n + 1) / 2}, func(i int64) int64 { return i }, eddy.NoWatermarks[int64]())
	changes := eddy.FlatMap(steps, func(i int64, emit func(changelog.Change[relRow])) {
		r, v := i%rows, i/rows
		if v == 0 {
			emit(changelog.InsertOf(version(r, 0)))
			return
		}
		emit(changelog.Of(changelog.UpdateBefore, version(r, v-1)))
		emit(changelog.Of(changelog.UpdateAfter, version(r, v)))
	})
	return eddy.AsChangelog(changes, changelog.Retract)
}

// BenchmarkGroupAggregate runs COUNT(*), SUM(v) GROUP BY g over a changelog
// of updates that move rows between 100 000 groups, on each backend, with
// and without mini-batches, and reports input changes per second and per
// core.
func BenchmarkGroupAggregate(b *testing.B) {
	type cs struct{ Count, Sum int64 }
	f := agg.Combine2(agg.Count[relRow](), agg.Sum(func(r relRow) int64 { return r.V }), func(c, s int64) cs { return cs{c, s} })
	for _, backend := range []string{"heap", "pebble"} {
		for _, mode := range []string{"plain", "minibatch"} {
			for _, p := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/%s/p%d", backend, mode, p), func(b *testing.B) {
					n := int64(max(b.N, 2))
					env := eddy.NewEnvironment(append(benchBackend(b, backend), eddy.WithParallelism(p))...)
					var opts []eddy.TableOption
					if mode == "minibatch" {
						opts = append(opts, eddy.MiniBatch(4096, 50*time.Millisecond))
					}
					in := updates(env, n, 200_000, 100_000)
					out := eddy.GroupAggregate(eddy.GroupBy(in, func(r relRow) int64 { return r.G }), f, opts...)
					eddy.Discard(out)
					runJob(b, env, n)
				})
			}
		}
	}
}
