package postgrescdc

import (
	"testing"

	"github.com/eddystream/eddy/sql/types"
)

// TestConvert reads values as the server writes them into SQL types, and
// refuses those that do not fit instead of cutting them.
func TestConvert(t *testing.T) {
	for _, tc := range []struct {
		kind valueKind
		typ  types.Type
		in   string
		want string // "" for an error
	}{
		{kindInt, types.Int(), "2147483647", "2147483647"},
		{kindInt, types.Int(), "2147483648", ""},
		{kindInt, types.SmallInt(), "-32769", ""},
		{kindInt, types.DecimalType(3, 0), "1000", ""},
		{kindNumeric, types.DecimalType(5, 2), "123.45", "123.45"},
		{kindNumeric, types.DecimalType(5, 2), "123.4500", "123.45"},
		{kindNumeric, types.DecimalType(5, 2), "123.456", ""},
		{kindNumeric, types.DecimalType(5, 2), "1234.5", ""},
		{kindNumeric, types.DecimalType(5, 2), "NaN", ""},
		{kindNumeric, types.Double(), "NaN", "NaN"},
		{kindFloat, types.Float(), "1.1", "1.1"},
		{kindFloat, types.Double(), "-Infinity", "-Infinity"},
		{kindFloat, types.Float(), "1e300", ""},
		{kindText, types.VarChar(3), "abc", "abc"},
		{kindText, types.VarChar(3), "abcd", ""},
		{kindBytea, types.Bytes(), `\x6162`, "ab"},
		{kindBytea, types.VarBinary(1), `\x6162`, ""},
		{kindDate, types.DateType(), "infinity", ""},
		{kindDate, types.DateType(), "2024-01-01 BC", ""},
		{kindTimestampTZ, types.TimestampLTZType(6), "2024-03-01 10:00:00.5+02", "2024-03-01 08:00:00.500000"},
		{kindTimestampTZ, types.TimestampLTZType(3), "2024-03-01 10:00:00-05:30", "2024-03-01 15:30:00.000"},
		{kindTimestampTZ, types.TimestampLTZType(0), "1900-01-01 00:00:00+00:19:32", "1899-12-31 23:40:28"},
		{kindTimestampTZ, types.TimestampType(3), "2024-03-01 10:00:00+00", "2024-03-01 10:00:00.000"},
		{kindTimestamp, types.TimestampType(6), "2024-02-29 23:59:58.123456", "2024-02-29 23:59:58.123456"},
		{kindTime, types.TimeType(3), "12:34:56.789", "12:34:56.789"},
		{kindBool, types.Boolean(), "t", "TRUE"},
	} {
		rt := types.MustRowType(types.Field{Name: "v", Type: tc.typ})
		w := types.NewRowWriter(rt, types.NewArena(256))
		var cv converter
		err := cv.setField(w, 0, tc.typ, &column{name: "v", typeName: "x", kind: tc.kind}, []byte(tc.in))
		if tc.want == "" {
			if err == nil {
				t.Errorf("%q as %s: no error", tc.in, tc.typ)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q as %s: %v", tc.in, tc.typ, err)
			continue
		}
		if got := string(types.AppendText(nil, rt, w.Finish(), 0, nil)); got != tc.want {
			t.Errorf("%q as %s: got %q, want %q", tc.in, tc.typ, got, tc.want)
		}
	}
}
