package iceberg

// Benchmarks of the Iceberg sink, writing into a SQLite catalog and a
// local warehouse: upserts into a table with a primary key (heap and
// Pebble state), appends into a table without one, and the cost of
// reading the upsert table afterwards, written with position deletes by
// the sink or with equality deletes. The full sizes:
//
//	go test ./connectors/iceberg/ -run XXX -bench 'Iceberg' -benchtime 1x -timeout 60m \
//	    -iceberg.changes 10000000 -iceberg.keys 1000000
//
// (the package before the -iceberg flags: go test takes what follows a
// flag it does not know for the test binary).

import (
	"context"
	"flag"
	"maps"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	icebergo "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

var (
	benchChanges    = flag.Int64("iceberg.changes", 300_000, "changes (or appended rows) each Iceberg benchmark writes")
	benchKeys       = flag.Int64("iceberg.keys", 30_000, "keys the Iceberg upsert benchmarks' changes hit")
	benchCheckpoint = flag.Duration("iceberg.checkpoint", 3*time.Second, "checkpoint interval (one commit each) of the Iceberg benchmarks")
)

// benchType is the row type of the benchmarks' tables.
var benchType = types.MustRowType(
	types.F("id", types.BigInt().NotNull()), types.F("seq", types.BigInt()),
	types.F("note", types.String()), types.F("amount", types.Double()))

// benchKey returns the key change i hits: keys in a scrambled order, each
// about changes/keys times.
func benchKey(i, keys int64) int64 { return int64(uint64(i)*0x9e3779b97f4a7c15>>1) % keys }

// benchDeleted reports whether change i deletes its key (one in ten).
func benchDeleted(i int64) bool { return i%10 == 9 }

// benchRows builds rows of type rt in chunks of an
// arena of its own, so that making them costs the job little.
type benchRows struct {
	mu sync.Mutex
	w  *types.RowWriter
}

func newBenchRows(rt *types.RowType) *benchRows {
	return &benchRows{w: types.NewRowWriter(rt, types.NewArena(256<<10))}
}

// row returns the row of the values vals.
func (m *benchRows) row(vals ...types.Value) types.Row {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, v := range vals {
		if err := m.w.SetValue(i, v); err != nil {
			panic(err)
		}
	}
	return m.w.Finish()
}

// write is the row change i writes.
func (m *benchRows) write(i, keys int64) types.Row {
	return m.row(benchKey(i, keys), i, "note-"+strconv.FormatInt(i%1000, 10), float64(i)/100)
}

// change is change i of the upsert benchmarks.
func (m *benchRows) change(i, keys int64) changelog.Change[types.Row] {
	if benchDeleted(i) {
		return changelog.Of(changelog.Delete, m.row(benchKey(i, keys), nil, nil, nil))
	}
	return changelog.Of(changelog.UpdateAfter, m.write(i, keys))
}

// benchLiveRows is the number of rows the upsert table holds after
// changes [0, n).
func benchLiveRows(n, keys int64) int64 {
	live := make([]bool, keys)
	var rows int64
	for i := range n {
		k := benchKey(i, keys)
		switch d := benchDeleted(i); {
		case d && live[k]:
			rows--
		case !d && !live[k]:
			rows++
		}
		live[k] = !benchDeleted(i)
	}
	return rows
}

// benchCPU returns the CPU time (user and system) the process has used.
func benchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchRun is what one run of a write benchmark measured.
type benchRun struct {
	wall, cpu      time.Duration
	commits, files int64
	bytes          int64
}

func (r *benchRun) add(o benchRun) {
	r.wall += o.wall
	r.cpu += o.cpu
	r.commits += o.commits
	r.files += o.files
	r.bytes += o.bytes
}

// report reports rows/s, rows/s per core (rows over the CPU time of the
// process), the cores used, the commits per run and the files and bytes
// of a commit.
func (r benchRun) report(b *testing.B, rows int64) {
	b.ReportMetric(float64(rows)/r.wall.Seconds(), "rows/s")
	b.ReportMetric(float64(rows)/r.cpu.Seconds(), "rows/s/core")
	b.ReportMetric(r.cpu.Seconds()/r.wall.Seconds(), "cores")
	b.ReportMetric(float64(r.commits)/float64(b.N), "commits")
	if r.commits > 0 {
		b.ReportMetric(float64(r.files)/float64(r.commits), "files/commit")
		b.ReportMetric(float64(r.bytes)/float64(r.commits), "bytes/commit")
	}
}

// benchSink opens the iceberg sink of table db.name under dir.
func benchSink(b *testing.B, dir, name string, key []int) connector.Sink[connector.TableRecord] {
	b.Helper()
	s, err := connector.OpenTableSink(connector.Default, "iceberg", sinkOptions(dir, name), &connector.Table{Schema: benchType, PrimaryKey: key})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// benchLoad loads db.name from the catalog under dir.
func benchLoad(b *testing.B, dir, name string) *table.Table {
	b.Helper()
	ctx := context.Background()
	cat, err := openCatalog(ctx, "sql", "eddy", "sqlite://"+filepath.Join(dir, "catalog.db"), "file://"+filepath.Join(dir, "warehouse"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if c, ok := cat.(catalog.Closer); ok {
			_ = c.Close()
		}
	})
	tbl, err := cat.LoadTable(ctx, table.Identifier{"db", name})
	if err != nil {
		b.Fatal(err)
	}
	return tbl
}

// commitStats counts the snapshots of tbl and the files and bytes they
// added.
func commitStats(b *testing.B, tbl *table.Table) (commits, files, bytes int64) {
	b.Helper()
	num := func(props map[string]string, key string) int64 {
		n, _ := strconv.ParseInt(props[key], 10, 64)
		return n
	}
	for _, s := range tbl.Metadata().Snapshots() {
		commits++
		if s.Summary != nil {
			files += num(s.Summary.Properties, "added-data-files") + num(s.Summary.Properties, "added-delete-files")
			bytes += num(s.Summary.Properties, "added-files-size")
		}
	}
	return commits, files, bytes
}

// benchBackends are the keyed state backends the upsert benchmark runs
// with.
var benchBackends = []struct {
	name string
	opt  func(b *testing.B) eddy.Option
}{
	{"heap", func(*testing.B) eddy.Option { return eddy.WithStateBackend(eddy.HeapState()) }},
	{"pebble", func(b *testing.B) eddy.Option {
		return eddy.WithStateBackend(eddy.PebbleState(b.TempDir(), 256<<20))
	}},
}

// runUpserts writes changes [0, n) over keys into the upsert table db.kv
// under dir with a job of parallelism 1 and returns what it measured.
func runUpserts(b *testing.B, dir string, n, keys int64, backend eddy.Option) benchRun {
	b.Helper()
	return runUpsertsWith(b, dir, n, keys, backend, *benchCheckpoint, nil)
}

// runUpsertsWith is runUpserts checkpointing every interval, with the
// sink options extra.
func runUpsertsWith(b *testing.B, dir string, n, keys int64, backend eddy.Option, interval time.Duration, extra map[string]string) benchRun {
	b.Helper()
	env := eddy.NewEnvironment(eddy.WithParallelism(1), backend,
		eddy.WithCheckpointing(interval), eddy.WithCheckpointDir(b.TempDir()))
	rows := newBenchRows(benchType)
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: n},
		func(i int64) changelog.Change[types.Row] { return rows.change(i, keys) },
		eddy.NoWatermarks[changelog.Change[types.Row]]())
	key := types.NewKeyEncoder(benchType, 0)
	opts := sinkOptions(dir, "kv")
	maps.Copy(opts, extra)
	sink, err := connector.OpenTableSink(connector.Default, "iceberg", opts, &connector.Table{Schema: benchType, PrimaryKey: []int{0}})
	if err != nil {
		b.Fatal(err)
	}
	eddy.WriteUpserts(eddy.AsChangelog(src, changelog.Upsert), "kv", key.Key, sink, eddy.KeyedBySinkKey())
	cpu0, wall0 := benchCPU(), time.Now()
	if err := env.Execute(context.Background(), "iceberg-upserts"); err != nil {
		b.Fatal(err)
	}
	r := benchRun{wall: time.Since(wall0), cpu: benchCPU() - cpu0}
	r.commits, r.files, r.bytes = commitStats(b, benchLoad(b, dir, "kv"))
	return r
}

