package iceberg

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/eddystream/eddy/sql/types"
)

// allTypes is a row type with a column of every type the sink writes.
var allTypes = types.MustRowType(
	types.F("id", types.BigInt().NotNull()),
	types.F("b", types.Boolean()),
	types.F("ti", types.TinyInt()),
	types.F("si", types.SmallInt()),
	types.F("i", types.Int()),
	types.F("f", types.Float()),
	types.F("d", types.Double()),
	types.F("dec", types.DecimalType(10, 2)),
	types.F("bigdec", types.DecimalType(30, 5)),
	types.F("c", types.Char(3)),
	types.F("s", types.String()),
	types.F("bin", types.Bytes()),
	types.F("dt", types.DateType()),
	types.F("tm", types.TimeType(6)),
	types.F("ts", types.TimestampType(3)),
	types.F("ts6", types.TimestampType(6)),
	types.F("ltz", types.TimestampLTZType(3)),
	types.F("r", types.RowOf(types.F("x", types.Int()), types.F("y", types.String()))),
	types.F("arr", types.ArrayOf(types.Int())),
	types.F("m", types.MapOf(types.String().NotNull(), types.Double())),
)

func TestDataFileAllTypes(t *testing.T) {
	ctx := context.Background()
	cat := testCatalog(t)
	tbl := testTable(t, cat, "all_types", allTypes, []int{0}, 2)
	tf, err := newTableFiles(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	w, err := tf.newDataFileWriter(allTypes, "task-0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.Path(), strings.TrimSuffix(tbl.Location(), "/")+"/data/task-0-") || !strings.HasSuffix(w.Path(), ".parquet") {
		t.Errorf("file path %s", w.Path())
	}
	rows := [][]types.Value{
		{int64(1), true, int8(-8), int16(300), int32(-70000), float32(1.5), 2.25,
			types.MustParseDecimal("12345678.91"), types.MustParseDecimal("1234567890123456789012.34567"),
			"abc", "héllo", []byte{0, 1, 255}, types.DateOf(2024, 2, 29), types.TimeOf(13, 14, 15, 123456000),
			types.TimestampOf(2024, 2, 29, 13, 14, 15, 123000000), types.TimestampOf(1969, 12, 31, 23, 59, 59, 999999000),
			types.TimestampOf(2000, 1, 1, 0, 0, 0, 1000000),
			[]types.Value{int32(7), "seven"}, []types.Value{int32(1), nil, int32(3)},
			[]types.MapEntry{{Key: "a", Value: 1.0}, {Key: "b", Value: nil}}},
		{int64(2), nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
		{int64(3), false, int8(127), int16(-32768), int32(2147483647), float32(0), -1e300,
			types.MustParseDecimal("-0.01"), types.MustParseDecimal("-0.00001"),
			"x", "", []byte{}, types.DateOf(1900, 1, 1), types.TimeOf(0, 0, 0, 0),
			types.TimestampOf(1970, 1, 1, 0, 0, 0, 0), types.TimestampOf(2262, 4, 11, 23, 47, 16, 854775000),
			types.TimestampOf(9999, 12, 31, 23, 59, 59, 999000000),
			[]types.Value{nil, nil}, []types.Value{}, []types.MapEntry{}},
	}
	arena := types.NewArena(0)
	for i, vals := range rows {
		pos, err := w.Append(types.MustBuildRow(allTypes, arena, vals...))
		if err != nil {
			t.Fatal(err)
		}
		if pos != int64(i) {
			t.Errorf("row %d at position %d", i, pos)
		}
	}
	if w.Rows() != 3 {
		t.Errorf("Rows() = %d", w.Rows())
	}
	m, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if m.RecordCount != 3 || m.FileSize <= 0 || m.Content != contentData || m.Format != "PARQUET" {
		t.Errorf("file meta %+v", m)
	}
	if m.ValueCounts[1] != 3 || m.NullValueCounts[2] != 1 {
		t.Errorf("value counts %v, null counts %v", m.ValueCounts, m.NullValueCounts)
	}
	// Bounds of id (long: 8 bytes little endian) and s (string, UTF-8).
	if lb, ub := m.LowerBounds[1], m.UpperBounds[1]; len(lb) != 8 || lb[0] != 1 || len(ub) != 8 || ub[0] != 3 {
		t.Errorf("bounds of id: %v, %v", lb, ub)
	}
	if lb, ub := string(m.LowerBounds[11]), string(m.UpperBounds[11]); lb != "" || ub != "héllo" {
		t.Errorf("bounds of s: %q, %q", lb, ub)
	}
	tbl, err = commitFiles(ctx, tbl, roundTrip(t, []fileMeta{m}), nil, map[string]string{summaryJobID: "job-1", summaryCheckpointID: "1"})
	if err != nil {
		t.Fatal(err)
	}
	got := scanRows(t, tbl)
	want := []string{
		"1 | true | -8 | 300 | -70000 | 1.5 | 2.25 | 12345678.91 | 1234567890123456789012.34567 | abc | héllo | AAH/ | 2024-02-29 | 13:14:15.123456 | 2024-02-29T13:14:15.123 | 1969-12-31T23:59:59.999999 | 2000-01-01T00:00:00.001Z | {\"x\":7,\"y\":\"seven\"} | [1,null,3] | [{\"key\":\"a\",\"value\":1},{\"key\":\"b\",\"value\":null}]",
		"2 | (null) | (null) | (null) | (null) | (null) | (null) | (null) | (null) | (null) | (null) | (null) | (null) | (null) | (null) | (null) | (null) | (null) | (null) | (null)",
		"3 | false | 127 | -32768 | 2147483647 | 0 | -1e+300 | -0.01 | -1e-05 | x |  |  | 1900-01-01 | 00:00:00.000000 | 1970-01-01T00:00:00 | 2262-04-11T23:47:16.854775 | 9999-12-31T23:59:59.999Z | {\"x\":null,\"y\":null} | [] | []",
	}
	if len(got) != len(want) {
		t.Fatalf("scan returned %d rows, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("row %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

func TestDataFileRequiredNull(t *testing.T) {
	ctx := context.Background()
	cat := testCatalog(t)
	rt := types.MustRowType(types.F("id", types.BigInt()), types.F("v", types.String()))
	tbl := testTable(t, cat, "nulls", rt, []int{0}, 2)
	tf, err := newTableFiles(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	w, err := tf.newDataFileWriter(rt, "t")
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Append(types.MustBuildRow(rt, nil, nil, "x"))
	if err == nil || !strings.Contains(err.Error(), "column id is NULL") {
		t.Errorf("NULL key: %v", err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
}

func TestDataFileEmptyAndAbort(t *testing.T) {
	ctx := context.Background()
	cat := testCatalog(t)
	rt := types.MustRowType(types.F("id", types.BigInt().NotNull()))
	tbl := testTable(t, cat, "empty", rt, []int{0}, 2)
	tf, err := newTableFiles(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	fsys, _ := tbl.FS(ctx)
	w, _ := tf.newDataFileWriter(rt, "t")
	m, err := w.Close()
	if err != nil || m.Path != "" {
		t.Errorf("Close of an empty file: %+v, %v", m, err)
	}
	if _, err := fsys.Open(w.Path()); err == nil {
		t.Errorf("empty file %s left behind", w.Path())
	}
	w, _ = tf.newDataFileWriter(rt, "t")
	if _, err := w.Append(types.MustBuildRow(rt, nil, int64(1))); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Open(w.Path()); err == nil {
		t.Errorf("aborted file %s left behind", w.Path())
	}
}

// BenchmarkDataFileWriter writes rows of five columns (BIGINT key,
// VARCHAR, DOUBLE, TIMESTAMP(3), DECIMAL(10, 2)) into data files.
func BenchmarkDataFileWriter(b *testing.B) {
	ctx := context.Background()
	cat := testCatalog(b)
	rt := types.MustRowType(
		types.F("id", types.BigInt().NotNull()),
		types.F("name", types.VarChar(64)),
		types.F("price", types.Double()),
		types.F("ts", types.TimestampType(3)),
		types.F("amount", types.DecimalType(10, 2)),
	)
	tbl := testTable(b, cat, "bench", rt, []int{0}, 2)
	tf, err := newTableFiles(ctx, tbl)
	if err != nil {
		b.Fatal(err)
	}
	const distinct = 4096
	arena := types.NewArena(0)
	rows := make([]types.Row, distinct)
	names := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}
	for i := range rows {
		rows[i] = types.MustBuildRow(rt, arena, int64(i), names[i%len(names)]+"-customer",
			float64(i)*0.37, types.TimestampFromMillis(1_700_000_000_000+int64(i)*17), types.NewDecimal(int64(i*13), 2))
	}
	w, err := tf.newDataFileWriter(rt, "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := w.Append(rows[i%distinct]); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func TestDataFileSize(t *testing.T) {
	ctx := context.Background()
	cat := testCatalog(t)
	tbl := testTable(t, cat, "size", ioKVType, []int{0}, 2)
	tf, err := newTableFiles(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	w, err := tf.newDataFileWriter(ioKVType, "size")
	if err != nil {
		t.Fatal(err)
	}
	arena := types.NewArena(0)
	var sizes []int64
	for i := 0; i < 500_000; i++ {
		if _, err := w.Append(types.MustBuildRow(ioKVType, arena, int64(i)*7919, fmt.Sprintf("value %d", i*7919))); err != nil {
			t.Fatal(err)
		}
		if i%100_000 == 99_999 {
			sizes = append(sizes, w.Size())
		}
	}
	m, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(sizes); i++ {
		if sizes[i] <= sizes[i-1] {
			t.Errorf("Size() does not grow while rows are written: %v", sizes)
		}
	}
	if last := sizes[len(sizes)-1]; last > m.FileSize || last < m.FileSize-4<<20 {
		t.Errorf("Size() %d before Close, file size %d", last, m.FileSize)
	}
	t.Logf("sizes %v, file %d", sizes, m.FileSize)
}

func TestDataFileColumnsByName(t *testing.T) {
	ctx := context.Background()
	cat := testCatalog(t)
	full := types.MustRowType(
		types.F("id", types.BigInt().NotNull()),
		types.F("name", types.String()),
		types.F("amount", types.Double()),
	)
	testTable(t, cat, "by_name", full, []int{0}, 2)
	// The DDL lists the columns in another order and lacks amount.
	ddl := types.MustRowType(types.F("name", types.String()), types.F("id", types.BigInt().NotNull()))
	tbl := testTable(t, cat, "by_name", ddl, []int{1}, 2)
	tf, err := newTableFiles(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	w, err := tf.newDataFileWriter(ddl, "t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(types.MustBuildRow(ddl, nil, "ann", int64(7))); err != nil {
		t.Fatal(err)
	}
	m, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if tbl, err = commitFiles(ctx, tbl, []fileMeta{m}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := scanRows(t, tbl), []string{"7 | ann | (null)"}; len(got) != 1 || got[0] != want[0] {
		t.Errorf("scan %q, want %q", got, want)
	}
}
