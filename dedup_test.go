package eddy_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
)

// timedRows returns n insertions of rows of groups keys whose V is an event
// timestamp: row i has timestamp 2i plus up to jitter-1 ms, so that rows
// arrive out of order by less than jitter.
func timedRows(rng *rand.Rand, n, groups int, jitter int64) []changelog.Change[relRow] {
	out := make([]changelog.Change[relRow], n)
	for i := range out {
		out[i] = changelog.InsertOf(relRow{ID: int64(i + 1), G: rng.Int64N(int64(groups)), V: int64(2*i) + rng.Int64N(jitter)})
	}
	return out
}

// timedInput is relInput for rows timestamped by V, with watermarks that
// trail the highest timestamp by delay; the stream is insert-only.
func timedInput(env *eddy.Environment, name string, input []changelog.Change[relRow], delay time.Duration, hook func()) *eddy.Stream[changelog.Change[relRow]] {
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: int64(len(input)), RatePerSecond: 40000},
		func(i int64) changelog.Change[relRow] { return input[i] },
		eddy.BoundedOutOfOrder(delay, func(c changelog.Change[relRow]) int64 { return c.Row.V })).Parallelism(1).UID(name)
	s := eddy.Map(src, func(c changelog.Change[relRow]) changelog.Change[relRow] { hook(); return c }).Parallelism(1).Name("hook " + name)
	return eddy.AsChangelog(s, changelog.InsertOnly)
}

// keptRows computes deduplication by brute force: for each group, the row
// that keep and domain select among the input rows in arrival order (on
// event time, by V; ties go to the first arrival for KeepFirst and to the
// last for KeepLast).
func keptRows(input []changelog.Change[relRow], keep eddy.Keep, domain eddy.TimeDomain) map[relRow]int {
	kept := map[int64]relRow{}
	for _, c := range input {
		r := c.Row
		prev, ok := kept[r.G]
		switch {
		case !ok:
			kept[r.G] = r
		case keep == eddy.KeepLast && (domain == eddy.ProcessingTime || r.V >= prev.V):
			kept[r.G] = r
		case keep == eddy.KeepFirst && domain == eddy.EventTime && r.V < prev.V:
			kept[r.G] = r
		}
	}
	out := map[relRow]int{}
	for _, r := range kept {
		out[r] = 1
	}
	return out
}

// upsertTable applies an upsert changelog by the key of its rows and returns
// the rows left, failing the test on a -U, or on a -D of a key that holds
// another row.
func upsertTable[T any, K comparable](t *testing.T, changes []changelog.Change[T], key func(T) K, equal func(a, b T) bool) map[K]T {
	t.Helper()
	m := map[K]T{}
	for i, c := range changes {
		k := key(c.Row)
		switch c.Kind {
		case changelog.Insert, changelog.UpdateAfter:
			m[k] = c.Row
		case changelog.Delete:
			if cur, ok := m[k]; !ok || !equal(cur, c.Row) {
				t.Fatalf("change %d (%v) deletes a row that the table does not hold under its key (it holds %v)", i, c, cur)
			}
			delete(m, k)
		default:
			t.Fatalf("change %d (%v) is a -U in an upsert stream", i, c)
		}
	}
	return m
}

// TestDeduplicateMatchesBruteForce deduplicates random rows keeping the
// first or last per key, by arrival or by event time, with a failure and a
// restore from a checkpoint in the middle, on both backends, and compares
// the final result table with brute force.
func TestDeduplicateMatchesBruteForce(t *testing.T) {
	for _, backend := range relBackends {
		for _, keep := range []eddy.Keep{eddy.KeepFirst, eddy.KeepLast} {
			for _, domain := range []eddy.TimeDomain{eddy.ProcessingTime, eddy.EventTime} {
				t.Run(fmt.Sprintf("%s/%v/%v", backend, keep, domain), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(21, uint64(keep)*2+uint64(domain)))
					input := timedRows(rng, 4000, 300, 50)
					out := runRelational(t, relRun{backend: backend, failAfter: 1500, parallelism: 2},
						func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[relRow]] {
							rows := timedInput(env, "rows", input, 50*time.Millisecond, hook)
							return eddy.Deduplicate(eddy.GroupBy(rows, func(r relRow) int64 { return r.G }), keep, domain)
						})
					got := finalTable(t, out)
					if d := diffTables(got, keptRows(input, keep, domain)); d != "" {
						t.Fatalf("result table differs from brute force:\n%s", d)
					}
					if keep == eddy.KeepFirst {
						for _, part := range out {
							for _, c := range part {
								if c.Kind != changelog.Insert {
									t.Fatalf("keep-first emitted %v; its output is insert-only", c)
								}
							}
						}
					}
				})
			}
		}
	}
}

