package types

import (
	"math/rand/v2"
	"testing"
)

// fuzzTypes are the row types the fuzzers decode into: every kind, nested.
var fuzzTypes = []*RowType{
	bidType,
	MustRowType(
		F("b", Boolean()), F("t", TinyInt()), F("s", SmallInt()), F("i", Int()), F("f", Float()),
		F("d", Double()), F("dec", DecimalType(10, 2)), F("big", DecimalType(30, 5)), F("c", Char(3)),
		F("bin", Bytes()), F("date", DateType()), F("time", TimeType(3)), F("ts9", TimestampType(9)),
		F("ltz", TimestampLTZType(3)), F("ym", IntervalYearMonth()), F("dt", IntervalDayTime()),
	),
	MustRowType(
		F("r", RowOf(F("x", Int()), F("y", ArrayOf(String())))),
		F("a", ArrayOf(ArrayOf(BigInt()))),
		F("m", MapOf(String(), DecimalType(20, 2))),
		F("ms", MultisetOf(String())),
		F("ar", ArrayOf(RowOf(F("ts", TimestampType(6))))),
	),
}

// FuzzRowFromBytes feeds arbitrary bytes to RowFromBytes: it must never
// panic, and bytes it accepts must read, print, encode to JSON and compare
// without a panic and re-encode to the same bytes.
func FuzzRowFromBytes(f *testing.F) {
	rng := rand.New(rand.NewPCG(11, 12))
	for k, rt := range fuzzTypes {
		for range 8 {
			vals := make([]Value, rt.Len())
			for i := range vals {
				vals[i] = randValue(rng, rt.FieldType(i))
			}
			f.Add(uint8(k), MustBuildRow(rt, nil, vals...).Bytes())
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		rt := fuzzTypes[int(which)%len(fuzzTypes)]
		r, err := RowFromBytes(rt, b)
		if err != nil {
			return
		}
		vals := RowValues(rt, r)
		_ = FormatRow(rt, r)
		for i := 0; i < rt.Len(); i++ {
			_ = AppendText(nil, rt, r, i, nil)
			_ = Compare(rt.FieldType(i), r, r, i)
		}
		_, _ = AppendJSON(nil, rt, r, nil)
		again, err := BuildRow(rt, nil, vals...)
		if err != nil {
			t.Fatalf("values of an accepted row do not write back: %v", err)
		}
		if again != r {
			t.Fatalf("accepted non-canonical bytes:\n%x\nre-encoded:\n%x", r.Encoding(), again.Encoding())
		}
	})
}

// FuzzJSONDecode feeds arbitrary text to the JSON decoder: it must never
// panic, and a row it decodes must encode to JSON that decodes to the same
// row.
func FuzzJSONDecode(f *testing.F) {
	seeds := []string{
		`{"auction": 1, "bidder": 2, "price": 3, "dateTime": "2015-07-15 08:00:00.001", "channel": "c", "url": "u", "extra": ""}`,
		`{"b": true, "t": 1, "s": "2", "i": 3.5, "f": 1.5, "d": "NaN", "dec": "1.005", "big": 1e3, "c": "abc", "bin": "aGk=", "date": "2020-01-01", "time": "08:00:00", "ts9": "2015-07-15 08:00:00.123456789", "ltz": "2015-07-15 08:00:00Z", "ym": 14, "dt": 5000}`,
		`{"r": {"x": 1, "y": ["a", null]}, "a": [[1], [], null], "m": {"k": 1.5}, "ms": {"a": 2}, "ar": [{"ts": "2015-07-15 08:00:00.5"}, null]}`,
		`{"r": {"x": "\u00e9\ud834\udd1e"}, "unknown": [1, {"x": [true, false, null]}], "a": [[1, 2e3]]}`,
		`{}`, `[]`, `{"a":`, `{"r": {"x": 1}`, `nul`,
	}
	for k := range fuzzTypes {
		for _, s := range seeds {
			f.Add(uint8(k), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		rt := fuzzTypes[int(which)%len(fuzzTypes)]
		for _, opts := range []*JSONOptions{nil, {IgnoreParseErrors: true}} {
			dec, err := NewJSONDecoder(rt, nil, opts)
			if err != nil {
				t.Fatal(err)
			}
			r, err := dec.Decode(data)
			if err != nil {
				continue
			}
			if _, err := RowFromBytes(rt, r.Bytes()); err != nil {
				t.Fatalf("decoded row is not a valid encoding: %v", err)
			}
			out, err := AppendJSON(nil, rt, r, nil)
			if err != nil {
				t.Fatalf("decoded row does not encode: %v", err)
			}
			dec2, _ := NewJSONDecoder(rt, nil, nil)
			r2, err := dec2.Decode(out)
			if err != nil {
				t.Fatalf("%s does not decode back: %v", out, err)
			}
			if r2 != r {
				t.Fatalf("JSON round trip changes the row:\n%s\n%s", FormatRow(rt, r), FormatRow(rt, r2))
			}
		}
	})
}
