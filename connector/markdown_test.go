package connector_test

import (
	"strings"
	"testing"

	"github.com/eddystream/eddy/connector"
)

func TestMarkdown(t *testing.T) {
	r := connector.NewRegistry()
	if got := r.Markdown(); got != "## Connectors\n\nNo connector is registered.\n\n## Formats\n\nNo format is registered.\n" {
		t.Errorf("empty registry: %q", got)
	}
	r.Register(sourceOnly{connector.Spec{
		Name: "db", Kind: connector.SourceKind, Description: "Reads a table\nof a database.",
		Formats: []string{"txt"},
		Options: []connector.Option{
			{Key: "url", Type: connector.String, Required: true, Description: "The database, as a|b."},
			{Key: "password", Type: connector.String, Secret: true, Description: "The password."},
			{Key: "mode", Type: connector.Enum, Values: []string{"snapshot", "stream"}, Default: "stream", Description: "How to read.",
				FallbackKeys: []string{"scan.mode"}},
		},
	}})
	r.Register(formatFactory{connector.Spec{Name: "txt", Kind: connector.FormatKind, Description: "Text."}})
	got := r.Markdown()
	want := "## Connectors\n\n" +
		"### db\n\n" +
		"`'connector' = 'db'` — source. Reads a table of a database.\n\n" +
		"Formats: `txt`. The option `format` (required) chooses one; the options of the format are written with its name as a prefix (`txt.<option>`).\n\n" +
		"| Option | Type | Default | Required | Secret | Description |\n" +
		"|---|---|---|---|---|---|\n" +
		"| `url` | string |  | yes |  | The database, as a\\|b. |\n" +
		"| `password` | string |  |  | yes | The password. |\n" +
		"| `mode` | enum: `snapshot`, `stream` | `stream` |  |  | How to read. Also accepted as `scan.mode`. |\n\n" +
		"## Formats\n\n" +
		"### txt\n\n" +
		"`'format' = 'txt'`. Text.\n\n" +
		"No options.\n"
	if got != want {
		t.Errorf("Markdown() =\n%s\nwant\n%s", got, want)
		gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Errorf("first difference, line %d:\n got %q\nwant %q", i+1, gl[i], wl[i])
				break
			}
		}
	}
}