// BenchmarkIcebergUpsert writes -iceberg.changes changes over
// -iceberg.keys keys (nine in ten upserts, one in ten deletions) into an
// upsert table, with a job of parallelism 1 checkpointing every
// -iceberg.checkpoint, its key index in heap or Pebble state.
func BenchmarkIcebergUpsert(b *testing.B) {
	n, keys := *benchChanges, *benchKeys
	for _, be := range benchBackends {
		b.Run(be.name, func(b *testing.B) {
			var total benchRun
			for range b.N {
				total.add(runUpserts(b, b.TempDir(), n, keys, be.opt(b)))
			}
			total.report(b, n*int64(b.N))
		})
	}
}

// BenchmarkIcebergUpsertCompaction writes the changes of
// BenchmarkIcebergUpsert (heap state) checkpointing every 100 ms, without
// compaction, with compaction on its default schedule (every 10 commits),
// and with a compaction after every commit, and reports the data and
// delete files of the final snapshot and how long scanning it takes.
func BenchmarkIcebergUpsertCompaction(b *testing.B) {
	n, keys := *benchChanges, *benchKeys
	for _, c := range []struct {
		name string
		opts map[string]string
	}{
		{"compaction=false", map[string]string{"compaction-enabled": "false"}},
		{"compaction=true", map[string]string{"compaction-enabled": "true"}},
		{"compaction=every-commit", map[string]string{"compaction-enabled": "true", "flink-maintenance.rewrite.schedule.commit-count": "1"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var total benchRun
			var data, deletes, scanned int
			var scan time.Duration
			for range b.N {
				dir := b.TempDir()
				total.add(runUpsertsWith(b, dir, n, keys, eddy.WithStateBackend(eddy.HeapState()), 100*time.Millisecond, c.opts))
				tbl := benchLoad(b, dir, "kv")
				fsys, err := tbl.FS(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				d, x, err := snapshotFiles(tbl, fsys)
				if err != nil {
					b.Fatal(err)
				}
				data, deletes = data+len(d), deletes+len(x)
				rows, took := timedScan(b, tbl)
				scan += took
				scanned += rows
			}
			total.report(b, n*int64(b.N))
			if want := benchLiveRows(n, keys) * int64(b.N); int64(scanned) != want {
				b.Fatalf("scanned %d rows, want %d", scanned, want)
			}
			b.ReportMetric(float64(data)/float64(b.N), "data-files")
			b.ReportMetric(float64(deletes)/float64(b.N), "delete-files")
			b.ReportMetric(scan.Seconds()/float64(b.N), "scan-s")
		})
	}
}

// BenchmarkIcebergAppend appends -iceberg.changes rows into a table
// without a primary key, with a job of parallelism 1 checkpointing every
// -iceberg.checkpoint.
func BenchmarkIcebergAppend(b *testing.B) {
	n, keys := *benchChanges, *benchKeys
	var total benchRun
	for range b.N {
		dir := b.TempDir()
		env := eddy.NewEnvironment(eddy.WithParallelism(1),
			eddy.WithCheckpointing(*benchCheckpoint), eddy.WithCheckpointDir(b.TempDir()))
		rows := newBenchRows(benchType)
		src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: n},
			func(i int64) connector.TableRecord { return changelog.Of(changelog.Insert, rows.write(i, keys)) },
			eddy.NoWatermarks[connector.TableRecord]())
		eddy.WriteTo(eddy.AsChangelog(src, changelog.InsertOnly), "log", benchSink(b, dir, "log", nil))
		cpu0, wall0 := benchCPU(), time.Now()
		if err := env.Execute(context.Background(), "iceberg-appends"); err != nil {
			b.Fatal(err)
		}
		r := benchRun{wall: time.Since(wall0), cpu: benchCPU() - cpu0}
		r.commits, r.files, r.bytes = commitStats(b, benchLoad(b, dir, "log"))
		total.add(r)
	}
	total.report(b, n*int64(b.N))
}

