package filesystem

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// boxedPartitionDir is the directory of a row's partition as it was named
// before partitionDirs: each value's text in a string of its own, escaped,
// the parts joined with filepath.Join.
func boxedPartitionDir(l *tableLayout, r types.Row) string {
	escape := func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c < 0x20 || strings.IndexByte("\"#%'*/:=?\\\x7f{[]^", c) >= 0 {
				fmt.Fprintf(&b, "%%%02X", c)
				continue
			}
			b.WriteByte(c)
		}
		return b.String()
	}
	var parts []string
	for _, i := range l.partCols {
		v := l.defaultName
		if !r.IsNull(i) {
			if s := string(types.AppendText(nil, l.schema, r, i, nil)); s != "" {
				v = escape(s)
			}
		}
		parts = append(parts, l.schema.Field(i).Name+"="+v)
	}
	return filepath.Join(parts...)
}

// reusedRows builds rows in one buffer, as a source's arena reuses its
// memory: a row is good until the next is built.
type reusedRows struct {
	rt  *types.RowType
	w   *types.RowWriter
	buf []byte
}

func (b *reusedRows) row(t *testing.T, vals ...types.Value) types.Row {
	t.Helper()
	for i, v := range vals {
		if err := b.w.SetValue(i, v); err != nil {
			t.Fatal(err)
		}
	}
	b.buf = b.w.AppendTo(b.buf[:0])
	b.w.Reset()
	if len(b.buf) == 0 {
		return types.Row{}
	}
	r, err := types.RowFromString(b.rt, unsafe.String(&b.buf[0], len(b.buf)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func testLayout(t *testing.T, rt *types.RowType, partCols ...int) *tableLayout {
	t.Helper()
	l, err := newTableLayout(&connector.Table{Schema: rt, PartitionKeys: partCols}, "__DEFAULT_PARTITION__")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestPartitionDirs names the partitions of sequences of rows, in runs of
// one partition, alternating between two, with NULL and empty values (the
// default partition) and values that need escaping, for a partition
// column of every scalar type: each directory is the one named before the
// last row's was remembered.
func TestPartitionDirs(t *testing.T) {
	strs := []types.Value{"2020-01-01", "2020-01-02", "12:30", "a/b", "a=b%c", "", "x\x01\x7f{[]^}?*'\"#\\", "é", nil}
	cols := []struct {
		typ  string
		vals []types.Value
	}{
		{"BOOLEAN", []types.Value{true, false, nil}},
		{"TINYINT", []types.Value{int8(1), int8(-1), nil}},
		{"SMALLINT", []types.Value{int16(300), int16(-300)}},
		{"INT", []types.Value{int32(7), int32(8), int32(-7), nil}},
		{"BIGINT", []types.Value{int64(1) << 40, int64(-5), int64(0)}},
		{"FLOAT", []types.Value{float32(1.5), float32(1e-7), float32(0)}},
		{"DOUBLE", []types.Value{1.5, 1e300, -0.25}},
		{"DECIMAL(5, 2)", []types.Value{types.MustParseDecimal("1.50"), types.MustParseDecimal("-2.25")}},
		{"DECIMAL(30, 3)", []types.Value{types.MustParseDecimal("123456789012345678901.500"), types.MustParseDecimal("1.000"), nil}},
		{"CHAR(3)", []types.Value{"abc", "a:b", nil}},
		{"VARCHAR", strs},
		{"STRING", strs},
		{"VARBINARY", []types.Value{[]byte("ab"), []byte("a/b"), []byte{}, nil}},
		{"DATE", []types.Value{types.Date(18262), types.Date(18263), types.Date(-1)}},
		{"TIME(0)", []types.Value{types.Time(3600_000), types.Time(0)}},
		{"TIMESTAMP(3)", []types.Value{types.Timestamp{Millis: 1577836800123}, types.Timestamp{Millis: 1577836800124}}},
		{"TIMESTAMP(9)", []types.Value{types.Timestamp{Millis: 1577836800123, NanoOfMilli: 456789}, types.Timestamp{Millis: 1577836800123, NanoOfMilli: 456788}, nil}},
		{"TIMESTAMP_LTZ(6)", []types.Value{types.Timestamp{Millis: 1, NanoOfMilli: 1000}, types.Timestamp{Millis: 1}}},
		{"INTERVAL DAY TO SECOND", []types.Value{int64(1000), int64(-86400000)}},
	}
	rng := rand.New(rand.NewPCG(1, 9))
	for _, c := range cols {
		typ, err := types.ParseType(c.typ)
		if err != nil {
			t.Fatal(err)
		}
		// The partition columns among the data columns, one of them with
		// a name that holds a separator.
		rt := types.MustRowType(types.F("id", types.BigInt()), types.F("p", typ), types.F("v", types.String()), types.F("x/q", types.String()))
		l := testLayout(t, rt, 1, 3)
		p := newPartitionDirs(l)
		rows := &reusedRows{rt: rt, w: types.NewRowWriter(rt, nil)}
		check := func(n int, pv, qv types.Value) {
			t.Helper()
			r := rows.row(t, int64(n), pv, fmt.Sprintf("v%d", n), qv)
			if got, want := p.Dir(r), boxedPartitionDir(l, r); got != want {
				t.Fatalf("%s: row %d (%v, %v): directory %q, want %q", c.typ, n, pv, qv, got, want)
			}
		}
		n := 0
		// Runs of one partition, then two partitions alternating.
		for _, pv := range c.vals {
			for _, qv := range strs {
				for k := 0; k < 3; k++ {
					check(n, pv, qv)
					n++
				}
			}
		}
		for _, pv := range c.vals {
			for _, pw := range c.vals {
				for k := 0; k < 4; k++ {
					if k%2 == 0 {
						check(n, pv, "h")
					} else {
						check(n, pw, "h")
					}
					n++
				}
			}
		}
		for k := 0; k < 500; k++ {
			check(n, c.vals[rng.IntN(len(c.vals))], strs[rng.IntN(3)])
			n++
		}
	}
}

// TestPartitionDirsDefaultName: a NULL or empty value is the default
// partition, and escaping is Hive's.
func TestPartitionDirsDefaultName(t *testing.T) {
	rt := types.MustRowType(types.F("v", types.Int()), types.F("dt", types.String()), types.F("hm", types.String()))
	l := testLayout(t, rt, 1, 2)
	p := newPartitionDirs(l)
	rows := &reusedRows{rt: rt, w: types.NewRowWriter(rt, nil)}
	for _, c := range []struct {
		dt, hm types.Value
		want   string
	}{
		{"2020-01-01", "10:15", "dt=2020-01-01/hm=10%3A15"},
		{"2020-01-01", "10:15", "dt=2020-01-01/hm=10%3A15"},
		{"2020-01-01", nil, "dt=2020-01-01/hm=__DEFAULT_PARTITION__"},
		{"2020-01-01", "", "dt=2020-01-01/hm=__DEFAULT_PARTITION__"},
		{nil, "", "dt=__DEFAULT_PARTITION__/hm=__DEFAULT_PARTITION__"},
		{"", nil, "dt=__DEFAULT_PARTITION__/hm=__DEFAULT_PARTITION__"},
		{"a/b c", "%#\n", "dt=a%2Fb c/hm=%25%23%0A"},
		{"2020-01-01", "10:15", "dt=2020-01-01/hm=10%3A15"},
	} {
		r := rows.row(t, int32(1), c.dt, c.hm)
		if got := p.Dir(r); got != filepath.FromSlash(c.want) {
			t.Errorf("(%v, %v): %q, want %q", c.dt, c.hm, got, c.want)
		}
	}
}

type testWriterContext struct{}

func (testWriterContext) SinkName() string      { return "test" }
func (testWriterContext) Subtask() int          { return 0 }
func (testWriterContext) Parallelism() int      { return 1 }
func (testWriterContext) ProcessingTime() int64 { return 0 }
func (testWriterContext) Log() *slog.Logger     { return slog.Default() }

// TestTableCommitterAlternatingPartitions writes rows that alternate
// between partitions, in two transactions: each partition gets one part
// file a transaction, with its rows in order and without the partition
// columns. The rows are written in reused memory, each over the one
// before, as a source chained to the sink writes them when the committer
// says it keeps nothing of them (connector.NonRetainingWriter), which it
// must then say.
func TestTableCommitterAlternatingPartitions(t *testing.T) {
	// The partition column between the data columns, whose rows the
	// committer projects, and after them, where it reads them in place.
	for _, last := range []bool{false, true} {
		t.Run(fmt.Sprintf("partition column last %v", last), func(t *testing.T) { alternatePartitions(t, last) })
	}
}

func alternatePartitions(t *testing.T, last bool) {
	rt := types.MustRowType(types.F("id", types.Int()), types.F("dt", types.String()), types.F("v", types.String()))
	part := 1
	if last {
		rt, part = types.MustRowType(types.F("id", types.Int()), types.F("v", types.String()), types.F("dt", types.String())), 2
	}
	l := testLayout(t, rt, part)
	dir := t.TempDir()
	enc := connector.EncoderFunc[connector.TableRecord](func(dst []byte, c connector.TableRecord) ([]byte, error) {
		if c.Row.Len() != 2 {
			return nil, fmt.Errorf("a data row of %d columns, want 2", c.Row.Len())
		}
		return fmt.Appendf(dst, "(%d, %s)", c.Row.Int32(0), c.Row.String(1)), nil
	})
	var seq atomic.Int64
	c := newTableCommitter(dir, ".txt", l, PartitionCommit{}, testWriterContext{}, &seq, enc)
	if want := map[bool]int{false: 0, true: 2}[last]; c.dataPrefix != want {
		t.Errorf("the committer reads %d data columns in place, want %d", c.dataPrefix, want)
	}
	if !c.RetainsNoRecords() {
		t.Error("the committer does not say it keeps nothing of its records")
	}
	rows := &reusedRows{rt: rt, w: types.NewRowWriter(rt, nil)}
	want := map[string][]string{}
	n := 0
	for round := 0; round < 2; round++ {
		tx, err := c.Begin()
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 40; k++ {
			dt := []types.Value{"a", "b", "a", nil, "c", "c"}[k%6]
			var r types.Row
			if last {
				r = rows.row(t, int32(n), fmt.Sprint("v", n), dt)
			} else {
				r = rows.row(t, int32(n), dt, fmt.Sprint("v", n))
			}
			if err := c.Write(&tx, connector.TableRecord{Row: r}); err != nil {
				t.Fatal(err)
			}
			part := boxedPartitionDir(l, r)
			want[part] = append(want[part], fmt.Sprintf("(%d, v%d)", n, n))
			n++
		}
		if err := c.PreCommit(&tx); err != nil {
			t.Fatal(err)
		}
		if err := c.Commit(tx); err != nil {
			t.Fatal(err)
		}
		if len(tx.Files) != 4 {
			t.Errorf("transaction %d wrote %d files, want one a partition: %v", round, len(tx.Files), tx.Files)
		}
	}
	for part, lines := range want {
		es, err := os.ReadDir(filepath.Join(dir, part))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range es {
			b, err := os.ReadFile(filepath.Join(dir, part, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")...)
		}
		slices.SortStableFunc(got, func(a, b string) int { return partRowNumber(a) - partRowNumber(b) })
		if !slices.Equal(got, lines) || len(es) != 2 {
			t.Errorf("partition %s: %d files of rows %v, want 2 of %v", part, len(es), got, lines)
		}
	}
}

func partRowNumber(s string) int {
	var n int
	fmt.Sscanf(s, "(%d,", &n)
	return n
}
