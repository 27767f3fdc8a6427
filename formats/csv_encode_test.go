package formats

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// TestCSVRowEncoderMatchesBoxed encodes random rows of a column of every
// scalar type, with values that need quoting or escaping, empty strings
// and values that look like the null literal, under several options: the
// encoder writes what it wrote when it formatted each field into a string
// of its own, and fails where that failed.
func TestCSVRowEncoderMatchesBoxed(t *testing.T) {
	strs := []string{"", "a", "abc", "a,b", "a;b", "say \"hi\"", "it's", "line\nbreak", "cr\rlf", "back\\slash", "tab\tx",
		"n/a", "NULL", "null", "true", "1", "t", "é", "\xff\xfe"}
	// Long values, whose special characters are looked for otherwise.
	long := strings.Repeat("abcdefgh", 12)
	strs = append(strs, long, long+",", "\""+long, long+"\n"+long, long+"\\", long+";", long+"'")
	cols := []struct {
		typ  string
		vals []string // as CAST(s AS typ) reads them
	}{
		{"BOOLEAN", []string{"true", "false"}},
		{"TINYINT", []string{"0", "-128", "127", "1"}},
		{"SMALLINT", []string{"-32768", "12"}},
		{"INT", []string{"-2147483648", "2147483647", "1", "0"}},
		{"BIGINT", []string{"-9223372036854775808", "9223372036854775807", "1", "-1"}},
		{"FLOAT", []string{"1.5", "-0.0", "1e-5", "3.4028235E38", "NaN", "Infinity"}},
		{"DOUBLE", []string{"1.0", "1e-5", "-1.7976931348623157E308", "-Infinity", "0.1"}},
		{"DECIMAL(5, 2)", []string{"1.5", "-999.99", "0"}},
		{"DECIMAL(30, 4)", []string{"12345678901234567890.1234", "-1", "0.0001"}},
		{"CHAR(3)", []string{"a", "a,b", "", "n/a"}},
		{"VARCHAR", strs},
		{"STRING", strs},
		{"BINARY(3)", []string{"ab", "a,b", "\x00\x01\x02"}},
		{"VARBINARY", strs},
		{"DATE", []string{"2020-01-01", "1969-12-31", "0001-01-01"}},
		{"TIME(0)", []string{"00:00:00", "23:59:59"}},
		{"TIME(3)", []string{"12:34:56.789", "00:00:00"}},
		{"TIMESTAMP(0)", []string{"2020-01-01 00:00:00", "1969-12-31 23:59:59"}},
		{"TIMESTAMP(3)", []string{"2020-01-01 12:34:56.789", "2020-01-01 12:34:56"}},
		{"TIMESTAMP(9)", []string{"2020-01-01 12:34:56.123456789", "1900-01-01 00:00:00"}},
		{"TIMESTAMP_LTZ(3)", []string{"2020-01-01 12:34:56.789"}},
		{"TIMESTAMP_LTZ(6)", []string{"2020-01-01 12:34:56.123456"}},
		{"INTERVAL YEAR TO MONTH", []string{"+1-02", "-0-11"}},
		{"INTERVAL DAY TO SECOND", []string{"+1 02:03:04.000", "-0 00:00:00.001"}},
	}
	var fs []types.Field
	vals := make([][]types.Value, len(cols))
	for i, c := range cols {
		typ, err := types.ParseType(c.typ)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, types.F(fmt.Sprintf("c%d", i), typ))
		for _, s := range c.vals {
			v, err := types.ParseValue(typ, s, nil)
			if err != nil {
				t.Fatalf("%s %q: %v", c.typ, s, err)
			}
			vals[i] = append(vals[i], v)
		}
		vals[i] = append(vals[i], nil)
	}
	rt := types.MustRowType(fs...)
	options := []CSVRowOptions{
		{},
		{FieldDelimiter: ';'},
		{FieldDelimiter: '\t', Quote: '\''},
		{FieldDelimiter: 't'}, // "true", "Infinity" and dates hold it
		{Escape: '\\'},
		{DisableQuote: true, Escape: '\\'},
		{DisableQuote: true}, // a value that holds a special character fails
		{NullLiteral: "n/a", HasNullLiteral: true},
		{NullLiteral: "", HasNullLiteral: true},
		{NullLiteral: "true", HasNullLiteral: true},
		{NullLiteral: "1", HasNullLiteral: true, Quote: '\''},
		{NullLiteral: "a,b", HasNullLiteral: true},
		{NullLiteral: "a,b", HasNullLiteral: true, DisableQuote: true},
		{NullLiteral: "NULL", HasNullLiteral: true, DisableQuote: true, Escape: '\\'},
	}
	rng := rand.New(rand.NewPCG(3, 5))
	arena := types.NewArena(0)
	for _, o := range options {
		typed, err := NewCSVRowEncoder(rt, o)
		if err != nil {
			t.Fatal(err)
		}
		boxed, err := boxedCSVRowEncoder(rt, o)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < 3000; n++ {
			row := make([]types.Value, len(cols))
			for i := range row {
				row[i] = vals[i][rng.IntN(len(vals[i]))]
			}
			// Every column of one value now and then, so that each value
			// is encoded without an earlier field failing first.
			if n < 200 {
				for i := range row {
					row[i] = vals[i][n%len(vals[i])]
				}
			}
			r, err := types.BuildRow(rt, arena, row...)
			if err != nil {
				t.Fatal(err)
			}
			c := connector.TableRecord{Kind: changelog.Insert, Row: r}
			prefix := []byte("x")
			got, gerr := typed.Encode(prefix, c)
			want, werr := boxed.Encode(prefix, c)
			if fmt.Sprint(gerr) != fmt.Sprint(werr) || (werr == nil && string(got) != string(want)) {
				t.Fatalf("options %+v, row %v:\ngot  %q, %v\nwant %q, %v", o, types.FormatRow(rt, r), got, gerr, want, werr)
			}
		}
	}
	for _, k := range []changelog.Kind{changelog.UpdateBefore, changelog.Delete} {
		typed, _ := NewCSVRowEncoder(rt, CSVRowOptions{})
		boxed, _ := boxedCSVRowEncoder(rt, CSVRowOptions{})
		r := types.MustBuildRow(rt, arena, make([]types.Value, len(cols))...)
		_, gerr := typed.Encode(nil, connector.TableRecord{Kind: k, Row: r})
		_, werr := boxed.Encode(nil, connector.TableRecord{Kind: k, Row: r})
		if gerr == nil || gerr.Error() != werr.Error() {
			t.Errorf("a %v change: %v, want %v", k, gerr, werr)
		}
	}
}

