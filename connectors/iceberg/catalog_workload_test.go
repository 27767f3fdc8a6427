package iceberg

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// writeUpsertPhases runs a job that writes inserts, updates and deletes of
// an upsert table (upsertType, keyed by id) through an iceberg sink with
// options opts, checkpointing as it runs, and returns the rows the table
// must hold afterwards, rendered and sorted as scanRows gives them.
//
// Phase 1 inserts keys 0..59; phase 2 deletes every third key and updates
// the others; phase 3 deletes keys k%5 == 1 (some already gone) and
// upserts keys 0..79 else, re-inserting deleted keys and adding new ones.
// The phases run one after the other in one job: the sink's key index
// (keyed state) carries over from one checkpoint to the next, so updates
// and deletes replace rows committed in earlier snapshots.
func writeUpsertPhases(t *testing.T, opts map[string]string, job string) []string {
	t.Helper()
	row := func(k, seq int64) types.Row {
		return types.MustBuildRow(upsertType, nil, k, seq, fmt.Sprintf("v%d", seq))
	}
	phases := []struct {
		n      int64
		change func(i int64) changelog.Change[types.Row]
	}{
		{60, func(i int64) changelog.Change[types.Row] { return changelog.Of(changelog.Insert, row(i, 1000+i)) }},
		{60, func(i int64) changelog.Change[types.Row] {
			if i%3 == 0 {
				return changelog.Of(changelog.Delete, types.MustBuildRow(upsertType, nil, i, nil, nil))
			}
			return changelog.Of(changelog.UpdateAfter, row(i, 2000+i))
		}},
		{80, func(i int64) changelog.Change[types.Row] {
			if i%5 == 1 {
				return changelog.Of(changelog.Delete, types.MustBuildRow(upsertType, nil, i, nil, nil))
			}
			return changelog.Of(changelog.UpdateAfter, row(i, 3000+i))
		}},
	}
	var total int64
	for _, ph := range phases {
		total += ph.n
	}
	change := func(i int64) changelog.Change[types.Row] {
		for _, ph := range phases {
			if i < ph.n {
				return ph.change(i)
			}
			i -= ph.n
		}
		panic(fmt.Sprintf("change %d is past the %d changes", i, total))
	}
	// The model of the table: key -> rendered row.
	state := map[int64]string{}
	for i := int64(0); i < total; i++ {
		c := change(i)
		k := c.Row.Int64(0)
		if c.Kind == changelog.Delete {
			delete(state, k)
		} else {
			seq := c.Row.Int64(1)
			state[k] = fmt.Sprintf("%d | %d | v%d", k, seq, seq)
		}
	}
	sink, err := connector.OpenTableSink(connector.Default, "iceberg", opts, &connector.Table{Schema: upsertType, PrimaryKey: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2),
		eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: total, RatePerSecond: 1000},
		change, eddy.NoWatermarks[changelog.Change[types.Row]]()).Parallelism(1)
	key := types.NewKeyEncoder(upsertType, 0)
	eddy.WriteUpserts(eddy.AsChangelog(src, changelog.Upsert), "kv", key.Key, sink, eddy.KeyedBySinkKey())
	if err := env.Execute(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range state {
		want = append(want, r)
	}
	slices.Sort(want)
	return want
}
