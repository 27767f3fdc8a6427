package iceberg

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	icebergo "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
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
	load := func(name string) *table.Table { return loadShopTable(t, cat, name) }
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
	runPipelineWithFailures(t, nil)
}

// TestPipelineSinkEqualityDeletesAcrossFailures runs the failure test of
// TestPipelineSinkExactlyOnceAcrossFailures in equality-delete mode, in
// format versions 2 and 3: the tables hold each change once, hold
// equality deletes, and every snapshot of the table whose schema does not
// change is a state of its changes.
func TestPipelineSinkEqualityDeletesAcrossFailures(t *testing.T) {
	for _, version := range []string{"2", "3"} {
		t.Run("v"+version, func(t *testing.T) {
			tables, statesB := runPipelineWithFailures(t, map[string]string{deleteModeOption: deleteModeEquality, "table.properties.format-version": version})
			for _, tbl := range tables {
				checkEqualityDeleteFiles(t, tbl)
			}
			b := tables["b"]
			for i, s := range b.Metadata().Snapshots() {
				if got := scanSnapshot(t, b, s.SnapshotID); !statesB[strings.Join(got, "\n")] {
					t.Fatalf("app.b, snapshot %d of %d (%d rows), is no state of the table's changes", i+1, len(b.Metadata().Snapshots()), len(got))
				}
			}
			t.Logf("app.b: %d snapshots", len(b.Metadata().Snapshots()))
		})
	}
}

// runPipelineWithFailures writes two tables, one of which changes its
// schema midway, through a sink of the keys extra and three failures,
// and checks that the tables hold each change once. It returns the tables
// a and b, and every state of b after a prefix of its changes (its sorted
// rows joined by newlines).
func runPipelineWithFailures(t *testing.T, extra map[string]string) (map[string]*table.Table, map[string]bool) {
	const n, keys = 12000, 150
	a, b := pipeline.TableID{Schema: "app", Table: "a"}, pipeline.TableID{Schema: "app", Table: "b"}
	id := types.F("id", types.BigInt().NotNull())
	v1 := &pipeline.Schema{Columns: types.MustRowType(id, types.F("v", types.Int()), types.F("tag", types.String())), PrimaryKey: []string{"id"}, Version: 1}
	v2 := &pipeline.Schema{Columns: types.MustRowType(id, types.F("v", types.BigInt()), types.F("label", types.String()), types.F("w", types.String())), PrimaryKey: []string{"id"}, Version: 2}
	bs := &pipeline.Schema{Columns: types.MustRowType(id, types.F("s", types.String())), PrimaryKey: []string{"id"}, Version: 1}
	events := []pipeline.Event{{Kind: pipeline.CreateTable, Table: a, Schema: v1}, {Kind: pipeline.CreateTable, Table: b, Schema: bs}}
	wantA, wantB := map[int64]string{}, map[int64]string{}
	statesB := map[string]bool{"": true}
	stateB := func() { statesB[strings.Join(slices.Sorted(maps.Values(wantB)), "\n")] = true }
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
			stateB()
		case i%3 == 0:
			events = append(events, pipeline.Event{Kind: pipeline.DataChange, Table: b, Schema: bs,
				Change: changelog.Of(changelog.UpdateAfter, types.MustBuildRow(bs.Columns, nil, k, fmt.Sprint("s", i)))})
			wantB[k] = fmt.Sprintf("%d | s%d", k, i)
			stateB()
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
	sink := openPipelineSink(t, dir, extra)
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
	tables := map[string]*table.Table{}
	for name, want := range map[string]map[int64]string{"a": wantA, "b": wantB} {
		tbl, err := cat.LoadTable(context.Background(), table.Identifier{"app", name})
		if err != nil {
			t.Fatal(err)
		}
		tables[name] = tbl
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
	return tables, statesB
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
		"flink-maintenance.rewrite.schedule.commit-count": "1",
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

// runPipelineBatch runs a job writing events through sink, without
// checkpoints: the end of its input commits one snapshot of each table the
// events wrote to.
func runPipelineBatch(t *testing.T, sink *PipelineSink, events []pipeline.Event) error {
	t.Helper()
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	// One subtask reads the events, in order.
	src := eddy.FromSlice(env, events, eddy.NoWatermarks[pipeline.Event]()).Parallelism(1)
	eddy.WriteTo(src, "lake", sink)
	return env.Execute(context.Background(), "pipeline iceberg batch")
}

// checkEqualityDeleteFiles checks that the delete files of tbl's current
// snapshot include equality deletes, each on the identifier fields of the
// table's current schema, and returns how many position-delete and
// equality-delete files it holds.
func checkEqualityDeleteFiles(t *testing.T, tbl *table.Table) (pos, eq int) {
	t.Helper()
	_, deletes := currentFiles(t, tbl)
	ids := slices.Sorted(slices.Values(tbl.Schema().IdentifierFieldIDs))
	for _, d := range deletes {
		switch d.ContentType() {
		case icebergo.EntryContentPosDeletes:
			pos++
		case icebergo.EntryContentEqDeletes:
			eq++
			if got := slices.Sorted(slices.Values(d.EqualityFieldIDs())); !slices.Equal(got, ids) {
				t.Errorf("%s: equality-delete file %s is on field ids %v, want the identifier fields %v", tbl.Identifier(), d.FilePath(), got, ids)
			}
		}
	}
	if eq == 0 {
		t.Errorf("%s: no equality-delete file among %d delete files", tbl.Identifier(), len(deletes))
	}
	return pos, eq
}

// loadShopTable loads the table shop.name of cat.
func loadShopTable(t *testing.T, cat catalog.Catalog, name string) *table.Table {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), table.Identifier{"shop", name})
	if err != nil {
		t.Fatalf("table shop.%s: %v", name, err)
	}
	return tbl
}

