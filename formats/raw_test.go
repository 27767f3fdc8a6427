package formats_test

import (
	"bytes"
	"math"
	"testing"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// TestRawNumbersRoundTrip writes a value of each numeric type in both byte
// orders and reads it back, and checks the bytes of one against the
// encoding Flink's raw format gives.
func TestRawNumbersRoundTrip(t *testing.T) {
	cases := []struct {
		typ   string
		value any
	}{
		{"BOOLEAN", true}, {"TINYINT", int8(-7)}, {"SMALLINT", int16(-300)}, {"INT", int32(-70000)},
		{"BIGINT", int64(math.MinInt64 + 5)}, {"FLOAT", float32(1.5)}, {"DOUBLE", -2.25},
	}
	for _, order := range []string{"big-endian", "little-endian"} {
		for _, c := range cases {
			typ, err := types.ParseType("ROW<v " + c.typ + ">")
			if err != nil {
				t.Fatal(err)
			}
			rt := typ.Row()
			table := &connector.Table{Name: "t", Schema: rt}
			opts := map[string]string{"raw.endianness": order}
			enc, err := connector.OpenTableEncoder(connector.Default, "raw", opts, table)
			if err != nil {
				t.Fatal(err)
			}
			dec, err := connector.OpenTableDecoder(connector.Default, "raw", opts, table)
			if err != nil {
				t.Fatal(err)
			}
			w := types.NewRowWriter(rt, types.NewArena(0))
			if err := w.SetValue(0, c.value); err != nil {
				t.Fatalf("%s: %v", c.typ, err)
			}
			in := w.Finish()
			b, err := enc.Encode(nil, connector.TableRecord{Kind: changelog.Insert, Row: in})
			if err != nil {
				t.Fatalf("%s %s: %v", order, c.typ, err)
			}
			var got []connector.TableRecord
			if err := dec.Decode(b, func(r connector.TableRecord) { got = append(got, r) }); err != nil {
				t.Fatalf("%s %s: decoding %x: %v", order, c.typ, b, err)
			}
			if len(got) != 1 || types.FormatRow(rt, got[0].Row) != types.FormatRow(rt, in) {
				t.Errorf("%s %s: %x read back as %v, want %s", order, c.typ, b, got, types.FormatRow(rt, in))
			}
			if c.typ == "INT" {
				want := []byte{0xff, 0xfe, 0xee, 0x90}
				if order == "little-endian" {
					want = []byte{0x90, 0xee, 0xfe, 0xff}
				}
				if !bytes.Equal(b, want) {
					t.Errorf("%s INT -70000 is %x, want %x", order, b, want)
				}
			}
			// An empty message is NULL, and NULL is written as one.
			got = got[:0]
			if err := dec.Decode(nil, func(r connector.TableRecord) { got = append(got, r) }); err != nil || len(got) != 1 || !got[0].Row.IsNull(0) {
				t.Errorf("%s: an empty message read as %v, %v; want NULL", c.typ, got, err)
			}
			if b, err := enc.Encode(nil, got[0]); err != nil || len(b) != 0 {
				t.Errorf("%s: NULL written as %x, %v; want an empty message", c.typ, b, err)
			}
		}
	}
}

// TestRawGoRecords reads and writes string and []byte records of the Go
// API, and refuses other record types.
func TestRawGoRecords(t *testing.T) {
	dec, err := connector.OpenDecoder[string](connector.Default, "raw", map[string]string{"raw.charset": "UTF-16LE"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := dec.Decode([]byte{'h', 0, 'i', 0}, func(s string) { got = append(got, s) }); err != nil || len(got) != 1 || got[0] != "hi" {
		t.Errorf("UTF-16LE message read as %q, %v", got, err)
	}
	enc, err := connector.OpenEncoder[[]byte](connector.Default, "raw", nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := enc.Encode([]byte("<"), []byte{0, 1, 2}); err != nil || !bytes.Equal(b, []byte{'<', 0, 1, 2}) {
		t.Errorf("bytes written as %x, %v", b, err)
	}
	if _, err := connector.OpenDecoder[int](connector.Default, "raw", nil); err == nil {
		t.Error("an int record type was accepted")
	}
	if _, err := connector.OpenDecoder[string](connector.Default, "raw", map[string]string{"raw.charset": "klingon"}); err == nil {
		t.Error("an unknown charset was accepted")
	}
}
