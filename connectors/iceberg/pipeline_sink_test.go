package iceberg

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/pipeline"
	"github.com/eddystream/eddy/sql/types"
)

// lakeEvents is a pipeline's stream: a table created, filled, altered (a
// column renamed, one widened, one added), updated, altered again (a
// column dropped); a second table truncated, a third dropped, and a
// fourth dropped and created again.
func lakeEvents(t *testing.T) []pipeline.Event {
	t.Helper()
	schema := func(version int, fields ...types.Field) *pipeline.Schema {
		return &pipeline.Schema{Columns: types.MustRowType(fields...), PrimaryKey: []string{"id"}, Version: version}
	}
	row := func(s *pipeline.Schema, kind changelog.Kind, id pipeline.TableID, vals ...types.Value) pipeline.Event {
		return pipeline.Event{Kind: pipeline.DataChange, Table: id, Schema: s, Change: changelog.Of(kind, types.MustBuildRow(s.Columns, nil, vals...))}
	}
	orders, tmp, gone, again := pipeline.TableID{Schema: "shop", Table: "orders"}, pipeline.TableID{Schema: "shop", Table: "tmp"},
		pipeline.TableID{Schema: "shop", Table: "gone"}, pipeline.TableID{Schema: "shop", Table: "again"}
	id := types.F("id", types.Int().NotNull())
	v1 := schema(1, id, types.F("name", types.String()), types.F("n", types.Int()))
	v2 := schema(2, id, types.F("label", types.String()), types.F("n", types.BigInt()), types.F("note", types.String()))
	v3 := schema(3, id, types.F("label", types.String()), types.F("n", types.BigInt()))
	small := schema(1, id, types.F("x", types.VarChar(10)))
	return []pipeline.Event{
		{Kind: pipeline.CreateTable, Table: orders, Schema: v1},
		row(v1, changelog.Insert, orders, int32(1), "a", int32(10)),
		row(v1, changelog.Insert, orders, int32(2), "b", int32(20)),
		row(v1, changelog.Insert, orders, int32(3), "c", int32(30)),
		{Kind: pipeline.AlterTable, Table: orders, Schema: v2, Changes: []pipeline.SchemaChange{
			{Kind: pipeline.RenameColumn, Column: "name", NewName: "label"},
			{Kind: pipeline.AlterColumnType, Column: "n", Type: types.BigInt()},
			{Kind: pipeline.AddColumn, Column: "note", Type: types.String(), Position: 3},
		}},
		row(v2, changelog.UpdateBefore, orders, int32(2), "b", int64(20), nil),
		row(v2, changelog.UpdateAfter, orders, int32(2), "B", int64(2000000000000), "x"),
		row(v2, changelog.Delete, orders, int32(3), "c", int64(30), nil),
		{Kind: pipeline.AlterTable, Table: orders, Schema: v3, Changes: []pipeline.SchemaChange{{Kind: pipeline.DropColumn, Column: "note"}}},
		row(v3, changelog.Insert, orders, int32(4), "d", int64(40)),
		{Kind: pipeline.CreateTable, Table: tmp, Schema: small},
		row(small, changelog.Insert, tmp, int32(1), "cleared"),
		{Kind: pipeline.TruncateTable, Table: tmp, Schema: small},
		row(small, changelog.Insert, tmp, int32(2), "kept"),
		{Kind: pipeline.CreateTable, Table: gone, Schema: small},
		row(small, changelog.Insert, gone, int32(1), "w"),
		{Kind: pipeline.DropTable, Table: gone, Schema: small},
		{Kind: pipeline.CreateTable, Table: again, Schema: small},
		row(small, changelog.Insert, again, int32(1), "old"),
		{Kind: pipeline.DropTable, Table: again, Schema: small},
		{Kind: pipeline.CreateTable, Table: again, Schema: small},
		row(small, changelog.Insert, again, int32(2), "new"),
	}
}

