package eddy_test

import (
	"math/rand/v2"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
)

// randomUpserts returns n changes of an upsert stream keyed by ID over keys
// keys: upserts (+I for a key the stream has not inserted yet or has
// deleted, +U otherwise, often of an unchanged row) and deletions carrying
// the key alone, some of keys that hold no row.
func randomUpserts(rng *rand.Rand, n, keys int) []changelog.Change[relRow] {
	live := map[int64]bool{}
	out := make([]changelog.Change[relRow], n)
	for i := range out {
		k := rng.Int64N(int64(keys))
		if rng.IntN(5) == 0 {
			out[i] = changelog.Of(changelog.Delete, relRow{ID: k})
			delete(live, k)
			continue
		}
		kind := changelog.UpdateAfter
		if !live[k] {
			kind = changelog.Insert
		}
		live[k] = true
		out[i] = changelog.Of(kind, relRow{ID: k, G: k % 7, V: rng.Int64N(3)})
	}
	return out
}

// TestChangelogNormalizeMatchesBruteForce normalises random upsert streams,
// with a failure and a restore from a checkpoint in the middle, on both
// backends: the retract stream it makes must be valid (every retraction
// takes back a row present, with the whole row), carry no update that
// leaves its row unchanged, and leave the table the upserts leave.
func TestChangelogNormalizeMatchesBruteForce(t *testing.T) {
	for _, backend := range relBackends {
		t.Run(backend, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(13, 14))
			input := randomUpserts(rng, 4000, 60)
			out := runRelational(t, relRun{backend: backend, failAfter: 1500, parallelism: 2},
				func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[relRow]] {
					rows := eddy.AsChangelog(relInput(env, "rows", input, hook), changelog.Upsert)
					return eddy.ChangelogNormalize(eddy.GroupBy(rows, func(r relRow) int64 { return r.ID }))
				})
			got := finalTable(t, out)
			for _, part := range out {
				for i, c := range part {
					if c.Kind == changelog.UpdateBefore && part[i+1].Row == c.Row {
						t.Fatalf("change %d updates %v to itself", i, c.Row)
					}
				}
			}
			last := map[int64]relRow{}
			for _, c := range input {
				if c.Kind == changelog.Delete {
					delete(last, c.Row.ID)
				} else {
					last[c.Row.ID] = c.Row
				}
			}
			want := map[relRow]int{}
			for _, r := range last {
				want[r] = 1
			}
			if d := diffTables(got, want); d != "" {
				t.Fatalf("result table differs from brute force:\n%s", d)
			}
		})
	}
}
