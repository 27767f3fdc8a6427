package mysqlcdc

import (
	"testing"
	"time"

	"github.com/eddystream/eddy/sql/types"
)

// convert sets a one-column row from a value of column c and returns the
// field's text, "NULL" for NULL.
func convert(t *testing.T, typ types.Type, c *column, v any) (string, error) {
	t.Helper()
	rt := types.MustRowType(types.Field{Name: "v", Type: typ})
	w := types.NewRowWriter(rt, types.NewArena(256))
	if err := setValue(w, 0, typ, c, v, time.UTC); err != nil {
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
// from the snapshot ([]byte) and the binary log (string), as NULL, and
// refuses them for NOT NULL columns.
func TestZeroDates(t *testing.T) {
	for _, tc := range []struct {
		dataType string
		typ      types.Type
		v        any
	}{
		{"date", types.DateType(), "0000-00-00"},
		{"date", types.DateType(), []byte("0000-00-00")},
		{"datetime", types.TimestampType(3), "0000-00-00 00:00:00"},
		{"timestamp", types.TimestampLTZType(3), []byte("0000-00-00 00:00:00.000")},
	} {
		c := &column{name: "v", dataType: tc.dataType, columnType: tc.dataType}
		got, err := convert(t, tc.typ, c, tc.v)
		if err != nil || got != "NULL" {
			t.Errorf("%s %q: got %q, %v; want NULL", tc.dataType, tc.v, got, err)
		}
		if _, err := convert(t, tc.typ.NotNull(), c, tc.v); err == nil {
			t.Errorf("%s %q into a NOT NULL column: no error", tc.dataType, tc.v)
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