// TestPipelineSinkEvolvesTables writes a pipeline's events into Iceberg
// tables: they are created, evolved, truncated and dropped as the events
// say, and hold the rows.
func TestPipelineSinkEvolvesTables(t *testing.T) {
	dir := t.TempDir()
	sink := openPipelineSink(t, dir, nil)
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	eddy.WriteTo(eddy.FromSlice(env, lakeEvents(t), eddy.NoWatermarks[pipeline.Event]()), "lake", sink)
	if err := env.Execute(context.Background(), "pipeline iceberg"); err != nil {
		t.Fatal(err)
	}
	cat := testCatalogAt(t, dir)
	load := func(name string) *table.Table {
		tbl, err := cat.LoadTable(context.Background(), table.Identifier{"shop", name})
		if err != nil {
			t.Fatalf("table shop.%s: %v", name, err)
		}
		return tbl
	}
	orders := load("orders")
	var cols []string
	for _, f := range orders.Schema().Fields() {
		cols = append(cols, f.Name+" "+f.Type.String())
	}
	if want := []string{"id int", "label string", "n long"}; !slices.Equal(cols, want) {
		t.Errorf("shop.orders has columns %q, want %q", cols, want)
	}
	if ids := orders.Schema().IdentifierFieldIDs; len(ids) != 1 || ids[0] != orders.Schema().Fields()[0].ID {
		t.Errorf("shop.orders has identifier fields %v, want the primary key id", ids)
	}
	for name, want := range map[string][]string{
		"orders": {"1 | a | 10", "2 | B | 2000000000000", "4 | d | 40"},
		"tmp":    {"2 | kept"},
		"again":  {"2 | new"},
	} {
		if got := scanRows(t, load(name)); !slices.Equal(got, want) {
			t.Errorf("shop.%s: got %q, want %q", name, got, want)
		}
	}
	if _, err := cat.LoadTable(context.Background(), table.Identifier{"shop", "gone"}); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Errorf("shop.gone was not dropped: %v", err)
	}
}

