package eddy_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
)

// tRow is a row of the temporal join tests: At is the event time of the
// change that carries it.
type tRow struct {
	ID, G, V, At int64
}

// tJoined is a result row of the temporal join tests: the probe row (but
// its time) and the version it joined, if any.
type tJoined struct {
	ID, G, V   int64
	VerID, Ver int64
	HasVer     bool
}

func tJoin(p tRow, v *tRow) tJoined {
	j := tJoined{ID: p.ID, G: p.G, V: p.V}
	if v != nil {
		j.VerID, j.Ver, j.HasVer = v.ID, v.V, true
	}
	return j
}

// timeJitter bounds how far the times of the test inputs go out of order;
// the watermarks allow for it, so that no record is late.
const timeJitter = 5

// versionChanges returns n changes of a versioned table over keys keys, in
// time order but for up to timeJitter ms of disorder between changes of
// different times: insertions of a key's row, updates (-U then +U at one
// time) and deletions.
func versionChanges(rng *rand.Rand, n, keys int) []changelog.Change[tRow] {
	var out []changelog.Change[tRow]
	live := map[int64]tRow{}
	base, id := int64(0), int64(0)
	for len(out) < n {
		base += rng.Int64N(3)
		at := base + rng.Int64N(timeJitter)
		k := rng.Int64N(int64(keys))
		old, ok := live[k]
		id++
		nr := tRow{ID: id, G: k, V: rng.Int64N(1000), At: at}
		switch p := rng.IntN(10); {
		case !ok:
			live[k] = nr
			out = append(out, changelog.InsertOf(nr))
		case p < 7:
			live[k] = nr
			old.At = at
			out = append(out, changelog.Of(changelog.UpdateBefore, old), changelog.Of(changelog.UpdateAfter, nr))
		default:
			delete(live, k)
			old.At = at
			out = append(out, changelog.Of(changelog.Delete, old))
		}
	}
	return out
}

// probeChanges returns n changes of the probe side over keys keys, with
// the same disorder: insertions only, or also updates and deletions.
func probeChanges(rng *rand.Rand, n, keys int, retract bool) []changelog.Change[tRow] {
	var out []changelog.Change[tRow]
	var live []tRow
	base, id := int64(0), int64(0)
	for len(out) < n {
		base += rng.Int64N(3)
		at := base + rng.Int64N(timeJitter)
		id++
		nr := tRow{ID: id, G: rng.Int64N(int64(keys)), V: rng.Int64N(1000), At: at}
		switch p := rng.IntN(10); {
		case !retract || p < 6 || len(live) == 0:
			live = append(live, nr)
			out = append(out, changelog.InsertOf(nr))
		case p < 8:
			i := rng.IntN(len(live))
			old := live[i]
			old.At = at
			nr.G = old.G
			live[i] = nr
			out = append(out, changelog.Of(changelog.UpdateBefore, old), changelog.Of(changelog.UpdateAfter, nr))
		default:
			i := rng.IntN(len(live))
			old := live[i]
			old.At = at
			live = append(live[:i], live[i+1:]...)
			out = append(out, changelog.Of(changelog.Delete, old))
		}
	}
	return out
}

// bruteTemporal joins every probe change with the version of its key at
// its time: the last versioned change at or before it (in time order, then
// input order), if that is an insertion or update. It returns the signedTable
// multiset of results: +1 for an addition, -1 for a retraction.
func bruteTemporal(probe, versions []changelog.Change[tRow], kind eddy.JoinKind) map[tJoined]int {
	byKey := map[int64][]changelog.Change[tRow]{}
	for _, c := range versions {
		byKey[c.Row.G] = append(byKey[c.Row.G], c)
	}
	for _, vs := range byKey {
		slices.SortStableFunc(vs, func(a, b changelog.Change[tRow]) int { return int(a.Row.At - b.Row.At) })
	}
	out := map[tJoined]int{}
	for _, p := range probe {
		vs := byKey[p.Row.G]
		i := len(vs) - 1
		for i >= 0 && vs[i].Row.At > p.Row.At {
			i--
		}
		var r tJoined
		switch {
		case i >= 0 && vs[i].Kind.IsAddition():
			r = tJoin(p.Row, &vs[i].Row)
		case kind == eddy.LeftJoin:
			r = tJoin(p.Row, nil)
		default:
			continue
		}
		if p.Kind.IsAddition() {
			out[r]++
		} else {
			out[r]--
		}
		if out[r] == 0 {
			delete(out, r)
		}
	}
	return out
}

// signedTable returns the signedTable multiset of a changelog: +1 for an addition,
// -1 for a retraction, without the rows whose sum is 0.
func signedTable[T comparable](parts [][]changelog.Change[T]) map[T]int {
	out := map[T]int{}
	for _, p := range parts {
		for _, c := range p {
			if c.Kind.IsAddition() {
				out[c.Row]++
			} else {
				out[c.Row]--
			}
			if out[c.Row] == 0 {
				delete(out, c.Row)
			}
		}
	}
	return out
}

