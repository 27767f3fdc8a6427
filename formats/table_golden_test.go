package formats_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// TestTableFormatsGolden runs the data-driven cases of testdata/table: the
// formats decoding and encoding the rows of SQL tables. A case is
//
//	decode <format>          each data line decoded: its changes, or the error
//	encode <format>          each data line "<kind> <JSON of the row>" encoded
//	roundtrip <format>       each data line "<kind> <JSON of the row>" encoded,
//	                         then decoded by the format: the changes read back,
//	                         followed by "!= <change>" unless they are the row
//	                         as an insertion (+I, +U) or a deletion (-U, -D)
//
// and its input starts with "schema <row type>" and any number of
// "option <key>=<value>" lines (the format's options, without its prefix).
func TestTableFormatsGolden(t *testing.T) {
	datadriven.Walk(t, "testdata/table", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			format := d.CmdArgs[0].Key
			var rt *types.RowType
			opts := map[string]string{}
			var data []string
			for _, line := range strings.Split(strings.TrimRight(d.Input, "\n"), "\n") {
				switch {
				case strings.HasPrefix(line, "schema "):
					typ, err := types.ParseType(strings.TrimPrefix(line, "schema "))
					if err != nil {
						t.Fatalf("%s: %v", d.Pos, err)
					}
					rt = typ.Row()
				case strings.HasPrefix(line, "option "):
					k, v, _ := strings.Cut(strings.TrimPrefix(line, "option "), "=")
					opts[k] = v
				default:
					data = append(data, line)
				}
			}
			if rt == nil {
				t.Fatalf("%s: no schema line", d.Pos)
			}
			table := &connector.Table{Schema: rt}
			var out strings.Builder
			switch d.Cmd {
			case "decode":
				dec, err := connector.OpenTableDecoder(connector.Default, format, opts, table)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				for _, line := range data {
					var got []string
					err := dec.Decode([]byte(line), func(c connector.TableRecord) {
						got = append(got, types.FormatChange(c.Kind, rt, c.Row))
					})
					if err != nil {
						got = append(got, "error: "+err.Error())
					}
					if len(got) == 0 {
						got = append(got, "(nothing)")
					}
					out.WriteString(strings.Join(got, " ") + "\n")
				}
			case "encode", "roundtrip":
				enc, err := connector.OpenTableEncoder(connector.Default, format, opts, table)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				var dec connector.Decoder[connector.TableRecord]
				if d.Cmd == "roundtrip" {
					if dec, err = connector.OpenTableDecoder(connector.Default, format, opts, table); err != nil {
						return "error: " + err.Error() + "\n"
					}
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
					if dec == nil {
						fmt.Fprintf(&out, "%s\n", b)
						continue
					}
					var got []string
					if err := dec.Decode(b, func(c connector.TableRecord) {
						got = append(got, types.FormatChange(c.Kind, rt, c.Row))
					}); err != nil {
						got = append(got, "error: "+err.Error())
					}
					want := changelog.Delete
					if kind.IsAddition() {
						want = changelog.Insert
					}
					if w := types.FormatChange(want, rt, row); len(got) != 1 || got[0] != w {
						got = append(got, "!= "+w)
					}
					fmt.Fprintf(&out, "%s\n", strings.Join(got, " "))
				}
			default:
				t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
			}
			return out.String()
		})
	})
}
