package eddy_test

import (
	"fmt"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
)

// rankBackend returns the options that select a state backend by name.
func rankBackend(b *testing.B, backend string) []eddy.Option {
	if backend == "pebble" {
		return []eddy.Option{eddy.WithStateBackend(eddy.PebbleState(b.TempDir(), 256<<20))}
	}
	return nil
}

// mix scrambles i into 64 bits.
func mix(i uint64) uint64 {
	i ^= i >> 33
	i *= 0xff51afd7ed558ccd
	i ^= i >> 33
	i *= 0xc4ceb3f53fe1a85b
	return i ^ i>>33
}

// rankInserts is an insert-only changelog of n rows over groups groups,
// with random values, timestamped in order.
func rankInserts(env *eddy.Environment, n, groups int64) *eddy.Stream[changelog.Change[relRow]] {
	rows := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: n}, func(i int64) changelog.Change[relRow] {
		h := mix(uint64(i))
		return changelog.InsertOf(relRow{ID: i, G: int64(h % uint64(groups)), V: int64(h>>32) % 1_000_000})
	}, eddy.BoundedOutOfOrder(0, func(c changelog.Change[relRow]) int64 { return c.Row.ID / 100 }))
	return eddy.AsChangelog(rows, changelog.InsertOnly)
}

// rankUpdates is a retract changelog of about n changes over rows rows in
// groups groups: change i touches row i mod rows, inserting it the first
// time and then updating its value (-U of the old version, +U of the new)
// within its group.
func rankUpdates(env *eddy.Environment, n, rows, groups int64) *eddy.Stream[changelog.Change[relRow]] {
	version := func(r, v int64) relRow {
		return relRow{ID: r, G: int64(mix(uint64(r)) % uint64(groups)), V: int64(mix(uint64(r)<<20^uint64(v)) % 1_000_000)}
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

// BenchmarkTopN ranks the top 5 rows of each partition, over an insert-only
// changelog of rows in 10 000 partitions (the top 5 alone in state) and
// over retract changelogs of value updates of 200 000 rows (every row in
// state): in 10 000 partitions of about 20 rows, which the ordered prefix
// of 21 rows mostly holds whole, and in 1 000 partitions of about 200 rows,
// most of which lie beyond it in the map state. It runs on each backend and
// reports input changes per second and per core.
func BenchmarkTopN(b *testing.B) {
	for _, backend := range []string{"heap", "pebble"} {
		for _, input := range []string{"inserts", "updates", "updates-wide"} {
			for _, p := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/%s/p%d", backend, input, p), func(b *testing.B) {
					n := int64(max(b.N, 2))
					env := eddy.NewEnvironment(append(rankBackend(b, backend), eddy.WithParallelism(p))...)
					in := rankInserts(env, n, 10_000)
					switch input {
					case "updates":
						in = rankUpdates(env, n, 200_000, 10_000)
					case "updates-wide":
						in = rankUpdates(env, n, 200_000, 1_000)
					}
					eddy.Discard(eddy.TopN(eddy.GroupBy(in, func(r relRow) int64 { return r.G }), 5, byValue))
					runJob(b, env, n)
				})
			}
		}
	}
}

// BenchmarkDeduplicate keeps the first or last row of each of 100 000 keys,
// on processing time and (keep-first) on event time, on each backend, and
// reports input rows per second and per core.
func BenchmarkDeduplicate(b *testing.B) {
	modes := []struct {
		name   string
		keep   eddy.Keep
		domain eddy.TimeDomain
	}{
		{"first", eddy.KeepFirst, eddy.ProcessingTime},
		{"last", eddy.KeepLast, eddy.ProcessingTime},
		{"first-event", eddy.KeepFirst, eddy.EventTime},
	}
	for _, backend := range []string{"heap", "pebble"} {
		for _, m := range modes {
			for _, p := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/%s/p%d", backend, m.name, p), func(b *testing.B) {
					n := int64(max(b.N, 2))
					env := eddy.NewEnvironment(append(rankBackend(b, backend), eddy.WithParallelism(p))...)
					in := rankInserts(env, n, 100_000)
					eddy.Discard(eddy.Deduplicate(eddy.GroupBy(in, func(r relRow) int64 { return r.G }), m.keep, m.domain))
					runJob(b, env, n)
				})
			}
		}
	}
}
