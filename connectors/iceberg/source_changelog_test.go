package iceberg

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// upsertStep is one commit of the changelog tests: keys [from, to) are
// written (op 'w', the row (k, seq, "s<seq>") with seq = step*1000+k) or
// deleted (op 'd').
type upsertStep struct {
	op       byte
	from, to int64
}

// upsertCommits are the commits of the changelog tests, each one
// snapshot: inserts, updates of rows of older files and of the same
// commit, deletes, and keys deleted then written again.
var upsertCommits = [][]upsertStep{
	{{'w', 0, 100}},
	{{'w', 0, 30}, {'d', 30, 40}, {'w', 100, 120}, {'w', 5, 10}},
	{{'d', 0, 10}, {'w', 40, 60}, {'w', 30, 35}, {'d', 110, 115}},
	{{'w', 10, 20}, {'w', 100, 110}, {'d', 60, 70}, {'w', 0, 3}},
	{{'d', 0, 120}, {'w', 200, 210}},
	{{'w', 0, 50}, {'d', 205, 210}},
}

// upsertChanges returns the changes of commit c (see upsertCommits).
func upsertChanges(c int) []connector.TableRecord {
	var out []connector.TableRecord
	written := map[int64]bool{}
	for _, s := range upsertCommits[c] {
		for k := s.from; k < s.to; k++ {
			if s.op == 'd' {
				out = append(out, changelog.Of(changelog.Delete, types.MustBuildRow(upsertType, nil, k, nil, nil)))
				continue
			}
			seq := int64(c)*1000 + k
			if written[k] { // a second write of the key in the commit
				seq += 500
			}
			written[k] = true
			out = append(out, changelog.Of(changelog.UpdateAfter, types.MustBuildRow(upsertType, nil, k, seq, "s"+strconv.FormatInt(seq, 10))))
		}
	}
	return out
}

// feedSource is a source of the changes a test adds (add) while it runs:
// one split, whose position is the number of changes emitted.
type feedSource struct {
	mu   sync.Mutex
	recs []connector.TableRecord
}

func (f *feedSource) add(rs ...connector.TableRecord) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.recs = append(f.recs, rs...)
}

func (f *feedSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) {
		return []connector.Split{{ID: "feed", State: binary.AppendVarint(nil, 0)}}, nil
	})
}

func (f *feedSource) NewReader(connector.ReaderContext) (connector.Reader[connector.TableRecord], error) {
	return &feedReader{src: f}, nil
}

type feedReader struct {
	src *feedSource
	has bool
	pos int
}

func (r *feedReader) AddSplits(splits []connector.Split) error {
	for _, s := range splits {
		v, n := binary.Varint(s.State)
		if n <= 0 {
			return fmt.Errorf("feed split state %q", s.State)
		}
		r.has, r.pos = true, int(v)
	}
	return nil
}

func (r *feedReader) Read(out connector.Output[connector.TableRecord]) error {
	if !r.has {
		return nil
	}
	r.src.mu.Lock()
	defer r.src.mu.Unlock()
	so := out.Split("feed")
	for r.pos < len(r.src.recs) && out.Room() > 0 {
		so.Emit(r.src.recs[r.pos])
		r.pos++
	}
	return nil
}

func (r *feedReader) SnapshotState(int64) ([]connector.Split, error) {
	if !r.has {
		return nil, nil
	}
	return []connector.Split{{ID: "feed", State: binary.AppendVarint(nil, int64(r.pos))}}, nil
}

func (r *feedReader) Close() error { return nil }

// upsertWriter is a job writing the changes of upsertCommits into the
// upsert table (key id) db.kv under dir, through the iceberg sink: a
// snapshot per checkpoint, later ones deleting rows of earlier ones.
type upsertWriter struct {
	t     *testing.T
	dir   string
	feed  *feedSource
	state map[int64]string // the table as the commits so far leave it
	stop  func()
}

