package iceberg

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// writeChanges writes changes into the table db.name under dir through
// the iceberg sink, in one job: one snapshot. With a key the changes
// upsert, without one they are appended.
func writeChanges(t testing.TB, dir, name string, rt *types.RowType, key []int, changes []connector.TableRecord) {
	t.Helper()
	sink, err := connector.OpenTableSink(connector.Default, "iceberg", sinkOptions(dir, name), &connector.Table{Schema: rt, PrimaryKey: key})
	if err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	src := eddy.FromSlice(env, changes, eddy.NoWatermarks[connector.TableRecord]())
	if len(key) > 0 {
		k := types.NewKeyEncoder(rt, key...)
		eddy.WriteUpserts(eddy.AsChangelog(src, changelog.Upsert), name, k.Key, sink, eddy.KeyedBySinkKey())
	} else {
		eddy.WriteTo(eddy.AsChangelog(src, changelog.InsertOnly), name, sink)
	}
	if err := env.Execute(context.Background(), "write-"+name); err != nil {
		t.Fatal(err)
	}
}

// writeKV writes changes [0, n) of the test stream (kvChange) into the
// upsert table db.name under dir, in one job with checkpoints: a snapshot
// per checkpoint, later ones deleting rows of earlier ones.
func writeKV(t testing.TB, dir, name string, n, keys int64) {
	t.Helper()
	writeKVAt(t, dir, name, n, keys, 20000)
}

// writeKVAt is writeKV with the changes generated at rate per second.
func writeKVAt(t testing.TB, dir, name string, n, keys int64, rate float64) {
	t.Helper()
	sink, err := connector.OpenTableSink(connector.Default, "iceberg", sinkOptions(dir, name), &connector.Table{Schema: upsertType, PrimaryKey: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: n, RatePerSecond: rate},
		func(i int64) connector.TableRecord { return kvChange(i, keys) }, eddy.NoWatermarks[connector.TableRecord]()).Parallelism(1)
	key := types.NewKeyEncoder(upsertType, 0)
	eddy.WriteUpserts(eddy.AsChangelog(src, changelog.Upsert), name, key.Key, sink, eddy.KeyedBySinkKey())
	if err := env.Execute(context.Background(), "write-"+name); err != nil {
		t.Fatal(err)
	}
}

// writeKVSnapshots writes changes [0, n) of the test stream as writeKV
// does, into a table db.name of a new directory, until the table has at
// least min snapshots (one per checkpoint completed while the changes are
// written): a loaded machine completes fewer checkpoints in the same time,
// so the table is written again, more slowly, in a fresh directory. It
// returns the directory, the table and its snapshots, newest first.
func writeKVSnapshots(t *testing.T, name string, n, keys int64, min int) (string, *table.Table, []table.Snapshot) {
	t.Helper()
	var took time.Duration
	for _, rate := range []float64{20000, 4000, 800} {
		dir := t.TempDir()
		start := time.Now()
		writeKVAt(t, dir, name, n, keys, rate)
		took += time.Since(start)
		tbl := loadTestTable(t, dir, name)
		if snaps := table.AncestorsOf(tbl.CurrentSnapshot().SnapshotID, tbl.SnapshotByID); len(snaps) >= min {
			return dir, tbl, snaps
		}
	}
	t.Fatalf("fewer than %d snapshots in 3 writes of %d changes (%v in all): the test needs a few", min, n, took)
	return "", nil, nil
}

// openSource opens the iceberg source of db.name under dir with extra
// options.
func openSource(t testing.TB, dir, name string, rt *types.RowType, extra map[string]string) connector.Source[connector.TableRecord] {
	t.Helper()
	opts := sinkOptions(dir, name)
	for k, v := range extra {
		opts[k] = v
	}
	src, err := connector.OpenTableSource(connector.Default, "iceberg", opts, &connector.Table{Schema: rt})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// readRows reads src to its end at parallelism p and returns its rows
// rendered by render, sorted.
func readRows(t *testing.T, src connector.Source[connector.TableRecord], p int, render func(connector.TableRecord) string) ([]string, error) {
	t.Helper()
	env := eddy.NewEnvironment(eddy.WithParallelism(p))
	mem := connectortest.NewMemorySink[string]()
	s := eddy.FromSource(env, "iceberg", src, eddy.NoWatermarks[connector.TableRecord]())
	eddy.WriteTo(eddy.Map(s, render), "out", mem.Sink())
	if err := env.Execute(context.Background(), "read"); err != nil {
		return nil, err
	}
	got := mem.Committed()
	slices.Sort(got)
	return got, nil
}

// kvRender renders a row of upsertType as kvState does.
func kvRender(c connector.TableRecord) string {
	return fmt.Sprintf("%s%d | %d | %s", kindPrefix(c.Kind), c.Row.Int64(0), c.Row.Int64(1), c.Row.String(2))
}

func kindPrefix(k changelog.Kind) string {
	if k == changelog.Insert {
		return ""
	}
	return k.String() + " "
}

// kvChanges returns changes [from, to) of the test stream (kvChange).
func kvChanges(from, to, keys int64) []connector.TableRecord {
	out := make([]connector.TableRecord, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, kvChange(i, keys))
	}
	return out
}

