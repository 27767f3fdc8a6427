package types

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/changelog"
)

var pointOne, pointTwo = 0.1, 0.2

func TestJavaFloatText(t *testing.T) {
	doubles := []struct {
		f    float64
		want string
	}{
		{1, "1.0"}, {100, "100.0"}, {1e7, "1.0E7"}, {9999999, "9999999.0"}, {0.001, "0.001"},
		{1e-4, "1.0E-4"}, {123456.789, "123456.789"}, {1e21, "1.0E21"},
		{math.MaxFloat64, "1.7976931348623157E308"}, {5e-324, "4.9E-324"},
		{pointOne + pointTwo, "0.30000000000000004"}, {-1.5, "-1.5"}, {1.23456789e8, "1.23456789E8"},
		{math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"}, {math.NaN(), "NaN"}, {0, "0.0"},
		{math.Copysign(0, -1), "-0.0"}, {12345.0e-10, "1.2345E-6"},
	}
	for _, c := range doubles {
		if got := string(AppendJavaFloat(nil, c.f, 64)); got != c.want {
			t.Errorf("Double.toString(%v) = %q, want %q", c.f, got, c.want)
		}
	}
	floats := []struct {
		f    float32
		want string
	}{
		{0.1, "0.1"}, {1e10, "1.0E10"}, {math.MaxFloat32, "3.4028235E38"}, {1.4e-45, "1.4E-45"},
		{16777216, "1.6777216E7"}, {0.3, "0.3"}, {1.1, "1.1"}, {3.14159, "3.14159"},
	}
	for _, c := range floats {
		if got := string(AppendJavaFloat(nil, float64(c.f), 32)); got != c.want {
			t.Errorf("Float.toString(%v) = %q, want %q", c.f, got, c.want)
		}
	}
}

func TestFormatRowNested(t *testing.T) {
	rt := MustRowType(
		F("id", BigInt().NotNull()),
		F("r", RowOf(F("x", String()), F("y", String()))),
		F("arr", ArrayOf(Int())),
		F("m", MapOf(String(), Int())),
		F("ts", TimestampType(3)),
		F("d", DecimalType(10, 2)),
		F("n", String()),
	)
	r := MustBuildRow(rt, nil, int64(1001), []Value{"a", "b"}, []Value{int32(1), nil},
		[]MapEntry{{"k", int32(1)}, {"z", nil}}, TimestampOf(2015, 7, 15, 8, 0, 0, 1000000),
		NewDecimal(150, 2), nil)
	want := "+I[1001, +I[a, b], [1, null], {k=1, z=null}, 2015-07-15T08:00:00.001, 1.50, null]"
	if got := FormatRow(rt, r); got != want {
		t.Errorf("FormatRow = %s\nwant        %s", got, want)
	}
	if got := FormatChange(changelog.UpdateBefore, rt, r); !strings.HasPrefix(got, "-U[1001, ") {
		t.Errorf("FormatChange = %s", got)
	}
	// CAST of the same row's values to STRING.
	var parts []string
	for i := 0; i < rt.Len(); i++ {
		parts = append(parts, string(AppendText(nil, rt, r, i, nil)))
	}
	if got, want := strings.Join(parts, " | "),
		"1001 | (a, b) | [1, NULL] | {k=1, z=NULL} | 2015-07-15 08:00:00.001 | 1.50 | NULL"; got != want {
		t.Errorf("cast text = %s\nwant        %s", got, want)
	}
}

func TestParseInterval(t *testing.T) {
	cases := []struct {
		s        string
		from, to IntervalUnit
		want     int64
		kind     Kind
	}{
		{"1-2", Year, Month, 14, KindIntervalYearMonth},
		{"-1-2", Year, Month, -14, KindIntervalYearMonth},
		{"3", Year, Year, 36, KindIntervalYearMonth},
		{"15", Month, Month, 15, KindIntervalYearMonth},
		{"10", Day, Day, 10 * MillisPerDay, KindIntervalDayTime},
		{"1 02:03:04.5", Day, Second, MillisPerDay + 2*MillisPerHour + 3*MillisPerMinute + 4500, KindIntervalDayTime},
		{"-2:30", Hour, Minute, -(2*MillisPerHour + 30*MillisPerMinute), KindIntervalDayTime},
		{"1.5", Second, Second, 1500, KindIntervalDayTime},
		{"90", Minute, Minute, 90 * MillisPerMinute, KindIntervalDayTime},
	}
	for _, c := range cases {
		got, typ, err := ParseInterval(c.s, c.from, c.to)
		if err != nil || got != c.want || typ.Kind() != c.kind {
			t.Errorf("INTERVAL '%s' %s TO %s = %d %s %v, want %d", c.s, c.from, c.to, got, typ, err, c.want)
		}
	}
	for _, bad := range []struct {
		s        string
		from, to IntervalUnit
	}{{"1-2", Day, Second}, {"x", Day, Day}, {"1", Month, Day}, {"1 2", Day, Second}} {
		if _, _, err := ParseInterval(bad.s, bad.from, bad.to); err == nil {
			t.Errorf("INTERVAL '%s' %s TO %s accepted", bad.s, bad.from, bad.to)
		}
	}
}

func TestRowTypeLookup(t *testing.T) {
	rt := MustRowType(F("Price", Int()), F("price", Int()), F("Bidder", Int()))
	if i, err := rt.Lookup("price"); err != nil || i != 1 {
		t.Errorf("exact lookup: %d %v", i, err)
	}
	if i, err := rt.Lookup("BIDDER"); err != nil || i != 2 {
		t.Errorf("case-insensitive lookup: %d %v", i, err)
	}
	var amb *AmbiguousFieldError
	if _, err := rt.Lookup("PRICE"); !errors.As(err, &amb) || len(amb.Matches) != 2 {
		t.Errorf("ambiguous lookup: %v", err)
	}
	var unk *UnknownFieldError
	if _, err := rt.Lookup("auction"); !errors.As(err, &unk) {
		t.Errorf("unknown lookup: %v", err)
	}
	if _, err := NewRowType(F("a", Int()), F("a", Int())); err == nil {
		t.Error("duplicate names accepted")
	}
}

func TestCastPadsBinaryAndTypes(t *testing.T) {
	v, err := ParseValue(Binary(4), "ab", nil)
	if err != nil || string(v.([]byte)) != "ab\x00\x00" {
		t.Errorf("BINARY(4) of 'ab' = %q %v", v, err)
	}
	if got := CastType(Int().NotNull(), String(), false); !got.Equal(String().NotNull()) {
		t.Errorf("CAST keeps NOT NULL: %s", got)
	}
	if got := CastType(String().NotNull(), Int(), true); !got.IsNullable() {
		t.Errorf("TRY_CAST is nullable: %s", got)
	}
	var ce *CastError
	if _, err := ParseValue(Int(), "99999999999", nil); !errors.As(err, &ce) || !errors.Is(err, ErrOverflow) {
		t.Errorf("integer overflow of a cast: %v", err)
	}
}

func TestDecimalText(t *testing.T) {
	cases := []struct {
		in, plain, java string
	}{
		{"0.00000010", "0.00000010", "1.0E-7"},
		{"0.00000000", "0.00000000", "0E-8"},
		{"-123.4500", "-123.4500", "-123.4500"},
		{"12345678901234567890123.456", "12345678901234567890123.456", "12345678901234567890123.456"},
		{"1e3", "1000", "1000"},
		{"-0.5", "-0.5", "-0.5"},
	}
	for _, c := range cases {
		d := MustParseDecimal(c.in)
		if d.String() != c.plain || d.JavaString() != c.java {
			t.Errorf("%s: plain %s java %s, want %s %s", c.in, d, d.JavaString(), c.plain, c.java)
		}
	}
}

func TestCastValue(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Skip(err)
	}
	ts := TimestampOf(2015, 7, 15, 8, 30, 1, 123456789)
	cases := []struct {
		v        Value
		from, to string
		want     string // FormatValue of the result in to, or "error"
	}{
		{int64(300), "BIGINT", "TINYINT", "44"},
		{int64(-1), "BIGINT", "INT", "-1"},
		{float64(3.99), "DOUBLE", "INT", "3"},
		{float64(-3.99), "DOUBLE", "BIGINT", "-3"},
		{float64(1e20), "DOUBLE", "INT", "2147483647"},
		{math.NaN(), "DOUBLE", "BIGINT", "0"},
		{float64(1e10), "DOUBLE", "SMALLINT", "-1"},
		{MustParseDecimal("-12.99"), "DECIMAL(4,2)", "INT", "-12"},
		{MustParseDecimal("1.005"), "DECIMAL(4,3)", "DECIMAL(3,2)", "1.01"},
		{int32(100), "INT", "DECIMAL(2,0)", "error"},
		{float64(0.1), "DOUBLE", "DECIMAL(5,3)", "0.100"},
		{true, "BOOLEAN", "INT", "1"},
		{MustParseDecimal("0.00"), "DECIMAL(3,2)", "BOOLEAN", "FALSE"},
		{float32(2.5), "FLOAT", "BOOLEAN", "TRUE"},
		{int64(5), "BIGINT", "DOUBLE", "5.0"},
		{ts, "TIMESTAMP(9)", "DATE", "2015-07-15"},
		{ts, "TIMESTAMP(9)", "TIME(3)", "08:30:01.123"},
		{ts, "TIMESTAMP(9)", "TIMESTAMP(3)", "2015-07-15 08:30:01.123"},
		{ts, "TIMESTAMP(9)", "TIMESTAMP_LTZ(0)", "2015-07-15 08:30:01"},
		{Date(1), "DATE", "TIMESTAMP(0)", "1970-01-02 00:00:00"},
		{TimeOf(1, 2, 3, 0), "TIME", "TIMESTAMP(0)", "1970-01-01 01:02:03"},
		{int32(14), "INT", "INTERVAL YEAR TO MONTH", "+1-02"},
		{int64(90061001), "INTERVAL DAY TO SECOND", "BIGINT", "90061001"},
		{int32(7), "INT", "STRING", "7"},
		{int32(7), "INT", "CHAR(3)", "7  "},
		{"2020-01-01", "STRING", "DATE", "2020-01-01"},
		{[]Value{int32(1), nil}, "ARRAY<INT>", "ARRAY<STRING>", "[1, NULL]"},
		{[]Value{int64(1), "x"}, "ROW<a BIGINT, b STRING>", "ROW<a INT, b CHAR(2)>", "(1, x )"},
		{Date(0), "DATE", "TIME", "error"},
		{int32(1), "INT", "DATE", "error"},
	}
	for _, c := range cases {
		from, to := MustParseType(c.from), MustParseType(c.to)
		got, err := CastValue(c.v, from, to, shanghai)
		var s string
		if err != nil {
			s = "error"
		} else if s, err = FormatValue(to, got, shanghai); err != nil {
			t.Fatalf("CAST(%v AS %s) gave %#v: %v", c.v, to, got, err)
		}
		if s != c.want {
			t.Errorf("CAST(%v: %s AS %s) = %s, want %s", c.v, from, to, s, c.want)
		}
	}
	// TIMESTAMP_LTZ converts through the session zone.
	ltz, err := CastValue(TimestampOf(2015, 7, 15, 8, 0, 0, 0), TimestampType(3), TimestampLTZType(3), shanghai)
	if err != nil || ltz.(Timestamp).UTC().Hour() != 0 {
		t.Errorf("TIMESTAMP 08:00 in Shanghai is %v UTC, want 00:00 (%v)", ltz, err)
	}
}

func TestSetTimestampMillisCutsToPrecision(t *testing.T) {
	rt := MustRowType(F("t0", TimestampType(0)), F("t3", TimestampLTZType(3)))
	w := NewRowWriter(rt, NewArena(0))
	w.SetTimestampMillis(0, -1500)
	w.SetTimestampMillis(1, -1500)
	r := w.Finish()
	if r.TimestampMillis(0) != -2000 || r.TimestampMillis(1) != -1500 {
		t.Errorf("got %d %d", r.TimestampMillis(0), r.TimestampMillis(1))
	}
	if _, err := RowFromBytes(rt, r.Bytes()); err != nil {
		t.Error(err)
	}
}