// TestPipelineSinkExactlyOnceAcrossFailures writes two tables, one of
// which changes its schema midway, through failures: the tables hold each
// change once, and a schema change replayed after a restore is not
// applied twice.
func TestPipelineSinkExactlyOnceAcrossFailures(t *testing.T) {
	const n, keys = 12000, 150
	a, b := pipeline.TableID{Schema: "app", Table: "a"}, pipeline.TableID{Schema: "app", Table: "b"}
	id := types.F("id", types.BigInt().NotNull())
	v1 := &pipeline.Schema{Columns: types.MustRowType(id, types.F("v", types.Int()), types.F("tag", types.String())), PrimaryKey: []string{"id"}, Version: 1}
	v2 := &pipeline.Schema{Columns: types.MustRowType(id, types.F("v", types.BigInt()), types.F("label", types.String()), types.F("w", types.String())), PrimaryKey: []string{"id"}, Version: 2}
	bs := &pipeline.Schema{Columns: types.MustRowType(id, types.F("s", types.String())), PrimaryKey: []string{"id"}, Version: 1}
	events := []pipeline.Event{{Kind: pipeline.CreateTable, Table: a, Schema: v1}, {Kind: pipeline.CreateTable, Table: b, Schema: bs}}
	wantA, wantB := map[int64]string{}, map[int64]string{}
	for i := int64(0); i < n; i++ {
		k := i % keys
		switch {
		case i == n/2:
			events = append(events, pipeline.Event{Kind: pipeline.AlterTable, Table: a, Schema: v2, Changes: []pipeline.SchemaChange{
				{Kind: pipeline.AlterColumnType, Column: "v", Type: types.BigInt()},
				{Kind: pipeline.RenameColumn, Column: "tag", NewName: "label"},
				{Kind: pipeline.AddColumn, Column: "w", Type: types.String(), Position: 3},
			}})
		case i%3 == 0 && i%7 == 0:
			events = append(events, pipeline.Event{Kind: pipeline.DataChange, Table: b, Schema: bs,
				Change: changelog.Of(changelog.Delete, types.MustBuildRow(bs.Columns, nil, k, nil))})
			delete(wantB, k)
		case i%3 == 0:
			events = append(events, pipeline.Event{Kind: pipeline.DataChange, Table: b, Schema: bs,
				Change: changelog.Of(changelog.UpdateAfter, types.MustBuildRow(bs.Columns, nil, k, fmt.Sprint("s", i)))})
			wantB[k] = fmt.Sprintf("%d | s%d", k, i)
		case i < n/2:
			events = append(events, pipeline.Event{Kind: pipeline.DataChange, Table: a, Schema: v1,
				Change: changelog.Of(changelog.UpdateAfter, types.MustBuildRow(v1.Columns, nil, k, int32(i), fmt.Sprint("t", i)))})
			wantA[k] = fmt.Sprintf("%d | %d | t%d | (null)", k, i, i)
		default:
			events = append(events, pipeline.Event{Kind: pipeline.DataChange, Table: a, Schema: v2,
				Change: changelog.Of(changelog.UpdateAfter, types.MustBuildRow(v2.Columns, nil, k, i, fmt.Sprint("l", i), fmt.Sprint("w", i)))})
			wantA[k] = fmt.Sprintf("%d | %d | l%d | w%d", k, i, i, i)
		}
	}
	dir := t.TempDir()
	opts, err := pipelineSpec.Validate(map[string]string{
		"catalog.properties.uri": "sqlite://" + dir + "/catalog.db", "catalog.properties.warehouse": "file://" + dir + "/warehouse",
	})
	if err != nil {
		t.Fatal(err)
	}
	sink, err := newPipelineSink(opts)
	if err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2),
		eddy.WithCheckpointing(30*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()),
		eddy.WithRestartStrategy(eddy.FixedDelayRestart(10, 5*time.Millisecond)))
	var mu sync.Mutex
	// The second failure strikes as soon as the catalog shows the schema
	// change, before a checkpoint records it: the restored job replays rows
	// of the old schema into a table that has the new one.
	panicAt := map[int64]bool{int64(n / 3): true, int64(n * 5 / 6): true}
	alterAt, altered := int64(2+n/2), false
	catalogShowsAlter := func() bool {
		cat, err := openCatalog(context.Background(), "sql", "eddy", "sqlite://"+dir+"/catalog.db", "file://"+dir+"/warehouse", nil)
		if err != nil {
			return false
		}
		defer cat.(catalog.Closer).Close()
		tbl, err := cat.LoadTable(context.Background(), table.Identifier{"app", "a"})
		if err != nil {
			return false
		}
		_, renamed := tbl.Schema().FindFieldByName("label")
		return renamed
	}
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: int64(len(events)), RatePerSecond: 30000},
		func(i int64) int64 { return i }, eddy.NoWatermarks[int64]()).Parallelism(1)
	stream := eddy.Map(src, func(i int64) pipeline.Event {
		mu.Lock()
		boom := panicAt[i]
		delete(panicAt, i)
		if !altered && i > alterAt && catalogShowsAlter() {
			altered, boom = true, true
		}
		mu.Unlock()
		if boom {
			panic(fmt.Sprintf("injected failure at event %d", i))
		}
		return events[i]
	}).Parallelism(1)
	eddy.WriteTo(stream, "lake", sink)
	if err := env.Execute(context.Background(), "pipeline iceberg failures"); err != nil {
		t.Fatal(err)
	}
	if r := env.Restarts(); r != 3 {
		t.Fatalf("job restarted %d times, want 3", r)
	}
	cat := testCatalogAt(t, dir)
	for name, want := range map[string]map[int64]string{"a": wantA, "b": wantB} {
		tbl, err := cat.LoadTable(context.Background(), table.Identifier{"app", name})
		if err != nil {
			t.Fatal(err)
		}
		var rows []string
		for _, r := range want {
			rows = append(rows, r)
		}
		slices.Sort(rows)
		if got := scanRows(t, tbl); !slices.Equal(got, rows) {
			t.Errorf("app.%s holds %d rows, want %d; first differences:\n%s", name, len(got), len(rows), rowDiff(got, rows))
		}
		if name == "a" {
			var cols []string
			for _, f := range tbl.Schema().Fields() {
				cols = append(cols, f.Name)
			}
			if want := []string{"id", "v", "label", "w"}; !slices.Equal(cols, want) {
				t.Errorf("app.a has columns %q after the replayed schema change, want %q", cols, want)
			}
		}
	}
}

// TestPipelineSinkCompactsEvolvingTables writes a table whose schema
// changes twice (a column renamed, one widened and one added; then the
// added one dropped) while compaction runs: compacted files hold the rows
// of files of every schema, rewritten under the table's current one, and
// the table, read by iceberg-go's scan, holds the last write of each key.
func TestPipelineSinkCompactsEvolvingTables(t *testing.T) {
	for _, v := range []string{"2", "3"} {
		t.Run("v"+v, func(t *testing.T) {
			testPipelineCompaction(t, v)
		})
	}
}