// TestDeduplicateUpsertOutput keeps the last row per key as an upsert
// stream and checks the table it leaves when applied by key.
func TestDeduplicateUpsertOutput(t *testing.T) {
	for _, backend := range relBackends {
		t.Run(backend, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(4, 4))
			input := timedRows(rng, 3000, 100, 50)
			out := runRelational(t, relRun{backend: backend, failAfter: 1000, parallelism: 2},
				func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[relRow]] {
					rows := timedInput(env, "rows", input, 50*time.Millisecond, hook)
					d := eddy.Deduplicate(eddy.GroupBy(rows, func(r relRow) int64 { return r.G }), eddy.KeepLast, eddy.EventTime, eddy.UpsertOutput())
					if m := d.ChangelogMode(); m.Contains(changelog.UpdateBefore) {
						t.Errorf("upsert output has mode %v", m)
					}
					return d
				})
			var all []changelog.Change[relRow]
			for _, part := range out {
				all = append(all, part...)
			}
			got := map[relRow]int{}
			for _, r := range upsertTable(t, all, func(r relRow) int64 { return r.G }, func(a, b relRow) bool { return a == b }) {
				got[r]++
			}
			if d := diffTables(got, keptRows(input, eddy.KeepLast, eddy.EventTime)); d != "" {
				t.Fatalf("result table differs from brute force:\n%s", d)
			}
		})
	}
}

// TestDeduplicateRescale takes a savepoint of an event-time keep-first job
// (rows waiting for the watermark are in its state, with their timers) at
// parallelism 2, resumes it at parallelism 3, and compares the final result
// table with brute force.
func TestDeduplicateRescale(t *testing.T) {
	for _, backend := range relBackends {
		t.Run(backend, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(9, 1))
			input := timedRows(rng, 4000, 500, 300)
			out := runRescaled(t, backend, 1500, func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[relRow]] {
				rows := timedInput(env, "rows", input, 300*time.Millisecond, hook)
				return eddy.Deduplicate(eddy.GroupBy(rows, func(r relRow) int64 { return r.G }), eddy.KeepFirst, eddy.EventTime).UID("dedup")
			})
			if d := diffTables(table(t, out), keptRows(input, eddy.KeepFirst, eddy.EventTime)); d != "" {
				t.Fatalf("result table differs from brute force:\n%s", d)
			}
		})
	}
}

// TestDeduplicateRefusesBadInput checks the build-time errors of
// Deduplicate.
func TestDeduplicateRefusesBadInput(t *testing.T) {
	for name, c := range map[string]struct {
		mode changelog.Mode
		keep eddy.Keep
		opts []eddy.TableOption
		want string
	}{
		"retract input":        {changelog.Retract, eddy.KeepLast, nil, "deduplication needs an insert-only one"},
		"upsert keeping first": {changelog.InsertOnly, eddy.KeepFirst, []eddy.TableOption{eddy.UpsertOutput()}, "Deduplicate(KeepFirst) does not take the UpsertOutput option"},
		"bad keep":             {changelog.InsertOnly, eddy.Keep(7), nil, "use eddy.KeepFirst or eddy.KeepLast"},
	} {
		t.Run(name, func(t *testing.T) {
			env := eddy.NewEnvironment()
			rows := eddy.AsChangelog(eddy.Inserts(eddy.FromSlice(env, []relRow{{}}, eddy.NoWatermarks[relRow]())), c.mode)
			eddy.Discard(eddy.Deduplicate(eddy.GroupBy(rows, func(r relRow) int64 { return r.G }), c.keep, eddy.ProcessingTime, c.opts...))
			expectBuildError(t, env, c.want)
		})
	}
}