// TestPipelineSinkEqualityDeletes writes two tables in equality-delete
// mode, one snapshot per table and job over four jobs: inserts; updates,
// deletions, a key inserted and deleted in one snapshot and a key deleted
// and inserted again over its older row (apache/iceberg#15305); a column
// added midway through a snapshot, with keys changed before and after it;
// and more changes. Every committed snapshot, read by iceberg-go's scan,
// holds the expected rows, and the delete files are equality deletes on
// the identifier fields (and position deletes of rows replaced within a
// snapshot); no job keeps a key index, so each replaces the rows of the
// jobs before it.
func TestPipelineSinkEqualityDeletes(t *testing.T) {
	for _, version := range []string{"2", "3"} {
		t.Run("v"+version, func(t *testing.T) { testPipelineEqualityDeletes(t, version) })
	}
}

// testPipelineEqualityDeletes is TestPipelineSinkEqualityDeletes in
// format version formatVersion.
func testPipelineEqualityDeletes(t *testing.T, formatVersion string) {
	orders, items := pipeline.TableID{Schema: "shop", Table: "orders"}, pipeline.TableID{Schema: "shop", Table: "items"}
	id := types.F("id", types.Int().NotNull())
	o1 := &pipeline.Schema{Columns: types.MustRowType(id, types.F("name", types.String()), types.F("n", types.Int())), PrimaryKey: []string{"id"}, Version: 1}
	o2 := &pipeline.Schema{Columns: types.MustRowType(id, types.F("name", types.String()), types.F("n", types.Int()), types.F("note", types.String())), PrimaryKey: []string{"id"}, Version: 2}
	is := &pipeline.Schema{Columns: types.MustRowType(types.F("sku", types.String().NotNull()), types.F("qty", types.Int())), PrimaryKey: []string{"sku"}, Version: 1}
	row := func(s *pipeline.Schema, tid pipeline.TableID, kind changelog.Kind, vals ...types.Value) pipeline.Event {
		return pipeline.Event{Kind: pipeline.DataChange, Table: tid, Schema: s, Change: changelog.Of(kind, types.MustBuildRow(s.Columns, nil, vals...))}
	}
	o := func(kind changelog.Kind, k int32, name string, n int32) pipeline.Event {
		return row(o1, orders, kind, k, name, n)
	}
	on := func(kind changelog.Kind, k int32, name string, n int32, note string) pipeline.Event {
		return row(o2, orders, kind, k, name, n, note)
	}
	it := func(kind changelog.Kind, sku string, qty int32) pipeline.Event { return row(is, items, kind, sku, qty) }
	const (
		ins, del, ub, ua = changelog.Insert, changelog.Delete, changelog.UpdateBefore, changelog.UpdateAfter
	)
	batches := []struct {
		events        []pipeline.Event
		orders, items []string // the tables' rows after the batch
	}{{
		events: []pipeline.Event{
			{Kind: pipeline.CreateTable, Table: orders, Schema: o1}, {Kind: pipeline.CreateTable, Table: items, Schema: is},
			o(ins, 1, "a", 10), o(ins, 2, "b", 20), o(ins, 3, "c", 30), o(ins, 4, "d", 40), o(ins, 5, "e", 50),
			it(ins, "x", 1), it(ins, "y", 2), it(ins, "z", 3),
		},
		orders: []string{"1 | a | 10", "2 | b | 20", "3 | c | 30", "4 | d | 40", "5 | e | 50"},
		items:  []string{"x | 1", "y | 2", "z | 3"},
	}, {
		events: []pipeline.Event{
			o(ub, 1, "a", 10), o(ua, 1, "A", 11),
			o(del, 2, "b", 20),
			o(ins, 6, "f", 60), o(del, 6, "f", 60), // inserted and deleted: gone
			o(del, 3, "c", 30), o(ins, 3, "C", 31), // apache/iceberg#15305: the last row only
			o(ua, 4, "d1", 41), o(ua, 4, "d2", 42),
			it(del, "x", 1), it(ins, "w", 9), it(ua, "y", 20), it(ua, "y", 21), it(del, "z", 3), it(ins, "z", 30),
		},
		orders: []string{"1 | A | 11", "3 | C | 31", "4 | d2 | 42", "5 | e | 50"},
		items:  []string{"w | 9", "y | 21", "z | 30"},
	}, {
		events: []pipeline.Event{
			o(ua, 5, "e1", 51), o(del, 3, "C", 31), it(ua, "w", 10),
			{Kind: pipeline.AlterTable, Table: orders, Schema: o2, Changes: []pipeline.SchemaChange{
				{Kind: pipeline.AddColumn, Column: "note", Type: types.String(), Position: 3},
			}},
			// Keys changed before the column was added, changed again.
			on(ua, 5, "e2", 52, "after"), on(ins, 3, "C2", 32, "back"), on(ua, 3, "C3", 33, "again"),
			on(ins, 2, "b2", 22, "new"), on(ins, 7, "g", 70, "n7"), on(del, 4, "d2", 42, ""),
			it(ua, "w", 11), it(del, "y", 21),
		},
		orders: []string{"1 | A | 11 | (null)", "2 | b2 | 22 | new", "3 | C3 | 33 | again", "5 | e2 | 52 | after", "7 | g | 70 | n7"},
		items:  []string{"w | 11", "z | 30"},
	}, {
		events: []pipeline.Event{
			on(del, 1, "A", 11, ""), on(ua, 7, "g2", 71, "n7b"), on(del, 3, "C3", 33, ""), on(ins, 3, "C4", 34, "last"),
			on(ins, 8, "h", 80, "tmp"), on(del, 8, "h", 80, "tmp"),
			it(del, "w", 11), it(ins, "w", 12), it(ins, "v", 5), it(del, "v", 5),
		},
		orders: []string{"2 | b2 | 22 | new", "3 | C4 | 34 | last", "5 | e2 | 52 | after", "7 | g2 | 71 | n7b"},
		items:  []string{"w | 12", "z | 30"},
	}}
	dir := t.TempDir()
	opts := map[string]string{deleteModeOption: deleteModeEquality, "table.properties.format-version": formatVersion}
	cat := testCatalogAt(t, dir)
	load := func(name string) *table.Table { return loadShopTable(t, cat, name) }
	for i, b := range batches {
		// A sink of its own per job: nothing of the jobs before is kept.
		if err := runPipelineBatch(t, openPipelineSink(t, dir, opts), b.events); err != nil {
			t.Fatalf("job %d: %v", i+1, err)
		}
		for name, want := range map[string][]string{"orders": b.orders, "items": b.items} {
			tbl := load(name)
			if n := len(tbl.Metadata().Snapshots()); n != i+1 {
				t.Fatalf("job %d: shop.%s has %d snapshots, want %d", i+1, name, n, i+1)
			}
			if got := scanRows(t, tbl); !slices.Equal(got, want) {
				t.Errorf("job %d: shop.%s holds %q, want %q", i+1, name, got, want)
			}
			if i > 0 {
				checkEqualityDeleteFiles(t, tbl)
			}
		}
	}
	// Every snapshot, read again after the later ones (the older ones
	// under the current schema: a column added since reads NULL).
	for name, tbl := range map[string]*table.Table{"orders": load("orders"), "items": load("items")} {
		for i, s := range tbl.Metadata().Snapshots() {
			want := batches[i].items
			if name == "orders" {
				want = batches[i].orders
			}
			got := scanSnapshot(t, tbl, s.SnapshotID)
			if name == "orders" && i < 2 {
				for j := range got {
					got[j] = strings.TrimSuffix(got[j], " | (null)")
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("shop.%s, snapshot %d of %d: holds %q, want %q", name, i+1, len(tbl.Metadata().Snapshots()), got, want)
			}
		}
		// Rows replaced within a snapshot are deleted by position.
		if pos, _ := checkEqualityDeleteFiles(t, tbl); pos == 0 {
			t.Errorf("shop.%s: no position deletes of the rows replaced within a snapshot", name)
		}
	}
	if cols := load("orders").Schema().Fields(); len(cols) != 4 || cols[3].Name != "note" {
		t.Errorf("shop.orders has columns %v, want the column note added", cols)
	}
}

// TestPipelineSinkEqualityDeletesRefuses checks what equality-delete mode
// refuses: compaction (an option error), a table whose primary key is not
// its identifier fields any more, a table partitioned by a column outside
// the key, and TRUNCATE TABLE; each error names the table and the fix.
func TestPipelineSinkEqualityDeletesRefuses(t *testing.T) {
	for _, key := range []string{"compaction-enabled", "sink.compaction.enabled"} {
		dir := t.TempDir()
		opts, err := pipelineSpec.Validate(map[string]string{
			"catalog.properties.uri": "sqlite://" + dir + "/catalog.db", "catalog.properties.warehouse": "file://" + dir + "/warehouse",
			deleteModeOption: deleteModeEquality, key: "true",
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = newPipelineSink(opts)
		var oe *connector.OptionError
		if !errors.As(err, &oe) || oe.Key != deleteModeOption || !strings.Contains(err.Error(), "compaction") {
			t.Errorf("equality deletes with %s: got %v, want an option error of %s", key, err, deleteModeOption)
		}
	}

	id := types.F("id", types.Int().NotNull())
	v1 := &pipeline.Schema{Columns: types.MustRowType(id, types.F("name", types.String()), types.F("v", types.Int())), PrimaryKey: []string{"id"}, Version: 1}
	insert := func(s *pipeline.Schema, tid pipeline.TableID, vals ...types.Value) pipeline.Event {
		return pipeline.Event{Kind: pipeline.DataChange, Table: tid, Schema: s, Change: changelog.Of(changelog.Insert, types.MustBuildRow(s.Columns, nil, vals...))}
	}
	equality := map[string]string{deleteModeOption: deleteModeEquality}
	dir := t.TempDir()

	// The primary key changes after the table was created with it.
	orders := pipeline.TableID{Schema: "shop", Table: "orders"}
	if err := runPipelineBatch(t, openPipelineSink(t, dir, equality), []pipeline.Event{
		{Kind: pipeline.CreateTable, Table: orders, Schema: v1}, insert(v1, orders, int32(1), "a", int32(1)),
	}); err != nil {
		t.Fatal(err)
	}
	v2 := &pipeline.Schema{Columns: v1.Columns, PrimaryKey: []string{"id", "name"}, Version: 2}
	err := runPipelineBatch(t, openPipelineSink(t, dir, equality), []pipeline.Event{insert(v2, orders, int32(2), "b", int32(2))})
	if err == nil || !strings.Contains(err.Error(), "shop.orders") || !strings.Contains(err.Error(), "identifier fields") {
		t.Errorf("a changed primary key: got %v, want an error naming shop.orders and its identifier fields", err)
	}

	// A table partitioned by a column outside the key.
	ctx := context.Background()
	cat := testCatalogAt(t, dir)
	if _, err := loadOrCreatePartitionedTable(ctx, cat, "shop", "byv", &connector.Table{Schema: v1.Columns, PrimaryKey: []int{0}}, 2, nil, "v"); err != nil {
		t.Fatal(err)
	}
	byv := pipeline.TableID{Schema: "shop", Table: "byv"}
	err = runPipelineBatch(t, openPipelineSink(t, dir, equality), []pipeline.Event{insert(v1, byv, int32(1), "a", int32(1))})
	if err == nil || !strings.Contains(err.Error(), "shop.byv") || !strings.Contains(err.Error(), "not in the primary key") {
		t.Errorf("a table partitioned outside the key: got %v, want an error naming shop.byv", err)
	}

	// TRUNCATE TABLE.
	tmp := pipeline.TableID{Schema: "shop", Table: "tmp"}
	err = runPipelineBatch(t, openPipelineSink(t, dir, equality), []pipeline.Event{
		{Kind: pipeline.CreateTable, Table: tmp, Schema: v1}, insert(v1, tmp, int32(1), "a", int32(1)),
		{Kind: pipeline.TruncateTable, Table: tmp, Schema: v1},
	})
	if err == nil || !strings.Contains(err.Error(), "shop.tmp") || !strings.Contains(err.Error(), "TRUNCATE") {
		t.Errorf("TRUNCATE TABLE: got %v, want an error naming shop.tmp", err)
	}
}

// TestPipelineSinkEqualityDeletesPartitionedAndWidened writes, in
// equality-delete mode, a table partitioned by a bucket of its key, whose
// key column is widened from INT to BIGINT in the middle of a snapshot
// that changes keys before and after: every snapshot holds the last row
// of each key, the keys changed before the widening found again after it.
func TestPipelineSinkEqualityDeletesPartitionedAndWidened(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v1 := &pipeline.Schema{Columns: types.MustRowType(types.F("id", types.Int().NotNull()), types.F("s", types.String())), PrimaryKey: []string{"id"}, Version: 1}
	v2 := &pipeline.Schema{Columns: types.MustRowType(types.F("id", types.BigInt().NotNull()), types.F("s", types.String())), PrimaryKey: []string{"id"}, Version: 2}
	if _, err := loadOrCreatePartitionedTable(ctx, testCatalogAt(t, dir), "shop", "p", &connector.Table{Schema: v1.Columns, PrimaryKey: []int{0}}, 2, nil, "bucket(4, id)"); err != nil {
		t.Fatal(err)
	}
	p := pipeline.TableID{Schema: "shop", Table: "p"}
	ev := func(s *pipeline.Schema, kind changelog.Kind, k int64, v string) pipeline.Event {
		key := types.Value(k)
		if s == v1 {
			key = int32(k)
		}
		return pipeline.Event{Kind: pipeline.DataChange, Table: p, Schema: s, Change: changelog.Of(kind, types.MustBuildRow(s.Columns, nil, key, v))}
	}
	var first []pipeline.Event
	var want1 []string
	for k := int64(1); k <= 8; k++ {
		first = append(first, ev(v1, changelog.Insert, k, "a"))
		want1 = append(want1, fmt.Sprintf("%d | a", k))
	}
	second := []pipeline.Event{
		ev(v1, changelog.UpdateAfter, 1, "b"), ev(v1, changelog.Delete, 2, ""), ev(v1, changelog.UpdateAfter, 3, "b"), ev(v1, changelog.Insert, 9, "b"),
		{Kind: pipeline.AlterTable, Table: p, Schema: v2, Changes: []pipeline.SchemaChange{{Kind: pipeline.AlterColumnType, Column: "id", Type: types.BigInt().NotNull()}}},
		ev(v2, changelog.UpdateAfter, 1, "c"), ev(v2, changelog.Insert, 2, "c"), ev(v2, changelog.Delete, 3, ""), ev(v2, changelog.UpdateAfter, 9, "c"),
	}
	// No key first changed after the widening: iceberg-go's scan matches
	// an equality delete against a data file's values as the file stores
	// them, so a BIGINT key does not match the INT rows of older files
	// (readers that promote the file's values first, as Iceberg's Java
	// library does, match it).
	want2 := []string{"1 | c", "2 | c", "4 | a", "5 | a", "6 | a", "7 | a", "8 | a", "9 | c"}
	equality := map[string]string{deleteModeOption: deleteModeEquality}
	for i, events := range [][]pipeline.Event{first, second} {
		if err := runPipelineBatch(t, openPipelineSink(t, dir, equality), events); err != nil {
			t.Fatalf("job %d: %v", i+1, err)
		}
	}
	tbl, err := testCatalogAt(t, dir).LoadTable(ctx, table.Identifier{"shop", "p"})
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := tbl.Schema().FindFieldByName("id"); f.Type.String() != "long" {
		t.Errorf("shop.p: column id is %s, want long", f.Type)
	}
	snaps := tbl.Metadata().Snapshots()
	if len(snaps) != 2 {
		t.Fatalf("shop.p has %d snapshots, want 2", len(snaps))
	}
	for i, want := range [][]string{want1, want2} {
		if got := scanSnapshot(t, tbl, snaps[i].SnapshotID); !slices.Equal(got, want) {
			t.Errorf("shop.p, snapshot %d: holds %q, want %q", i+1, got, want)
		}
	}
	checkEqualityDeleteFiles(t, tbl)
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := snapshotFiles(tbl, fsys)
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string]bool{}
	for _, d := range data {
		parts[fmt.Sprint(d.Partition())] = true
	}
	if len(parts) < 2 {
		t.Errorf("shop.p: the data files are of %d partitions, want the buckets of the keys", len(parts))
	}
}

// TestPipelineSinkPartitionedTable writes changes into an existing table
// partitioned by a bucket of its key and by a column outside it, through
// the key index and position deletes: rows go to the files of their
// partitions, and a key's row that moves to another partition is deleted
// from its old one.
func TestPipelineSinkPartitionedTable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := &pipeline.Schema{Columns: types.MustRowType(types.F("id", types.Int().NotNull()), types.F("region", types.String())), PrimaryKey: []string{"id"}, Version: 1}
	if _, err := loadOrCreatePartitionedTable(ctx, testCatalogAt(t, dir), "shop", "p", &connector.Table{Schema: s.Columns, PrimaryKey: []int{0}}, 2, nil, "bucket(4, id), region"); err != nil {
		t.Fatal(err)
	}
	p := pipeline.TableID{Schema: "shop", Table: "p"}
	ev := func(kind changelog.Kind, k int32, region string) pipeline.Event {
		return pipeline.Event{Kind: pipeline.DataChange, Table: p, Schema: s, Change: changelog.Of(kind, types.MustBuildRow(s.Columns, nil, k, region))}
	}
	var events []pipeline.Event
	for k := int32(1); k <= 8; k++ {
		events = append(events, ev(changelog.Insert, k, "eu"))
	}
	events = append(events, ev(changelog.UpdateAfter, 1, "us"), ev(changelog.Delete, 2, "eu"), ev(changelog.UpdateAfter, 3, "eu"), ev(changelog.UpdateAfter, 1, "ap"))
	if err := runPipelineBatch(t, openPipelineSink(t, dir, nil), events); err != nil {
		t.Fatal(err)
	}
	tbl, err := testCatalogAt(t, dir).LoadTable(ctx, table.Identifier{"shop", "p"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1 | ap", "3 | eu", "4 | eu", "5 | eu", "6 | eu", "7 | eu", "8 | eu"}
	if got := scanRows(t, tbl); !slices.Equal(got, want) {
		t.Errorf("shop.p holds %q, want %q", got, want)
	}
}