// appendRows returns insertions of rows (id, seq, note) for ids [from, to).
func appendRows(from, to int64) []connector.TableRecord {
	out := make([]connector.TableRecord, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, changelog.Of(changelog.Insert, types.MustBuildRow(upsertType, nil, i, i*10, "n"+strconv.FormatInt(i, 10))))
	}
	return out
}

func renderAll(rt *types.RowType, rs []connector.TableRecord) []string {
	var out []string
	for _, r := range rs {
		out = append(out, types.FormatRow(rt, r.Row))
	}
	slices.Sort(out)
	return out
}

func TestSourceReadsEveryType(t *testing.T) {
	rt := types.MustRowType(
		types.F("b", types.Boolean()),
		types.F("ti", types.TinyInt()),
		types.F("si", types.SmallInt()),
		types.F("i", types.Int()),
		types.F("l", types.BigInt()),
		types.F("f", types.Float()),
		types.F("d", types.Double()),
		types.F("dec", types.DecimalType(12, 3)),
		types.F("big", types.DecimalType(38, 2)),
		types.F("s", types.String()),
		types.F("vb", types.Bytes()),
		types.F("dt", types.DateType()),
		types.F("tm", types.TimeType(3)),
		types.F("ts", types.TimestampType(6)),
		types.F("ts3", types.TimestampType(3)),
		types.F("ltz", types.TimestampLTZType(3)),
		types.F("r", types.RowOf(types.F("x", types.Int().NotNull()), types.F("y", types.String()))),
		types.F("a", types.ArrayOf(types.BigInt())),
		types.F("aa", types.ArrayOf(types.ArrayOf(types.String()))),
		types.F("m", types.MapOf(types.String().NotNull(), types.Double())),
	)
	parse := func(i int, text string) types.Value {
		v, err := types.ParseValue(rt.FieldType(i), text, time.UTC)
		if err != nil {
			t.Fatalf("column %s: %v", rt.Field(i).Name, err)
		}
		return v
	}
	texts := [][]string{
		{"TRUE", "-7", "300", "70000", "9000000000", "1.5", "-2.25", "12345.678", "123456789012345678901234567890123.45", "héllo", "AQI=", "2024-02-29", "12:34:56.789",
			"2024-01-02 03:04:05.123456", "1969-12-31 23:59:59.999", "2024-01-02 03:04:05.006"},
		{"FALSE", "0", "0", "0", "-1", "0.0", "0.0", "-0.001", "-1.00", "", "", "1970-01-01", "00:00:00", "1970-01-01 00:00:00", "1900-01-01 00:00:00.5", "1970-01-01 00:00:00"},
	}
	nested := [][]types.Value{
		{[]types.Value{int32(1), "a"}, []types.Value{int64(1), nil, int64(3)}, []types.Value{[]types.Value{"a", "b"}, []types.Value{}, nil},
			[]types.MapEntry{{Key: "k1", Value: 1.5}, {Key: "k2", Value: nil}}},
		{[]types.Value{int32(2), nil}, []types.Value{}, []types.Value{}, []types.MapEntry{}},
	}
	var rows []connector.TableRecord
	for k, tx := range texts {
		var vals []types.Value
		for i, text := range tx {
			vals = append(vals, parse(i, text))
		}
		vals = append(vals, nested[k]...)
		rows = append(rows, changelog.Of(changelog.Insert, types.MustBuildRow(rt, nil, vals...)))
	}
	rows = append(rows, changelog.Of(changelog.Insert, types.MustBuildRow(rt, nil, make([]types.Value, rt.Len())...)))
	dir := t.TempDir()
	writeChanges(t, dir, "all", rt, nil, rows)
	render := func(c connector.TableRecord) string { return types.FormatRow(rt, c.Row) }
	got, err := readRows(t, openSource(t, dir, "all", rt, nil), 2, render)
	if err != nil {
		t.Fatal(err)
	}
	if want := renderAll(rt, rows); !slices.Equal(got, want) {
		t.Fatalf("read\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A projection reads some columns, in its own order.
	src := openSource(t, dir, "all", rt, nil).(connector.ProjectableSource)
	proj, ok := src.ProjectFields([][]int{{17}, {0}, {9}})
	if !ok {
		t.Fatal("ProjectFields of top-level columns refused")
	}
	prt := types.MustRowType(rt.Field(17), rt.Field(0), rt.Field(9))
	got, err = readRows(t, proj, 1, func(c connector.TableRecord) string { return types.FormatRow(prt, c.Row) })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"+I[[1, null, 3], true, héllo]", "+I[[], false, ]", "+I[null, null, null]"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("projection read %q, want %q", got, want)
	}
}

func TestSourceBatchAppliesDeletesAndTravelsInTime(t *testing.T) {
	const n, keys = 4000, 60
	dir, tbl, snaps := writeKVSnapshots(t, "kv", n, keys, 3)
	if s := tbl.CurrentSnapshot(); s.Summary == nil || s.Summary.Properties["total-position-deletes"] == "0" {
		t.Fatalf("the table has no position deletes (summary %v): the test needs some", s.Summary)
	}
	mid := snaps[len(snaps)/2]
	asOf := tbl.SnapshotAsOf(mid.TimestampMs, true)
	for _, c := range []struct {
		name string
		opts map[string]string
		want []string
	}{
		{"current", nil, kvState(n, keys)},
		{"snapshot-id", map[string]string{"snapshot-id": strconv.FormatInt(mid.SnapshotID, 10)}, scanSnapshot(t, tbl, mid.SnapshotID)},
		{"as-of-timestamp", map[string]string{"as-of-timestamp": strconv.FormatInt(mid.TimestampMs, 10)}, scanSnapshot(t, tbl, asOf.SnapshotID)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := readRows(t, openSource(t, dir, "kv", upsertType, c.opts), 2, kvRender)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("read %d rows, want %d:\n%s", len(got), len(c.want), rowDiff(got, c.want))
			}
		})
	}
}