// boxedAppendCSVField is appendCSVField as it was before the typed path.
func boxedAppendCSVField(dst []byte, s string, o *CSVRowOptions, forceQuote bool) ([]byte, error) {
	d, q, e := o.delim(), o.quote(), o.Escape
	special := func(c byte) bool { return c == d || c == '\n' || c == '\r' || (q != 0 && c == q) || (e != 0 && c == e) }
	needs := forceQuote
	for i := 0; i < len(s) && !needs; i++ {
		needs = special(s[i])
	}
	if !needs {
		return append(dst, s...), nil
	}
	if q == 0 {
		if e == 0 {
			return dst, fmt.Errorf("the value %q holds the delimiter or a line break, and quoting is disabled; set 'csv.escape-character' or enable quoting", s)
		}
		for i := 0; i < len(s); i++ {
			if special(s[i]) {
				dst = append(dst, e)
			}
			dst = append(dst, s[i])
		}
		return dst, nil
	}
	dst = append(dst, q)
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == q:
			dst = append(dst, q, q)
		case e != 0 && s[i] == e:
			dst = append(dst, e, e)
		default:
			dst = append(dst, s[i])
		}
	}
	return append(dst, q), nil
}

// boxedCSVRowEncoder is the encoder as it was before the typed path: each
// field's text copied into a string of its own.
func boxedCSVRowEncoder(rt *types.RowType, o CSVRowOptions) (connector.Encoder[connector.TableRecord], error) {
	if err := checkCSVColumns(rt); err != nil {
		return nil, err
	}
	var text []byte
	return connector.EncoderFunc[connector.TableRecord](func(dst []byte, c connector.TableRecord) ([]byte, error) {
		if c.Kind != changelog.Insert && c.Kind != changelog.UpdateAfter {
			return dst, fmt.Errorf("csv: cannot write a %v change: the csv format holds insertions only; use 'debezium-json' for a changelog", c.Kind)
		}
		var err error
		for i := 0; i < rt.Len(); i++ {
			if i > 0 {
				dst = append(dst, o.delim())
			}
			if c.Row.IsNull(i) {
				if o.HasNullLiteral {
					if dst, err = boxedAppendCSVField(dst, o.NullLiteral, &o, false); err != nil {
						return dst, err
					}
				}
				continue
			}
			t := rt.FieldType(i)
			if t.Kind() == types.KindBoolean {
				text = fmt.Appendf(text[:0], "%t", c.Row.Bool(i))
			} else {
				text = types.AppendText(text[:0], rt, c.Row, i, nil)
			}
			s := string(text)
			force := s == "" || (o.HasNullLiteral && s == o.NullLiteral)
			if dst, err = boxedAppendCSVField(dst, s, &o, force && o.quote() != 0); err != nil {
				return dst, fmt.Errorf("csv: column %s: %w", types.QuoteIdentifier(rt.Field(i).Name), err)
			}
		}
		return dst, nil
	}), nil
}
