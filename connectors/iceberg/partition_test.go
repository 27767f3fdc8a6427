package iceberg

import (
	"context"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	icebergo "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

func TestParsePartitionKey(t *testing.T) {
	terms, err := parsePartitionKey("day(ts), bucket(16, id), truncate[4](name), identity(region), years(d), region, bucket[8](x), hour(ts), month(ts), truncate(3, name)")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tm := range terms {
		got = append(got, tm.transform.String()+" "+tm.column)
	}
	want := []string{"day ts", "bucket[16] id", "truncate[4] name", "identity region", "year d", "identity region", "bucket[8] x", "hour ts", "month ts", "truncate[3] name"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	sc, err := icebergSchema(partType, []int{0}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"nope", "day(s)", "truncate(2, bo)", "dec, truncate(2, big)"} {
		terms, err := parsePartitionKey(bad)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := partitionSpecOf(sc, terms); err == nil {
			t.Errorf("partitioning %q: no error", bad)
		}
	}
	for _, bad := range []string{"bucket(id)", "bucket(0, id)", "week(ts)", "day(ts", "truncate(x, name)", "a b", "bucket[x](id)", ","} {
		if _, err := parsePartitionKey(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if terms, err := parsePartitionKey(" "); err != nil || terms != nil {
		t.Errorf("blank: %v, %v", terms, err)
	}
}

// partType is the row type of the partition tests: a column of every type
// a transform applies to.
var partType = types.MustRowType(
	types.F("id", types.BigInt().NotNull()),
	types.F("i", types.Int()),
	types.F("s", types.String()),
	types.F("b", types.Bytes()),
	types.F("d", types.DateType()),
	types.F("ts", types.TimestampType(6)),
	types.F("ltz", types.TimestampLTZType(3)),
	types.F("dec", types.DecimalType(10, 2)),
	types.F("big", types.DecimalType(30, 3)),
	types.F("bo", types.Boolean()),
	types.F("db", types.Double()),
	types.F("tm", types.TimeType(6)),
)

// TestPartitionerMatchesIceberg compares the partition values eddy computes
// without boxing with those of iceberg-go's transforms on literals.
func TestPartitionerMatchesIceberg(t *testing.T) {
	sc, err := icebergSchema(partType, []int{0}, 2)
	if err != nil {
		t.Fatal(err)
	}
	arena := types.NewArena(0)
	var rows []types.Row
	for k, v := range []struct {
		i   int32
		s   string
		d   types.Date
		ts  types.Timestamp
		dec string
		big string
	}{
		{0, "", types.DateOf(1970, 1, 1), types.TimestampOf(1970, 1, 1, 0, 0, 0, 0), "0.00", "0.000"},
		{-1, "héllo wörld", types.DateOf(1969, 12, 31), types.TimestampOf(1969, 12, 31, 23, 59, 59, 999999000), "-0.01", "-1234567890123456789012.345"},
		{123456, "日本語のテキスト", types.DateOf(2024, 2, 29), types.TimestampOf(2024, 2, 29, 13, 14, 15, 123456000), "12345678.91", "98765432109876543210987.654"},
		{-2147483648, "abc", types.DateOf(1900, 3, 1), types.TimestampOf(1900, 3, 1, 5, 0, 0, 0), "-99999999.99", "1.000"},
		{7, strings.Repeat("x", 200), types.DateOf(2262, 4, 11), types.TimestampOf(2100, 12, 31, 23, 0, 0, 1000), "0.05", "-0.001"},
	} {
		rows = append(rows, types.MustBuildRow(partType, arena, int64(k*1000003-7), v.i, v.s, []byte(v.s), v.d, v.ts, v.ts,
			types.MustParseDecimal(v.dec), types.MustParseDecimal(v.big), k%2 == 0, float64(v.i)/3, types.TimeOf(k, 2*k, 3*k, 4000*k)))
	}
	rows = append(rows, types.MustBuildRow(partType, arena, int64(5), nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil))

	compared := 0
	for _, col := range []string{"id", "i", "s", "b", "d", "ts", "ltz", "dec", "big", "bo", "db", "tm"} {
		for _, tr := range []icebergo.Transform{icebergo.IdentityTransform{}, icebergo.BucketTransform{NumBuckets: 16}, icebergo.BucketTransform{NumBuckets: 7},
			icebergo.TruncateTransform{Width: 4}, icebergo.TruncateTransform{Width: 100}, icebergo.YearTransform{}, icebergo.MonthTransform{},
			icebergo.DayTransform{}, icebergo.HourTransform{}} {
			f, _ := sc.FindFieldByName(col)
			if !tr.CanTransform(f.Type) {
				continue
			}
			spec, err := partitionSpecOf(sc, []partitionTerm{{column: col, transform: tr}})
			if err != nil {
				t.Fatal(err)
			}
			p, err := newPartitioner(spec, sc, partType)
			if err != nil {
				t.Fatalf("%s(%s): %v", tr, col, err)
			}
			c, _ := partType.Index(col)
			for _, r := range rows {
				got, err := p.values(string(p.key(r)))
				if err != nil {
					t.Fatalf("%s(%s): %v", tr, col, err)
				}
				want := tr.Apply(icebergLiteral(t, r, c))
				var w any
				if want.Valid {
					w = want.Val.Any()
				}
				compared++
				if g := got[spec.Field(0).FieldID]; !reflect.DeepEqual(g, w) {
					t.Errorf("%s(%s) of row %d: %#v, iceberg-go says %#v", tr, col, r.Int64(0), g, w)
				}
			}
		}
	}
	if compared < 300 {
		t.Errorf("only %d values compared", compared)
	}
	t.Logf("%d partition values compared", compared)
}

// icebergLiteral returns column c of r as an iceberg-go literal.
func icebergLiteral(t *testing.T, r types.Row, c int) icebergo.Optional[icebergo.Literal] {
	t.Helper()
	if r.IsNull(c) {
		return icebergo.Optional[icebergo.Literal]{}
	}
	ft := partType.Field(c).Type
	var lit icebergo.Literal
	switch ft.Kind() {
	case types.KindInt:
		lit = icebergo.NewLiteral(int32(r.Int64(c)))
	case types.KindBigInt:
		lit = icebergo.NewLiteral(r.Int64(c))
	case types.KindVarChar:
		lit = icebergo.NewLiteral(r.String(c))
	case types.KindVarBinary:
		lit = icebergo.NewLiteral([]byte(r.BinaryString(c)))
	case types.KindDate:
		lit = icebergo.NewLiteral(icebergo.Date(r.Date(c)))
	case types.KindTimestamp, types.KindTimestampLTZ:
		ts := r.Timestamp(c, ft.Precision())
		lit = icebergo.NewLiteral(icebergo.Timestamp(ts.Millis*1000 + int64(ts.NanoOfMilli/1000)))
	case types.KindDecimal:
		d := r.Decimal(c, ft.Precision(), ft.Scale())
		lit = icebergo.NewLiteral(icebergo.Decimal{Val: decimal128.FromBigInt(new(big.Int).Set(d.BigUnscaled())), Scale: d.Scale()})
	case types.KindBoolean:
		lit = icebergo.NewLiteral(r.Bool(c))
	case types.KindDouble:
		lit = icebergo.NewLiteral(r.Float64(c))
	case types.KindTime:
		lit = icebergo.NewLiteral(icebergo.Time(int64(r.Time(c)) / 1000))
	default:
		t.Fatalf("no literal for %s", ft)
	}
	return icebergo.Optional[icebergo.Literal]{Valid: true, Val: lit}
}

// TestPartitionFileMetaRoundTrip passes the partition of a data file
// through the JSON of a checkpoint: the manifest gets its values with their
// types.
func TestPartitionFileMetaRoundTrip(t *testing.T) {
	ctx := context.Background()
	cat := testCatalog(t)
	tbl, err := loadOrCreatePartitionedTable(ctx, cat, "db", "rt", &connector.Table{Schema: partType, PrimaryKey: []int{0}}, 2, nil,
		"i, s, b, d, ts, ltz, dec, bo, db, tm, bucket(5, id), day(ts)")
	if err != nil {
		t.Fatal(err)
	}
	tf, err := newTableFiles(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	p, err := tf.newPartitioner(partType)
	if err != nil {
		t.Fatal(err)
	}
	row := types.MustBuildRow(partType, nil, int64(1), int32(-3), "x", []byte{0, 255}, types.DateOf(2020, 5, 6),
		types.TimestampOf(2020, 5, 6, 7, 8, 9, 0), types.TimestampOf(2020, 5, 6, 7, 8, 9, 0),
		types.MustParseDecimal("-1.25"), types.MustParseDecimal("12345678901234567890.123"), true, 2.5, types.TimeOf(1, 2, 3, 0))
	key := string(p.key(row))
	w, err := tf.newDataFileWriter(partType, "rt")
	if err != nil {
		t.Fatal(err)
	}
	w.SetPartition(key)
	if _, err := w.Append(row); err != nil {
		t.Fatal(err)
	}
	m, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	df, err := roundTrip(t, []fileMeta{m})[0].dataFile(tbl.Spec(), tbl.Schema())
	if err != nil {
		t.Fatal(err)
	}
	want, err := p.values(key)
	if err != nil {
		t.Fatal(err)
	}
	if got := df.Partition(); !reflect.DeepEqual(got, want) || len(got) != 12 {
		t.Errorf("partition after JSON: %#v, want %#v", got, want)
	}
	if tbl, err = commitFiles(ctx, tbl, roundTrip(t, []fileMeta{m}), nil, ioSummary("j", 1)); err != nil {
		t.Fatal(err)
	}
	if got := scanRows(t, tbl); len(got) != 1 {
		t.Errorf("rows %q", got)
	}
}

// regionType is the row type of the partitioned sink tests.
var regionType = types.MustRowType(
	types.F("id", types.BigInt().NotNull()), types.F("region", types.String()),
	types.F("ts", types.TimestampType(6)), types.F("name", types.String()), types.F("seq", types.BigInt()))

// regionRow is a row of regionType.
func regionRow(id int64, region string, ts types.Timestamp, name string, seq int64) types.Row {
	return types.MustBuildRow(regionType, nil, id, region, ts, name, seq)
}

// runRegionSink writes the changes of batches into the table db.name
// under dir, each batch in a checkpoint of its own, and checks the table
// got a snapshot per batch.
func runRegionSink(t *testing.T, dir, name string, t0 *connector.Table, batches [][]changelog.Change[types.Row]) {
	t.Helper()
	sink, err := connector.OpenTableSink(connector.Default, "iceberg", sinkOptions(dir, name), t0)
	if err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2),
		eddy.WithCheckpointing(5*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	// Each batch in a checkpoint (and so an Iceberg commit) of its own.
	src := eddy.FromSource(env, "batches", connector.Source[changelog.Change[types.Row]](&batchedSource{batches}),
		eddy.NoWatermarks[changelog.Change[types.Row]]()).Parallelism(1)
	key := types.NewKeyEncoder(regionType, 0)
	eddy.WriteUpserts(eddy.AsChangelog(src, changelog.Upsert), name, key.Key, sink, eddy.KeyedBySinkKey())
	if err := env.Execute(context.Background(), "iceberg-partitioned"); err != nil {
		t.Fatal(err)
	}
	if n := len(loadTestTable(t, dir, name).Metadata().Snapshots()); n < len(batches) {
		t.Fatalf("%d snapshots, want at least %d", n, len(batches))
	}
}

// createPartitioned creates db.name under dir partitioned by partitionKey.
func createPartitioned(t *testing.T, dir, name string, tb *connector.Table, formatVersion int, partitionKey string) *table.Table {
	t.Helper()
	ctx := context.Background()
	cat, err := openCatalog(ctx, "sql", "eddy", "sqlite://"+dir+"/catalog.db", "file://"+dir+"/warehouse", nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := loadOrCreatePartitionedTable(ctx, cat, "db", name, tb, formatVersion, nil, partitionKey)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// TestSinkPartitionedTransforms writes a table partitioned by each
// transform through the sink, over two checkpoints in which keys move
// between partitions, and reads it back; a scan filtered on the partition
// source plans only the files of the matching partitions.
func TestSinkPartitionedTransforms(t *testing.T) {
	ts := func(day, hour int) types.Timestamp {
		return types.TimestampOf(2024, 1+day/28, 1+day%28, hour, 30, 0, 0)
	}
	batches := [][]changelog.Change[types.Row]{
		{
			changelog.Of(changelog.Insert, regionRow(1, "eu", ts(0, 1), "anna", 1)),
			changelog.Of(changelog.Insert, regionRow(2, "us", ts(0, 2), "bob", 2)),
			changelog.Of(changelog.Insert, regionRow(3, "eu", ts(40, 3), "carl", 3)),
			changelog.Of(changelog.Insert, regionRow(4, "ap", ts(70, 4), "dora", 4)),
			changelog.Of(changelog.Insert, regionRow(5, "us", ts(1, 5), "emil", 5)),
		},
		{
			// 1 moves from eu to us (and to another day/month).
			changelog.Of(changelog.UpdateAfter, regionRow(1, "us", ts(35, 7), "anna", 6)),
			changelog.Of(changelog.Delete, regionRow(2, "", ts(0, 0), "", 0)),
			changelog.Of(changelog.UpdateAfter, regionRow(4, "ap", ts(71, 8), "dora", 7)),
			changelog.Of(changelog.Insert, regionRow(6, "eu", ts(2, 9), "fred", 8)),
		},
	}
	want := []string{
		"1 | us | 2024-02-08T07:30:00 | anna | 6",
		"3 | eu | 2024-02-13T03:30:00 | carl | 3",
		"4 | ap | 2024-03-16T08:30:00 | dora | 7",
		"5 | us | 2024-01-02T05:30:00 | emil | 5",
		"6 | eu | 2024-01-03T09:30:00 | fred | 8",
	}
	for _, c := range []struct {
		name, key string
		filter    icebergo.BooleanExpression
		rows      []string // the rows the filter selects
	}{
		{"identity", "region", icebergo.EqualTo(icebergo.Reference("region"), "us"), []string{want[0], want[3]}},
		{"ddl", "", icebergo.EqualTo(icebergo.Reference("region"), "eu"), []string{want[1], want[4]}},
		{"day", "day(ts)", icebergo.EqualTo(icebergo.Reference("ts"), "2024-02-08T07:30:00"), []string{want[0]}},
		{"month", "month(ts)", icebergo.GreaterThanEqual(icebergo.Reference("ts"), "2024-03-01T00:00:00"), []string{want[2]}},
		{"year", "years(ts)", icebergo.LessThan(icebergo.Reference("ts"), "2023-01-01T00:00:00"), nil},
		{"hour", "hour(ts)", icebergo.EqualTo(icebergo.Reference("ts"), "2024-01-02T05:30:00"), []string{want[3]}},
		{"bucket", "bucket(4, id)", icebergo.EqualTo(icebergo.Reference("id"), int64(3)), []string{want[1]}},
		{"truncate", "truncate(2, name)", icebergo.EqualTo(icebergo.Reference("name"), "dora"), []string{want[2]}},
		{"two", "identity(region), bucket[2](id)", icebergo.EqualTo(icebergo.Reference("region"), "ap"), []string{want[2]}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			tb := &connector.Table{Schema: regionType, PrimaryKey: []int{0}}
			if c.key == "" {
				tb.PartitionKeys = []int{1}
			} else {
				createPartitioned(t, dir, "p", tb, 2, c.key)
			}
			runRegionSink(t, dir, "p", tb, batches)
			tbl := loadTestTable(t, dir, "p")
			if tbl.Spec().IsUnpartitioned() {
				t.Fatalf("the table is not partitioned")
			}
			if got := scanRows(t, tbl); !slices.Equal(got, want) {
				t.Fatalf("the table holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			scan := tbl.Scan(table.WithRowFilter(c.filter))
			if got := scanRowsOf(t, scan); !slices.Equal(got, c.rows) {
				t.Errorf("filtered scan: %q, want %q", got, c.rows)
			}
			tasks, err := scan.PlanFiles(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			all, err := tbl.Scan().PlanFiles(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			// The filter prunes by partition: it plans fewer files,
			// none when no partition can match.
			if len(tasks) >= len(all) || (len(c.rows) == 0) != (len(tasks) == 0) {
				t.Errorf("the filtered scan plans %d of the %d data files", len(tasks), len(all))
			}
			// Every delete file is in the partition of the data files it
			// applies to.
			for _, task := range all {
				for _, d := range append(task.DeleteFiles, task.DeletionVectorFiles...) {
					if !reflect.DeepEqual(d.Partition(), task.File.Partition()) {
						t.Errorf("delete file %s of partition %v applies to %s of partition %v", d.FilePath(), d.Partition(), task.File.FilePath(), task.File.Partition())
					}
				}
			}
		})
	}
}

// TestSinkPartitionMove moves a key from one partition to another: the
// old row is deleted by a position delete of its own partition.
func TestSinkPartitionMove(t *testing.T) {
	for _, v := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			dir := t.TempDir()
			tb := &connector.Table{Schema: regionType, PrimaryKey: []int{0}}
			createPartitioned(t, dir, "m", tb, v, "region")
			ts := types.TimestampOf(2024, 1, 1, 0, 0, 0, 0)
			runRegionSink(t, dir, "m", tb, [][]changelog.Change[types.Row]{
				{changelog.Of(changelog.Insert, regionRow(1, "eu", ts, "a", 1)), changelog.Of(changelog.Insert, regionRow(2, "eu", ts, "b", 2))},
				{changelog.Of(changelog.UpdateAfter, regionRow(1, "us", ts, "a", 3))},
			})
			tbl := loadTestTable(t, dir, "m")
			want := []string{"1 | us | 2024-01-01T00:00:00 | a | 3", "2 | eu | 2024-01-01T00:00:00 | b | 2"}
			if got := scanRows(t, tbl); !slices.Equal(got, want) {
				t.Fatalf("got %q, want %q", got, want)
			}
			tasks, err := tbl.Scan().PlanFiles(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			deletes := 0
			for _, task := range tasks {
				ds := append(task.DeleteFiles, task.DeletionVectorFiles...)
				if len(ds) == 0 {
					continue
				}
				deletes += len(ds)
				if got := task.File.Partition()[1000]; got != "eu" {
					t.Errorf("a delete applies to %s of partition %v, want the eu file", task.File.FilePath(), got)
				}
				for _, d := range ds {
					if got := d.Partition()[1000]; got != "eu" {
						t.Errorf("delete file %s is of partition %v, want eu", d.FilePath(), got)
					}
					if v == 3 && d.FileFormat() != icebergo.PuffinFile {
						t.Errorf("delete file %s of a v3 table is %s, want a deletion vector", d.FilePath(), d.FileFormat())
					}
				}
			}
			if deletes != 1 {
				t.Errorf("%d delete files apply, want 1", deletes)
			}
		})
	}
}

// TestSinkPartitionedExactlyOnceAcrossFailures is the exactly-once test of
// TestSinkExactlyOnceAcrossFailures on partitioned tables, where keys move
// between partitions (truncate of the change number), in format versions
// 2 and 3.
func TestSinkPartitionedExactlyOnceAcrossFailures(t *testing.T) {
	for _, c := range []struct {
		name, key string
		version   int
	}{{"v2-truncate", "truncate(5000, seq)", 2}, {"v3-bucket", "bucket(3, id), truncate(7000, seq)", 3}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			createPartitioned(t, dir, "kv", &connector.Table{Schema: upsertType, PrimaryKey: []int{0}}, c.version, c.key)
			tbl := runKVWithFailures(t, dir, "kv")
			checkOneDVPerDataFile(t, tbl)
		})
	}
}

// checkOneDVPerDataFile fails when a data file of the table's current
// snapshot has more than one deletion vector.
func checkOneDVPerDataFile(t *testing.T, tbl *table.Table) {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if len(task.DeletionVectorFiles) > 1 {
			t.Errorf("data file %s has %d deletion vectors", task.File.FilePath(), len(task.DeletionVectorFiles))
		}
	}
}

// BenchmarkFileWriterPartitions appends rows through a writer's fileWriter
// (the rows of BenchmarkDataFileWriter) into an unpartitioned table and
// into tables partitioned by a string column, by day and bucket, and by
// truncate: the partition of every row is computed and its open data file
// looked up.
func BenchmarkFileWriterPartitions(b *testing.B) {
	rt := types.MustRowType(
		types.F("id", types.BigInt().NotNull()),
		types.F("name", types.VarChar(64)),
		types.F("price", types.Double()),
		types.F("ts", types.TimestampType(3)),
		types.F("amount", types.DecimalType(10, 2)),
	)
	const distinct = 4096
	arena := types.NewArena(0)
	rows := make([]types.Row, distinct)
	names := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}
	for i := range rows {
		rows[i] = types.MustBuildRow(rt, arena, int64(i), names[i%len(names)]+"-customer",
			float64(i)*0.37, types.TimestampFromMillis(1_700_000_000_000+int64(i)*170_000), types.NewDecimal(int64(i*13), 2))
	}
	for _, c := range []struct{ name, key string }{
		{"unpartitioned", ""}, {"identity", "name"}, {"day-bucket", "day(ts), bucket(8, id)"}, {"truncate", "truncate(100, id)"},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			cat := testCatalog(b)
			tb := &connector.Table{Schema: rt, PrimaryKey: []int{0}}
			tbl, err := loadOrCreatePartitionedTable(ctx, cat, "db", "bench", tb, 2, nil, c.key)
			if err != nil {
				b.Fatal(err)
			}
			tf, err := newTableFiles(ctx, tbl)
			if err != nil {
				b.Fatal(err)
			}
			w := &fileWriter{sink: &Sink{cfg: &config{namespace: "db", table: "bench", targetFileSize: 1 << 40}, table: tb}, tf: tf}
			if w.part, err = tf.newPartitioner(rt); err != nil {
				b.Fatal(err)
			}
			w.parts = map[partitionKey]*openFile{}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, _, err := w.appendPart(connector.TableRecord{Kind: changelog.Insert, Row: rows[i%distinct]}); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.closeData(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(len(w.done)), "files")
		})
	}
}