// temporalInput adds a paced source of input (one subtask) whose records carry
// their At as event time, with watermarks that allow for timeJitter, and
// passes each record through hook.
func temporalInput(env *eddy.Environment, name string, input []changelog.Change[tRow], hook func()) *eddy.Stream[changelog.Change[tRow]] {
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: int64(len(input)), RatePerSecond: 40000},
		func(i int64) changelog.Change[tRow] { return input[i] },
		eddy.BoundedOutOfOrder(timeJitter*time.Millisecond, func(c changelog.Change[tRow]) int64 { return c.Row.At })).Parallelism(1).UID(name)
	s := eddy.Map(src, func(c changelog.Change[tRow]) changelog.Change[tRow] { hook(); return c }).Parallelism(1).Name("hook " + name)
	return eddy.AsChangelog(s, changelog.Retract)
}

// TestTemporalJoinMatchesBruteForce joins random probe changes with a
// random versioned table (random interleavings from two paced sources),
// with a failure and a restore from a checkpoint in the middle, on both
// backends, inner and left, and compares the results with each probe
// change joined with the version valid at its time.
func TestTemporalJoinMatchesBruteForce(t *testing.T) {
	for _, backend := range relBackends {
		for _, kind := range []eddy.JoinKind{eddy.InnerJoin, eddy.LeftJoin} {
			for _, retract := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%v/retract=%v", backend, kind, retract), func(t *testing.T) {
					t.Parallel()
					rng := rand.New(rand.NewPCG(uint64(kind)+1, 77))
					probe := probeChanges(rng, 3000, 40, retract)
					versions := versionChanges(rng, 3000, 40)
					var mode changelog.Mode
					out := runRelational(t, relRun{backend: backend, failAfter: 3000, parallelism: 2},
						func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[tJoined]] {
							p := temporalInput(env, "probe", probe, hook)
							if !retract {
								p = eddy.AsChangelog(p, changelog.InsertOnly)
							}
							key := func(r tRow) int64 { return r.G }
							s := eddy.TemporalJoin(eddy.GroupBy(p, key), eddy.GroupBy(temporalInput(env, "versions", versions, hook), key), kind, tJoin)
							mode = s.ChangelogMode()
							return s
						})
					want := bruteTemporal(probe, versions, kind)
					if !retract {
						if mode != changelog.InsertOnly {
							t.Fatalf("mode %v, want insert-only", mode)
						}
						if d := diffTables(finalTable(t, out), want); d != "" {
							t.Fatalf("result table differs from brute force:\n%s", d)
						}
						return
					}
					for _, p := range out {
						checkPairs(t, p)
					}
					if d := diffTables(signedTable(out), want); d != "" {
						t.Fatalf("results differ from brute force:\n%s", d)
					}
				})
			}
		}
	}
}

// TestTemporalJoinNeedsTimestamps checks that records without event
// timestamps fail the job with an error that names the fix.
func TestTemporalJoinNeedsTimestamps(t *testing.T) {
	env := eddy.NewEnvironment()
	rows := []changelog.Change[tRow]{changelog.InsertOf(tRow{G: 1})}
	key := func(r tRow) int64 { return r.G }
	p := eddy.AsChangelog(eddy.FromSlice(env, rows, eddy.NoWatermarks[changelog.Change[tRow]]()), changelog.InsertOnly)
	v := eddy.AsChangelog(eddy.FromSlice(env, rows, eddy.NoWatermarks[changelog.Change[tRow]]()), changelog.Retract)
	eddy.Discard(eddy.TemporalJoin(eddy.GroupBy(p, key), eddy.GroupBy(v, key), eddy.InnerJoin, tJoin))
	err := env.Execute(context.Background(), t.Name())
	if err == nil || !strings.Contains(err.Error(), "no event timestamp") || !strings.Contains(err.Error(), "timestamp extractor") {
		t.Fatalf("got %v, want an error about records without timestamps that names the fix", err)
	}
}

// TestTemporalJoinRescale stops a temporal left join with a savepoint at
// parallelism 2 (probe rows waiting for the watermark in its state),
// resumes it at parallelism 3, and compares the results with brute force,
// on both backends.
func TestTemporalJoinRescale(t *testing.T) {
	for _, backend := range relBackends {
		t.Run(backend, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			probe := probeChanges(rng, 3000, 100, false)
			versions := versionChanges(rng, 3000, 100)
			out := rescaledJoinRun(t, backend, 3000, func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[tJoined]] {
				key := func(r tRow) int64 { return r.G }
				p := eddy.AsChangelog(temporalInput(env, "probe", probe, hook), changelog.InsertOnly)
				return eddy.TemporalJoin(eddy.GroupBy(p, key), eddy.GroupBy(temporalInput(env, "versions", versions, hook), key), eddy.LeftJoin, tJoin).UID("temporal")
			})
			if d := diffTables(table(t, out), bruteTemporal(probe, versions, eddy.LeftJoin)); d != "" {
				t.Fatalf("result table differs from brute force:\n%s", d)
			}
		})
	}
}
