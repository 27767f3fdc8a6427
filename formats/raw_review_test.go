package formats_test

import (
	"bytes"
	"testing"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// rawTable opens the raw format's table decoder and encoder for a single
// column of type typ.
func rawTable(t *testing.T, typ string, opts map[string]string) (*types.RowType, connector.Decoder[connector.TableRecord], connector.Encoder[connector.TableRecord]) {
	t.Helper()
	pt, err := types.ParseType("ROW<v " + typ + ">")
	if err != nil {
		t.Fatal(err)
	}
	table := &connector.Table{Name: "t", Schema: pt.Row()}
	dec, err := connector.OpenTableDecoder(connector.Default, "raw", opts, table)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := connector.OpenTableEncoder(connector.Default, "raw", opts, table)
	if err != nil {
		t.Fatal(err)
	}
	return pt.Row(), dec, enc
}

// TestRawBooleanAnyNonZeroByteIsTrue reads BOOLEAN messages as Flink's raw
// format does: the byte 0 is FALSE and any other byte TRUE.
func TestRawBooleanAnyNonZeroByteIsTrue(t *testing.T) {
	rt, dec, _ := rawTable(t, "BOOLEAN", nil)
	for _, c := range []struct {
		b    byte
		want string
	}{{0, "+I[false]"}, {1, "+I[true]"}, {2, "+I[true]"}, {0xff, "+I[true]"}} {
		var got []string
		if err := dec.Decode([]byte{c.b}, func(r connector.TableRecord) { got = append(got, types.FormatRow(rt, r.Row)) }); err != nil {
			t.Errorf("the byte %#x: %v; want %s", c.b, err, c.want)
			continue
		}
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("the byte %#x read as %v, want %s", c.b, got, c.want)
		}
	}
}

// TestRawLatin1IsISO88591 reads and writes 'raw.charset' = 'ISO-8859-1' as
// Java's ISO-8859-1, which Flink's raw format uses: every byte is the code
// point of the same value, 0x80 to 0x9F included (the WHATWG label of the
// same name means windows-1252, which reads 0x80 as the euro sign).
func TestRawLatin1IsISO88591(t *testing.T) {
	for _, name := range []string{"ISO-8859-1", "iso-8859-1", "ISO8859_1", "latin1"} {
		rt, dec, enc := rawTable(t, "STRING", map[string]string{"raw.charset": name})
		var got []connector.TableRecord
		if err := dec.Decode([]byte{0x80, 0x9f, 0xe9}, func(r connector.TableRecord) { got = append(got, r) }); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != 1 || got[0].Row.String(0) != "\u0080\u009f\u00e9" {
			t.Errorf("%s: the bytes 80 9f e9 read as %q, want U+0080 U+009F U+00E9", name, types.FormatRow(rt, got[0].Row))
		}
		b, err := enc.Encode(nil, got[0])
		if err != nil || !bytes.Equal(b, []byte{0x80, 0x9f, 0xe9}) {
			t.Errorf("%s: U+0080 U+009F U+00E9 written as %x, %v; want 80 9f e9", name, b, err)
		}
		w := types.NewRowWriter(rt, types.NewArena(0))
		w.SetString(0, "€")
		if b, err := enc.Encode(nil, connector.TableRecord{Kind: changelog.Insert, Row: w.Finish()}); err == nil {
			t.Errorf("%s: the euro sign, which ISO-8859-1 lacks, was written as %x", name, b)
		}
	}
}