func TestSourceErrors(t *testing.T) {
	dir := t.TempDir()
	writeChanges(t, dir, "log", upsertType, nil, appendRows(0, 10))
	writeChanges(t, dir, "log", upsertType, nil, appendRows(10, 20))
	tbl := loadTestTable(t, dir, "log")
	newest := strconv.FormatInt(tbl.CurrentSnapshot().SnapshotID, 10)

	_, err := readRows(t, openSource(t, dir, "log", upsertType, map[string]string{"snapshot-id": "12345"}), 1, kvRender)
	if err == nil {
		t.Fatal("no error for an unknown snapshot id")
	}
	for _, want := range []string{"'snapshot-id'", "12345", "db.log", newest} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}

	wide := types.MustRowType(types.F("id", types.BigInt().NotNull()), types.F("seq", types.BigInt()), types.F("extra", types.String()))
	_, err = readRows(t, openSource(t, dir, "log", wide, nil), 1, kvRender)
	if err == nil || !strings.Contains(err.Error(), "`extra`") || !strings.Contains(err.Error(), "db.log") {
		t.Errorf("reading a column the table lacks: %v, want an error naming the column and the table", err)
	}

	opts := sinkOptions(dir, "log")
	opts["streaming"] = "true"
	opts["starting-strategy"] = "INCREMENTAL_FROM_SNAPSHOT_ID"
	if _, err := connector.OpenTableSource(connector.Default, "iceberg", opts, &connector.Table{Schema: upsertType}); err == nil || !strings.Contains(err.Error(), "start-snapshot-id") {
		t.Errorf("INCREMENTAL_FROM_SNAPSHOT_ID without 'start-snapshot-id': %v", err)
	}
}