func startUpsertWriter(t *testing.T, dir string, extra map[string]string) *upsertWriter {
	t.Helper()
	opts := sinkOptions(dir, "kv")
	for k, v := range extra {
		opts[k] = v
	}
	sink, err := connector.OpenTableSink(connector.Default, "iceberg", opts, &connector.Table{Schema: upsertType, PrimaryKey: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	w := &upsertWriter{t: t, dir: dir, feed: &feedSource{}, state: map[int64]string{}}
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	src := eddy.FromSource(env, "feed", connector.Source[connector.TableRecord](w.feed), eddy.NoWatermarks[connector.TableRecord]()).Parallelism(1)
	k := types.NewKeyEncoder(upsertType, 0)
	eddy.WriteUpserts(eddy.AsChangelog(src, changelog.Upsert), "kv", k.Key, sink, eddy.KeyedBySinkKey())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "write-kv") }()
	var once sync.Once
	w.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("the writer job: %v", err)
			}
		})
	}
	t.Cleanup(w.stop)
	return w
}

// commit writes the changes of commit c and waits until the table holds
// them.
func (w *upsertWriter) commit(c int) {
	w.t.Helper()
	changes := upsertChanges(c)
	for _, ch := range changes {
		k := ch.Row.Int64(0)
		if ch.Kind == changelog.Delete {
			delete(w.state, k)
		} else {
			w.state[k] = fmt.Sprintf("%d | %d | %s", k, ch.Row.Int64(1), ch.Row.String(2))
		}
	}
	want := slices.Sorted(maps.Values(w.state))
	w.feed.add(changes...)
	deadline := time.Now().Add(90 * time.Second)
	cat := testCatalogAt(w.t, w.dir)
	for {
		tbl, err := cat.LoadTable(context.Background(), table.Identifier{"db", "kv"})
		if err == nil && tbl.CurrentSnapshot() != nil {
			if got := scanSnapshot(w.t, tbl, tbl.CurrentSnapshot().SnapshotID); slices.Equal(got, want) {
				return
			}
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("the writer did not commit the changes of commit %d (%v)", c, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tableHistory returns the changes between the snapshots of db.kv under
// dir, from the oldest to the current one, each found by comparing batch
// reads of a snapshot and its parent: what a changelog read must emit.
func tableHistory(t *testing.T, dir string) []connector.TableRecord {
	tbl := loadTestTable(t, dir, "kv")
	snaps := slices.Collect(func(yield func(table.Snapshot) bool) {
		for _, s := range table.AncestorsOf(tbl.CurrentSnapshot().SnapshotID, tbl.SnapshotByID) {
			if !yield(s) {
				return
			}
		}
	})
	slices.Reverse(snaps)
	row := func(r string) types.Row {
		f := strings.Split(r, " | ")
		k, _ := strconv.ParseInt(f[0], 10, 64)
		seq, _ := strconv.ParseInt(f[1], 10, 64)
		return types.MustBuildRow(upsertType, nil, k, seq, f[2])
	}
	var out []connector.TableRecord
	var prev []string
	for _, s := range snaps {
		cur := scanSnapshot(t, tbl, s.SnapshotID)
		for _, r := range prev {
			if _, ok := slices.BinarySearch(cur, r); !ok {
				out = append(out, changelog.Of(changelog.Delete, row(r)))
			}
		}
		for _, r := range cur {
			if _, ok := slices.BinarySearch(prev, r); !ok {
				out = append(out, changelog.Of(changelog.Insert, row(r)))
			}
		}
		prev = cur
	}
	return out
}

// openKeyedSource opens the iceberg source of db.name under dir, with the
// primary key id, and extra options.
func openKeyedSource(t testing.TB, dir, name string, extra map[string]string) connector.Source[connector.TableRecord] {
	t.Helper()
	opts := sinkOptions(dir, name)
	for k, v := range extra {
		opts[k] = v
	}
	src, err := connector.OpenTableSource(connector.Default, "iceberg", opts, &connector.Table{Schema: upsertType, PrimaryKey: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// applyChanges applies changes rendered by kvRender to a multiset of
// rows and returns the rows, sorted, and the rows counted other than
// once (deleted more often than inserted, or inserted twice).
func applyChanges(changes []string) (rows, wrong []string) {
	count := map[string]int{}
	for _, c := range changes {
		if r, ok := strings.CutPrefix(c, "-D "); ok {
			count[r]--
		} else {
			count[r]++
		}
	}
	for _, r := range slices.Sorted(maps.Keys(count)) {
		switch n := count[r]; {
		case n == 1:
			rows = append(rows, r)
		case n != 0:
			wrong = append(wrong, fmt.Sprintf("%s (%d times)", r, n))
		}
	}
	return rows, wrong
}

// waitState waits until the changes mem committed, applied, give want.
func waitState(t *testing.T, mem *connectortest.MemorySink[string], want []string, what string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		got, wrong := applyChanges(mem.Committed())
		if slices.Equal(got, want) && len(wrong) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the changelog applied gives %d rows, the table holds %d; wrongly counted rows %q; differences:\n%s", what, len(got), len(want), wrong, rowDiff(got, want))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// testStreamingUpserts follows an upsert table written with the sink
// options opts through the commits of upsertCommits, checking after each
// that the changelog applied gives the table as a batch read of its
// current snapshot does.
func testStreamingUpserts(t *testing.T, opts map[string]string) {
	dir := t.TempDir()
	w := startUpsertWriter(t, dir, opts)
	w.commit(0)
	w.commit(1)
	mem, stop := streamInto(t, openKeyedSource(t, dir, "kv", map[string]string{"streaming": "true", "monitor-interval": "10 ms"}), 2)
	check := func(c int) {
		tbl := loadTestTable(t, dir, "kv")
		waitState(t, mem, scanSnapshot(t, tbl, tbl.CurrentSnapshot().SnapshotID), fmt.Sprintf("after commit %d", c))
	}
	check(1)
	for c := 2; c < len(upsertCommits); c++ {
		w.commit(c)
		check(c)
	}
	w.stop()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	tbl := loadTestTable(t, dir, "kv")
	var deleting int
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary.Operation != table.OpAppend {
			deleting++
		}
	}
	if deleting < 3 {
		t.Fatalf("%d snapshots delete rows; the test needs several", deleting)
	}
	if opts["write.upsert.delete-mode"] == "equality" {
		eq := 0
		for _, s := range tbl.Metadata().Snapshots() {
			n, _ := strconv.Atoi(s.Summary.Properties["added-equality-deletes"])
			eq += n
		}
		if eq == 0 {
			t.Fatal("no snapshot added equality deletes: the test needs them")
		}
	}
	if opts["format-version"] == "3" {
		tasks, err := tbl.Scan().PlanFiles(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		dvs := 0
		for _, task := range tasks {
			dvs += len(task.DeletionVectorFiles)
			if len(task.DeleteFiles) > 0 {
				t.Fatalf("a format version 3 table has position-delete files")
			}
		}
		if v := tbl.Metadata().Version(); v != 3 || dvs == 0 {
			t.Fatalf("format version %d, %d deletion vectors: the test needs deletion vectors", v, dvs)
		}
	}
	var dels int
	for _, c := range mem.Committed() {
		if strings.HasPrefix(c, "-D ") {
			dels++
		}
	}
	if dels == 0 {
		t.Fatal("the changelog holds no deletion")
	}
	t.Logf("%d snapshots, %d deleting rows; %d changes, %d deletions", len(tbl.Metadata().Snapshots()), deleting, len(mem.Committed()), dels)
}

func TestSourceStreamingChangelogOfUpserts(t *testing.T) {
	testStreamingUpserts(t, map[string]string{})
}

func TestSourceStreamingChangelogOfDeletionVectors(t *testing.T) {
	testStreamingUpserts(t, map[string]string{"format-version": "3"})
}

func TestSourceStreamingChangelogOfEqualityUpserts(t *testing.T) {
	testStreamingUpserts(t, map[string]string{"write.upsert.delete-mode": "equality"})
}

func TestSourceStreamingChangelogConformance(t *testing.T) {
	dir := t.TempDir()
	w := startUpsertWriter(t, dir, nil)
	for c := range upsertCommits {
		w.commit(c)
	}
	w.stop()
	want := tableHistory(t, dir)
	// The mid-stream tests stop in the middle of the longest run of
	// deletions: inside a split of deletions.
	pause, run := 0, 0
	for i := 0; i < len(want); {
		j := i
		for j < len(want) && want[j].Kind == changelog.Delete {
			j++
		}
		if j-i > run {
			pause, run = (i+j)/2, j-i
		}
		i = j + 1
	}
	if run < 20 {
		t.Fatalf("the longest run of deletions is %d long; the test needs a longer one", run)
	}
	connectortest.RunSource(t, connectortest.SourceCase[connector.TableRecord]{
		Open: func(testing.TB) (connector.Source[connector.TableRecord], func()) {
			return openKeyedSource(t, dir, "kv", map[string]string{"streaming": "true", "monitor-interval": "5 ms",
				"starting-strategy": "INCREMENTAL_FROM_EARLIEST_SNAPSHOT"}), nil
		},
		Want:       want,
		Unbounded:  true,
		Key:        kvRender,
		PauseAfter: pause,
	})
}

// TestSourceStreamingChangelogOfEqualityDeletes follows a table another
// writer deletes rows of with equality deletes (written with iceberg-go),
// read as a changelog by 'streaming-changelog' without a primary key.
func TestSourceStreamingChangelogOfEqualityDeletes(t *testing.T) {
	dir := t.TempDir()
	writeChanges(t, dir, "log", upsertType, nil, appendRows(0, 50))
	writeChanges(t, dir, "log", upsertType, nil, appendRows(50, 60))
	mem, stop := streamInto(t, openSource(t, dir, "log", upsertType, map[string]string{"streaming": "true", "monitor-interval": "10 ms", "streaming-changelog": "true"}), 2)
	check := func(what string) {
		tbl := loadTestTable(t, dir, "log")
		waitState(t, mem, scanSnapshot(t, tbl, tbl.CurrentSnapshot().SnapshotID), what)
	}
	check("before the deletes")

	eqDelete := func(ids ...int64) {
		ctx := context.Background()
		tbl := loadTestTable(t, dir, "log")
		field, ok := tbl.Schema().FindFieldByName("id")
		if !ok {
			t.Fatal("the table has no id")
		}
		b := array.NewInt64Builder(arrowAllocator)
		defer b.Release()
		b.AppendValues(ids, nil)
		col := b.NewArray()
		defer col.Release()
		rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{col}, int64(len(ids)))
		defer rec.Release()
		tx := tbl.NewTransaction()
		records := func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
		if err := tx.CommitEqualityDeletes(ctx, []int{field.ID}, records, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	eqDelete(3, 7, 20, 21, 22, 55, 1000)
	if n := loadTestTable(t, dir, "log").CurrentSnapshot().Summary.Properties["added-equality-deletes"]; n != "7" {
		t.Fatalf("the snapshot added %q equality deletes, want 7", n)
	}
	check("after the first equality deletes")
	writeChanges(t, dir, "log", upsertType, nil, appendRows(60, 70))
	eqDelete(7, 8, 65, 59)
	check("after the second equality deletes")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	tbl := loadTestTable(t, dir, "log")
	if got := len(scanSnapshot(t, tbl, tbl.CurrentSnapshot().SnapshotID)); got != 70-9 {
		t.Fatalf("the table holds %d rows, want %d", got, 70-9)
	}
	var dels []string
	for _, c := range mem.Committed() {
		if strings.HasPrefix(c, "-D ") {
			dels = append(dels, c)
		}
	}
	slices.Sort(dels)
	want := []string{"-D 20 | 200 | n20", "-D 21 | 210 | n21", "-D 22 | 220 | n22", "-D 3 | 30 | n3", "-D 55 | 550 | n55", "-D 59 | 590 | n59", "-D 65 | 650 | n65", "-D 7 | 70 | n7", "-D 8 | 80 | n8"}
	if !slices.Equal(dels, want) {
		t.Fatalf("deletions %q, want %q", dels, want)
	}
}

func TestSourceChangelogMode(t *testing.T) {
	dir := t.TempDir()
	mode := func(src connector.Source[connector.TableRecord]) changelog.Mode {
		return src.(connector.ChangelogSource).ChangelogMode()
	}
	if m := mode(openKeyedSource(t, dir, "kv", nil)); m != changelog.InsertOnly {
		t.Errorf("a batch read with a primary key: mode %v, want insert-only", m)
	}
	if m := mode(openSource(t, dir, "kv", upsertType, map[string]string{"streaming": "true"})); m != changelog.InsertOnly {
		t.Errorf("a streaming read without a primary key: mode %v, want insert-only", m)
	}
	want := changelog.ModeOf(changelog.Insert, changelog.Delete)
	if m := mode(openKeyedSource(t, dir, "kv", map[string]string{"streaming": "true"})); m != want {
		t.Errorf("a streaming read with a primary key: mode %v, want %v", m, want)
	}
	if m := mode(openSource(t, dir, "kv", upsertType, map[string]string{"streaming": "true", "streaming-changelog": "true"})); m != want {
		t.Errorf("a streaming changelog read: mode %v, want %v", m, want)
	}
	opts := sinkOptions(dir, "kv")
	opts["streaming-changelog"] = "true"
	if _, err := connector.OpenTableSource(connector.Default, "iceberg", opts, &connector.Table{Schema: upsertType}); err == nil || !strings.Contains(err.Error(), "'streaming' = 'true'") {
		t.Errorf("'streaming-changelog' in a batch read: %v, want an error", err)
	}
}

// TestSourceSQLStreamsUpsertTable copies an upsert table into another with
// a SQL job that follows it, and checks that a query that cannot take its
// deletions is refused.
func TestSourceSQLStreamsUpsertTable(t *testing.T) {
	dir := t.TempDir()
	w := startUpsertWriter(t, dir, nil)
	w.commit(0)
	src := sinkOptions(dir, "kv")
	src["streaming"], src["monitor-interval"] = "true", "10 ms"
	s := sql.NewSession(sql.WithParallelism(2))
	script := fmt.Sprintf(`
CREATE TABLE src (id BIGINT NOT NULL, seq BIGINT, note STRING, PRIMARY KEY (id) NOT ENFORCED) WITH (%s);
CREATE TABLE copy (id BIGINT NOT NULL, seq BIGINT, note STRING, PRIMARY KEY (id) NOT ENFORCED) WITH (%s);
CREATE TABLE plain (id BIGINT NOT NULL, seq BIGINT, note STRING) WITH (%s);
`, withOptions(src), withOptions(sinkOptions(dir, "copy")), withOptions(sinkOptions(dir, "plain")))
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Execute("INSERT INTO plain SELECT * FROM src;"); err == nil || !strings.Contains(err.Error(), "[I,D]") {
		t.Fatalf("writing the changelog into a table without a primary key: %v, want an error naming the changelog", err)
	}
	s = sql.NewSession(sql.WithParallelism(2))
	if _, err := s.Execute(script + fmt.Sprintf(`
CREATE TABLE buckets (b BIGINT NOT NULL, n BIGINT, PRIMARY KEY (b) NOT ENFORCED) WITH (%s);
INSERT INTO buckets SELECT id %% 4, COUNT(*) FROM src GROUP BY id %% 4;`, withOptions(sinkOptions(dir, "buckets")))); err != nil {
		t.Fatalf("an aggregation over the changelog: %v", err)
	}
	s = sql.NewSession(sql.WithParallelism(2))
	if _, err := s.Execute(script + "INSERT INTO copy SELECT * FROM src;"); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "copy") }()
	defer func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("the copy job: %v", err)
		}
	}()
	cat := testCatalogAt(t, dir)
	for c := range upsertCommits {
		if c > 0 {
			w.commit(c)
		}
		want := scanRows(t, loadTestTable(t, dir, "kv"))
		deadline := time.Now().Add(90 * time.Second)
		for {
			var got []string
			if tbl, err := cat.LoadTable(context.Background(), table.Identifier{"db", "copy"}); err == nil && tbl.CurrentSnapshot() != nil {
				got = scanRows(t, tbl)
			}
			if slices.Equal(got, want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after commit %d the copy holds %d rows, the table %d:\n%s", c, len(got), len(want), rowDiff(got, want))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