// writeEqualityDeletes writes changes [0, n) over keys into a new upsert
// table db.kv under dir in commits snapshots through the table I/O layer,
// as a writer that keeps no key index would: each snapshot holds a data
// file of the last row of every key its changes wrote and an
// equality-delete file of every key they touched.
func writeEqualityDeletes(b *testing.B, dir string, n, keys, commits int64) {
	b.Helper()
	ctx := context.Background()
	cat, err := openCatalog(ctx, "sql", "eddy", "sqlite://"+filepath.Join(dir, "catalog.db"), "file://"+filepath.Join(dir, "warehouse"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if c, ok := cat.(catalog.Closer); ok {
			_ = c.Close()
		}
	}()
	tbl, err := loadOrCreateTable(ctx, cat, "db", "kv", &connector.Table{Schema: benchType, PrimaryKey: []int{0}}, 2, nil)
	if err != nil {
		b.Fatal(err)
	}
	tf, err := newTableFiles(ctx, tbl)
	if err != nil {
		b.Fatal(err)
	}
	keyType := benchType.Project(0)
	rows, keyRows := newBenchRows(benchType), newBenchRows(keyType)
	last := map[int64]int64{} // key -> its last change in the commit
	for c := range commits {
		from, to := n*c/commits, n*(c+1)/commits
		clear(last)
		for i := from; i < to; i++ {
			last[benchKey(i, keys)] = i
		}
		data, err := tf.newDataFileWriter(benchType, "eq-data")
		if err != nil {
			b.Fatal(err)
		}
		eq, err := tf.newEqualityDeleteWriter(keyType, "eq-deletes")
		if err != nil {
			b.Fatal(err)
		}
		for i := from; i < to; i++ {
			k := benchKey(i, keys)
			if last[k] != i {
				continue
			}
			if _, err := eq.Append(keyRows.row(k)); err != nil {
				b.Fatal(err)
			}
			if !benchDeleted(i) {
				if _, err := data.Append(rows.write(i, keys)); err != nil {
					b.Fatal(err)
				}
			}
		}
		dm, err := data.Close()
		if err != nil {
			b.Fatal(err)
		}
		em, err := eq.Close()
		if err != nil {
			b.Fatal(err)
		}
		summary := map[string]string{summaryJobID: "bench", summaryCheckpointID: strconv.FormatInt(c+1, 10)}
		if tbl, err = commitFiles(ctx, tbl, []fileMeta{dm}, []fileMeta{em}, summary); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIcebergScan reads the upsert table of -iceberg.changes changes
// over -iceberg.keys keys with a full iceberg-go scan: as the sink writes
// it (position deletes, one snapshot per checkpoint, heap state), and the
// same table state written with equality deletes in as many snapshots.
func BenchmarkIcebergScan(b *testing.B) {
	n, keys := *benchChanges, *benchKeys
	want := benchLiveRows(n, keys)
	posDir, eqDir := b.TempDir(), b.TempDir()
	run := runUpserts(b, posDir, n, keys, eddy.WithStateBackend(eddy.HeapState()))
	t0 := time.Now()
	writeEqualityDeletes(b, eqDir, n, keys, run.commits)
	b.Logf("%d changes over %d keys, %d commits: the sink wrote them in %v, the equality-delete writer in %v",
		n, keys, run.commits, run.wall.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
	for _, c := range []struct{ name, dir string }{{"position-deletes", posDir}, {"equality-deletes", eqDir}} {
		b.Run(c.name, func(b *testing.B) {
			tbl := benchLoad(b, c.dir, "kv")
			commits, files, bytes := commitStats(b, tbl)
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				at, err := tbl.Scan().ToArrowTable(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				rows := at.NumRows()
				at.Release()
				if rows != want {
					b.Fatalf("the scan read %d rows, want %d", rows, want)
				}
			}
			d := time.Since(start)
			b.StopTimer()
			b.ReportMetric(d.Seconds()/float64(b.N), "scan-s")
			b.ReportMetric(float64(want)*float64(b.N)/d.Seconds(), "rows/s")
			b.ReportMetric(float64(commits), "commits")
			b.ReportMetric(float64(files), "files")
			b.ReportMetric(float64(bytes), "bytes")
		})
	}
}

// BenchmarkIcebergUpsertDeleteMode writes the changes of
// BenchmarkIcebergUpsert (heap state) with each 'write.upsert.delete-mode':
// position deletes through the key index, and equality deletes of the key
// as Flink's sink writes them. It reports the sink's rows/s per core, the
// files and bytes of a commit, the data and delete files of the final
// snapshot and how long a full iceberg-go scan of it takes.
func BenchmarkIcebergUpsertDeleteMode(b *testing.B) {
	n, keys := *benchChanges, *benchKeys
	for _, mode := range []string{deleteModePosition, deleteModeEquality} {
		b.Run(mode, func(b *testing.B) {
			var total benchRun
			var data, posDeletes, eqDeletes, scanned int
			var scan time.Duration
			for range b.N {
				dir := b.TempDir()
				total.add(runUpsertsWith(b, dir, n, keys, eddy.WithStateBackend(eddy.HeapState()), *benchCheckpoint,
					map[string]string{deleteModeOption: mode}))
				tbl := benchLoad(b, dir, "kv")
				fsys, err := tbl.FS(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				d, x, err := snapshotFiles(tbl, fsys)
				if err != nil {
					b.Fatal(err)
				}
				data += len(d)
				for _, f := range x {
					if f.ContentType() == icebergo.EntryContentEqDeletes {
						eqDeletes++
					} else {
						posDeletes++
					}
				}
				rows, took := timedScan(b, tbl)
				scan += took
				scanned += rows
			}
			total.report(b, n*int64(b.N))
			if want := benchLiveRows(n, keys) * int64(b.N); int64(scanned) != want {
				b.Fatalf("scanned %d rows, want %d", scanned, want)
			}
			b.ReportMetric(float64(data)/float64(b.N), "data-files")
			b.ReportMetric(float64(posDeletes)/float64(b.N), "pos-delete-files")
			b.ReportMetric(float64(eqDeletes)/float64(b.N), "eq-delete-files")
			b.ReportMetric(scan.Seconds()/float64(b.N), "scan-s")
		})
	}
}

// timedScan reads the whole table and returns its rows and the time the
// read took.
func timedScan(b *testing.B, tbl *table.Table) (int, time.Duration) {
	b.Helper()
	t0 := time.Now()
	at, err := tbl.Scan().ToArrowTable(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer at.Release()
	return int(at.NumRows()), time.Since(t0)
}