// streamInto starts a job reading src into a memory sink with
// checkpoints, and returns the sink and a function that stops the job
// and returns its error (nil once cancelled).
func streamInto(t *testing.T, src connector.Source[connector.TableRecord], p int) (*connectortest.MemorySink[string], func() error) {
	t.Helper()
	env := eddy.NewEnvironment(eddy.WithParallelism(p), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	mem := connectortest.NewMemorySink[string]()
	s := eddy.FromSource(env, "iceberg", src, eddy.NoWatermarks[connector.TableRecord]())
	eddy.WriteTo(eddy.Map(s, kvRender), "out", mem.Sink())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "stream") }()
	var once sync.Once
	var res error
	stop := func() error {
		once.Do(func() {
			cancel()
			res = <-done
			if errors.Is(res, context.Canceled) {
				res = nil
			}
		})
		return res
	}
	t.Cleanup(func() { _ = stop() })
	return mem, stop
}

// waitRows waits until mem holds n rows or the job ended.
func waitRows(t *testing.T, mem *connectortest.MemorySink[string], n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := mem.WaitFor(ctx, n); err != nil {
		t.Fatalf("waiting for %d rows (have %d): %v", n, len(mem.Committed()), err)
	}
}

func TestSourceStreamingFollowsAppends(t *testing.T) {
	dir := t.TempDir()
	writeChanges(t, dir, "log", upsertType, nil, appendRows(0, 100))
	mem, stop := streamInto(t, openSource(t, dir, "log", upsertType, map[string]string{"streaming": "true", "monitor-interval": "10 ms"}), 2)
	waitRows(t, mem, 100)
	writeChanges(t, dir, "log", upsertType, nil, appendRows(100, 250))
	writeChanges(t, dir, "log", upsertType, nil, appendRows(250, 300))
	waitRows(t, mem, 300)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	got := mem.Committed()
	slices.Sort(got)
	var want []string
	for _, r := range appendRows(0, 300) {
		want = append(want, kvRender(r))
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("streamed %d rows, want %d:\n%s", len(got), len(want), rowDiff(got, want))
	}

	// Starting from the latest snapshot reads what it appended and later.
	last := loadTestTable(t, dir, "log").CurrentSnapshot().SnapshotID
	mem, stop = streamInto(t, openSource(t, dir, "log", upsertType, map[string]string{"streaming": "true", "monitor-interval": "10 ms",
		"starting-strategy": "INCREMENTAL_FROM_SNAPSHOT_ID", "start-snapshot-id": strconv.FormatInt(last, 10)}), 1)
	writeChanges(t, dir, "log", upsertType, nil, appendRows(300, 310))
	waitRows(t, mem, 60)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	got = mem.Committed()
	slices.Sort(got)
	want = want[:0]
	for _, r := range append(appendRows(250, 300), appendRows(300, 310)...) {
		want = append(want, kvRender(r))
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("streamed from snapshot %d: %d rows, want %d:\n%s", last, len(got), len(want), rowDiff(got, want))
	}
}