func testPipelineCompaction(t *testing.T, formatVersion string) {
	const n, keys = 6000, 150
	dir := t.TempDir()
	sink := openPipelineSink(t, dir, map[string]string{
		"table.properties.format-version": formatVersion,
		"sink.compaction.enabled":         "true", "flink-maintenance.rewrite.min-input-files": "3",
	})
	orders := pipeline.TableID{Schema: "shop", Table: "orders"}
	id := types.F("id", types.Int().NotNull())
	v1 := &pipeline.Schema{Columns: types.MustRowType(id, types.F("name", types.String()), types.F("n", types.Int())), PrimaryKey: []string{"id"}, Version: 1}
	v2 := &pipeline.Schema{Columns: types.MustRowType(id, types.F("label", types.String()), types.F("n", types.BigInt()), types.F("note", types.String())), PrimaryKey: []string{"id"}, Version: 2}
	v3 := &pipeline.Schema{Columns: types.MustRowType(id, types.F("label", types.String()), types.F("n", types.BigInt())), PrimaryKey: []string{"id"}, Version: 3}
	const alterAt, dropAt = n / 3, 2 * n / 3
	// event i of the stream: the table's creation, its two changes, and
	// else a write (four in five) or deletion of key i%keys.
	event := func(i int64) pipeline.Event {
		switch i {
		case 0:
			return pipeline.Event{Kind: pipeline.CreateTable, Table: orders, Schema: v1}
		case alterAt:
			return pipeline.Event{Kind: pipeline.AlterTable, Table: orders, Schema: v2, Changes: []pipeline.SchemaChange{
				{Kind: pipeline.RenameColumn, Column: "name", NewName: "label"},
				{Kind: pipeline.AlterColumnType, Column: "n", Type: types.BigInt()},
				{Kind: pipeline.AddColumn, Column: "note", Type: types.String(), Position: 3},
			}}
		case dropAt:
			return pipeline.Event{Kind: pipeline.AlterTable, Table: orders, Schema: v3, Changes: []pipeline.SchemaChange{{Kind: pipeline.DropColumn, Column: "note"}}}
		}
		k, kind := int32(i%keys), changelog.Insert
		if i%5 == 4 {
			kind = changelog.Delete
		}
		var r types.Row
		switch {
		case i < alterAt:
			r = types.MustBuildRow(v1.Columns, nil, k, fmt.Sprintf("r%d", i), int32(i))
		case i < dropAt:
			r = types.MustBuildRow(v2.Columns, nil, k, fmt.Sprintf("r%d", i), i, "note")
		default:
			r = types.MustBuildRow(v3.Columns, nil, k, fmt.Sprintf("r%d", i), i)
		}
		s := v1
		if i > dropAt {
			s = v3
		} else if i > alterAt {
			s = v2
		}
		return pipeline.Event{Kind: pipeline.DataChange, Table: orders, Schema: s, Change: changelog.Of(kind, r)}
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: n, RatePerSecond: 6000}, event, eddy.NoWatermarks[pipeline.Event]()).Parallelism(1)
	eddy.WriteTo(src, "lake", sink)
	if err := env.Execute(context.Background(), "pipeline iceberg compaction"); err != nil {
		t.Fatal(err)
	}
	last := map[int64]int64{}
	for i := int64(1); i < n; i++ {
		if i == alterAt || i == dropAt {
			continue
		}
		if i%5 == 4 {
			delete(last, i%keys)
		} else {
			last[i%keys] = i
		}
	}
	var want []string
	for k, i := range last {
		want = append(want, fmt.Sprintf("%d | r%d | %d", k, i, i))
	}
	slices.Sort(want)
	tbl, err := testCatalogAt(t, dir).LoadTable(context.Background(), table.Identifier{"shop", "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if got := scanRows(t, tbl); !slices.Equal(got, want) {
		t.Fatalf("shop.orders holds %d rows, want %d; first differences:\n%s", len(got), len(want), rowDiff(got, want))
	}
	// A compaction under the last schema rewrote files of older ones.
	cur := tbl.Metadata().CurrentSchema().ID
	late := 0
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary != nil && s.Summary.Properties[summaryCompaction] != "" && s.SchemaID != nil && *s.SchemaID == cur {
			late++
		}
	}
	if compactions(tbl) == 0 || late == 0 {
		t.Fatalf("%d compactions, %d under the last schema", compactions(tbl), late)
	}
	t.Logf("%d snapshots, %d compactions (%d under the last schema)", len(tbl.Metadata().Snapshots()), compactions(tbl), late)
}

// openPipelineSink opens the pipeline's iceberg sink on a SQLite catalog
// and a warehouse under dir, with the further keys extra.
func openPipelineSink(t *testing.T, dir string, extra map[string]string) *PipelineSink {
	t.Helper()
	f, err := pipeline.Sinks.Connector("iceberg")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{
		"catalog.properties.uri": "sqlite://" + dir + "/catalog.db", "catalog.properties.warehouse": "file://" + dir + "/warehouse",
	}
	maps.Copy(keys, extra)
	spec := f.Spec()
	opts, err := spec.Validate(keys)
	if err != nil {
		t.Fatal(err)
	}
	sink, err := newPipelineSink(opts)
	if err != nil {
		t.Fatal(err)
	}
	return sink
}
