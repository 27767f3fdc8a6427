package formats_test

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/formats"
	"github.com/eddystream/eddy/sql/types"
)

// TestAvroGolden runs the data-driven cases of testdata/avro: the avro
// format writing and reading the rows of SQL tables. A case is
//
//	schema <format>          the Avro schema derived from the row type
//	roundtrip <format>       each line "<kind> <JSON of the row>" encoded (in
//	                         hex) and decoded back
//	decode <format>          each line of hex decoded: its change, or the error
//
// and its input starts with "schema <row type>".
func TestAvroGolden(t *testing.T) {
	datadriven.Walk(t, "testdata/avro", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			format := d.CmdArgs[0].Key
			var rt *types.RowType
			var data []string
			for _, line := range strings.Split(strings.TrimRight(d.Input, "\n"), "\n") {
				if s, ok := strings.CutPrefix(line, "schema "); ok {
					typ, err := types.ParseType(s)
					if err != nil {
						t.Fatalf("%s: %v", d.Pos, err)
					}
					rt = typ.Row()
					continue
				}
				data = append(data, line)
			}
			if rt == nil {
				t.Fatalf("%s: no schema line", d.Pos)
			}
			table := &connector.Table{Schema: rt}
			var out strings.Builder
			decode := func(dec connector.Decoder[connector.TableRecord], b []byte) {
				var got []string
				if err := dec.Decode(b, func(c connector.TableRecord) {
					got = append(got, types.FormatChange(c.Kind, rt, c.Row))
				}); err != nil {
					got = append(got, "error: "+err.Error())
				}
				out.WriteString(strings.Join(got, " ") + "\n")
			}
			switch d.Cmd {
			case "schema":
				s, err := formats.AvroSchemaOf(rt)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				return s + "\n"
			case "decode":
				dec, err := connector.OpenTableDecoder(connector.Default, format, nil, table)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				for _, line := range data {
					b, err := hex.DecodeString(strings.ReplaceAll(line, " ", ""))
					if err != nil {
						t.Fatalf("%s: %v", d.Pos, err)
					}
					decode(dec, b)
				}
			case "roundtrip":
				enc, err := connector.OpenTableEncoder(connector.Default, format, nil, table)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				dec, err := connector.OpenTableDecoder(connector.Default, format, nil, table)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				jd, err := types.NewJSONDecoder(rt, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, line := range data {
					k, js, _ := strings.Cut(line, " ")
					kind, err := changelog.ParseKind(k)
					if err != nil {
						t.Fatalf("%s: %v", d.Pos, err)
					}
					row, err := jd.Decode([]byte(js))
					if err != nil {
						t.Fatalf("%s: %s: %v", d.Pos, js, err)
					}
					b, err := enc.Encode(nil, connector.TableRecord{Kind: kind, Row: row})
					if err != nil {
						fmt.Fprintf(&out, "error: %v\n", err)
						continue
					}
					fmt.Fprintf(&out, "%x\n", b)
					decode(dec, b)
				}
			default:
				t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
			}
			return out.String()
		})
	})
}