func TestSourceStreamingFailsOnDeletes(t *testing.T) {
	dir, _, snaps := writeKVSnapshots(t, "kv", 3000, 40, 2)
	var first int64 // the oldest snapshot that is not an append
	for _, s := range snaps {
		if s.Summary.Operation != table.OpAppend {
			first = s.SnapshotID
		}
	}
	if first == 0 {
		t.Fatal("every snapshot is an append: the test needs one that deletes rows")
	}
	src := openSource(t, dir, "kv", upsertType, map[string]string{"streaming": "true", "monitor-interval": "10 ms", "starting-strategy": "INCREMENTAL_FROM_EARLIEST_SNAPSHOT"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	s := eddy.FromSource(env, "iceberg", src, eddy.NoWatermarks[connector.TableRecord]())
	eddy.WriteTo(eddy.Map(s, kvRender), "out", connectortest.NewMemorySink[string]().Sink())
	err := env.Execute(ctx, "stream-deletes")
	if err == nil || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		t.Fatalf("streaming over a snapshot that deletes rows: %v, want the job to fail", err)
	}
	for _, want := range []string{"snapshot " + strconv.FormatInt(first, 10), "db.kv", "streaming reads of upsert tables", "'streaming' = 'false'"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// withOptions renders options as the WITH clause of a DDL.
func withOptions(opts map[string]string) string {
	var kv []string
	for k, v := range opts {
		kv = append(kv, fmt.Sprintf("'%s' = '%s'", k, v))
	}
	slices.Sort(kv)
	return "'connector' = 'iceberg', " + strings.Join(kv, ", ")
}

func TestSourceSQLInsertSelect(t *testing.T) {
	const keys = 40
	dir := t.TempDir()
	writeKV(t, dir, "src", 300, keys)
	s := sql.NewSession(sql.WithParallelism(2))
	script := fmt.Sprintf(`
CREATE TABLE t (id BIGINT NOT NULL, seq BIGINT, note STRING) WITH (%s);
CREATE TABLE other (id BIGINT NOT NULL, seq BIGINT, note STRING) WITH (%s);
INSERT INTO other SELECT * FROM t;
`, withOptions(sinkOptions(dir, "src")), withOptions(sinkOptions(dir, "copy")))
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	if err := env.Execute(context.Background(), "copy"); err != nil {
		t.Fatal(err)
	}
	if got, want := scanRows(t, loadTestTable(t, dir, "copy")), kvState(300, keys); !slices.Equal(got, want) {
		t.Fatalf("the copy holds %d rows, want %d:\n%s", len(got), len(want), rowDiff(got, want))
	}
}

func TestSourceConformance(t *testing.T) {
	connectortest.RunSource(t, connectortest.SourceCase[connector.TableRecord]{
		Open: func(t testing.TB) (connector.Source[connector.TableRecord], func()) {
			dir := t.TempDir()
			writeKV(t, dir, "kv", 3000, 2000)
			return openSource(t, dir, "kv", upsertType, nil), nil
		},
		Key: kvRender,
	})
}

func TestStreamingSourceConformance(t *testing.T) {
	connectortest.RunSource(t, connectortest.SourceCase[connector.TableRecord]{
		Open: func(t testing.TB) (connector.Source[connector.TableRecord], func()) {
			dir := t.TempDir()
			for i := int64(0); i < 3; i++ {
				writeChanges(t, dir, "log", upsertType, nil, appendRows(i*300, i*300+300))
			}
			grow := func() {
				writeChanges(t, dir, "log", upsertType, nil, appendRows(900, 1200))
				writeChanges(t, dir, "log", upsertType, nil, appendRows(1200, 1500))
			}
			return openSource(t, dir, "log", upsertType, map[string]string{"streaming": "true", "monitor-interval": "5 ms"}), grow
		},
		Want:       appendRows(0, 1500),
		Unbounded:  true,
		Key:        kvRender,
		Seq:        func(c connector.TableRecord) int64 { return c.Row.Int64(0) },
		PauseAfter: 400,
	})
}

func TestSourceExactlyOnceAcrossFailures(t *testing.T) {
	const n, keys = 20000, 3000
	dir := t.TempDir()
	writeKV(t, dir, "kv", n, keys)
	run := func(panicAt map[int64]bool) ([]string, int) {
		env := eddy.NewEnvironment(eddy.WithParallelism(2),
			eddy.WithCheckpointing(10*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()),
			eddy.WithRestartStrategy(eddy.FixedDelayRestart(10, 5*time.Millisecond)))
		var mu sync.Mutex
		mem := connectortest.NewMemorySink[string]()
		s := eddy.FromSource(env, "iceberg", openSource(t, dir, "kv", upsertType, nil), eddy.NoWatermarks[connector.TableRecord]())
		eddy.WriteTo(eddy.Map(s, func(c connector.TableRecord) string {
			id := c.Row.Int64(0)
			mu.Lock()
			boom := panicAt[id]
			delete(panicAt, id)
			mu.Unlock()
			if boom {
				panic(fmt.Sprintf("injected failure at key %d", id))
			}
			return kvRender(c)
		}), "out", mem.Sink())
		if err := env.Execute(context.Background(), "read-with-failures"); err != nil {
			t.Fatal(err)
		}
		got := mem.Committed()
		slices.Sort(got)
		return got, env.Restarts()
	}
	want, _ := run(map[int64]bool{})
	if exp := kvState(n, keys); !slices.Equal(want, exp) {
		t.Fatalf("a run without failures read %d rows, want %d:\n%s", len(want), len(exp), rowDiff(want, exp))
	}
	// Keys to fail at: spread over the table's rows.
	fail := map[int64]bool{}
	for _, r := range []int{len(want) / 5, len(want) / 2, len(want) * 4 / 5} {
		id, _ := strconv.ParseInt(strings.SplitN(want[r], " ", 2)[0], 10, 64)
		fail[id] = true
	}
	got, restarts := run(fail)
	// Two readers may fail in one attempt: one restart, or up to three.
	if restarts < 1 || restarts > 3 || len(fail) > 0 {
		t.Errorf("the job restarted %d times, with keys %v still to fail at; want 1 to 3 restarts and every failure injected", restarts, fail)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("with failures the job read %d rows, without %d:\n%s", len(got), len(want), rowDiff(got, want))
	}
}
