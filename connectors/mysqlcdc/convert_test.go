package mysqlcdc

import (
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/sql/types"
)

// convert sets a one-column row from a value of column c and returns the
// field's text, "NULL" for NULL.
func convert(t *testing.T, typ types.Type, c *column, v any) (string, error) {
	return convertWith(t, typ, c, v, valueOptions{zone: time.UTC})
}

// convertWith is convert with the options o.
func convertWith(t *testing.T, typ types.Type, c *column, v any, o valueOptions) (string, error) {
	t.Helper()
	rt := types.MustRowType(types.Field{Name: "v", Type: typ})
	w := types.NewRowWriter(rt, types.NewArena(256))
	if err := setValue(w, 0, typ, c, v, o); err != nil {
		return "", err
	}
	row := w.Finish()
	if row.IsNull(0) {
		return "NULL", nil
	}
	return string(types.AppendText(nil, rt, row, 0, nil)), nil
}

// TestUnsignedFromBinlog reads the values the binary log decodes as signed
// Go integers from unsigned columns: a MEDIUMINT UNSIGNED arrives as the
// int32 of its 24 bits sign-extended, an INT UNSIGNED as the int32 of its
// 32 bits.
func TestUnsignedFromBinlog(t *testing.T) {
	for _, tc := range []struct {
		dataType string
		v        any
		want     string
	}{
		{"tinyint", int8(-1), "255"},
		{"smallint", int16(-1), "65535"},
		{"mediumint", int32(-1), "16777215"},
		{"mediumint", int32(-8388608), "8388608"},
		{"mediumint", int32(8388607), "8388607"},
		{"int", int32(-1), "4294967295"},
		{"bigint", int64(-1), "18446744073709551615"},
	} {
		c := &column{name: "v", dataType: tc.dataType, columnType: tc.dataType + " unsigned", unsigned: true}
		got, err := convert(t, types.DecimalType(20, 0), c, tc.v)
		if err != nil {
			t.Errorf("%s unsigned %v: %v", tc.dataType, tc.v, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s unsigned %v: got %s, want %s", tc.dataType, tc.v, got, tc.want)
		}
		if k := valueText(c, tc.v); k != tc.want {
			t.Errorf("%s unsigned %v as a key: got %s, want %s", tc.dataType, tc.v, k, tc.want)
		}
	}
}

// TestZeroDates reads zero dates of DATE, DATETIME and TIMESTAMP columns,
// from the snapshot ([]byte) and the binary log (string), as each
// 'jdbc.properties.zeroDateTimeBehavior' says: NULL by default (refused for
// NOT NULL columns), 0001-01-01 with ROUND, an error with EXCEPTION, and
// always as text into a STRING column.
func TestZeroDates(t *testing.T) {
	for _, tc := range []struct {
		dataType string
		typ      types.Type
		v        any
		round    string
	}{
		{"date", types.DateType(), "0000-00-00", "0001-01-01"},
		{"date", types.DateType(), []byte("0000-00-00"), "0001-01-01"},
		{"datetime", types.TimestampType(3), "0000-00-00 00:00:00", "0001-01-01 00:00:00.000"},
		{"timestamp", types.TimestampLTZType(3), []byte("0000-00-00 00:00:00.000"), "0001-01-01 00:00:00.000"},
		{"timestamp", types.TimestampType(0), "0000-00-00 00:00:00", "0001-01-01 00:00:00"},
		{"datetime", types.TimestampLTZType(0), "0000-00-00 00:00:00", "0001-01-01 00:00:00"},
	} {
		c := &column{name: "v", dataType: tc.dataType, columnType: tc.dataType}
		got, err := convert(t, tc.typ, c, tc.v)
		if err != nil || got != "NULL" {
			t.Errorf("%s %q: got %q, %v; want NULL", tc.dataType, tc.v, got, err)
		}
		if _, err := convert(t, tc.typ.NotNull(), c, tc.v); err == nil || !strings.Contains(err.Error(), "zeroDateTimeBehavior") {
			t.Errorf("%s %q into a NOT NULL column: got %v, want an error naming the option", tc.dataType, tc.v, err)
		}
		round := valueOptions{zone: time.UTC, zeroDates: "ROUND"}
		if got, err := convertWith(t, tc.typ.NotNull(), c, tc.v, round); err != nil || got != tc.round {
			t.Errorf("%s %q with ROUND: got %q, %v; want %s", tc.dataType, tc.v, got, err, tc.round)
		}
		// Whatever 'server-time-zone' says, a rounded value is exactly
		// the first day of year 1 at midnight.
		east := valueOptions{zone: time.FixedZone("UTC+5:30", 5*3600+1800), zeroDates: "ROUND"}
		if got, err := convertWith(t, tc.typ.NotNull(), c, tc.v, east); err != nil || got != tc.round {
			t.Errorf("%s %q into %s with ROUND and server time zone UTC+5:30: got %q, %v; want %s", tc.dataType, tc.v, tc.typ, got, err, tc.round)
		}
		if _, err := convertWith(t, tc.typ, c, tc.v, valueOptions{zone: time.UTC, zeroDates: "EXCEPTION"}); err == nil {
			t.Errorf("%s %q with EXCEPTION: no error", tc.dataType, tc.v)
		}
		text, ok := tc.v.(string)
		if !ok {
			text = string(tc.v.([]byte))
		}
		if got, err := convertWith(t, types.String(), c, tc.v, round); err != nil || got != text {
			t.Errorf("%s %q into STRING: got %q, %v; want the text", tc.dataType, tc.v, got, err)
		}
	}
}

// TestFloatFromBinlog reads a FLOAT column's value, which the binary log
// decodes as a float32, as the snapshot's text gives it (1.1, not
// 1.100000023841858) when the SQL column is wider than FLOAT.
func TestFloatFromBinlog(t *testing.T) {
	c := &column{name: "v", dataType: "float", columnType: "float"}
	for _, typ := range []types.Type{types.Float(), types.Double(), types.String(), types.DecimalType(10, 4)} {
		snap, err := convert(t, typ, c, float64(1.1))
		if err != nil {
			t.Fatal(err)
		}
		bin, err := convert(t, typ, c, float32(1.1))
		if err != nil {
			t.Fatal(err)
		}
		if snap != bin {
			t.Errorf("as %s: the snapshot gives %s, the binary log %s", typ, snap, bin)
		}
	}
}
