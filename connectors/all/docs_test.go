package all_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/eddystream/eddy/connector"
	_ "github.com/eddystream/eddy/connectors/all"
)

var update = flag.Bool("update", false, "rewrite the generated reference in docs/connectors.md")

const (
	docPath   = "../../docs/connectors.md"
	beginMark = "<!-- BEGIN GENERATED REFERENCE: go test ./connectors/all -update -->\n"
	endMark   = "<!-- END GENERATED REFERENCE -->\n"
)

// TestReferenceDocsAreUpToDate checks that the reference part of
// docs/connectors.md is what connector.Default renders with every built-in
// connector and format; with -update (or EDDY_UPDATE_DOCS=1) it rewrites it.
func TestReferenceDocsAreUpToDate(t *testing.T) {
	b, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	begin, end := strings.Index(doc, beginMark), strings.Index(doc, endMark)
	if begin < 0 || end < begin {
		t.Fatalf("%s lacks the markers of its generated part:\n%s%s", docPath, beginMark, endMark)
	}
	want := beginMark + "\n" + connector.Default.Markdown() + "\n" + endMark
	got := doc[begin : end+len(endMark)]
	if got == want {
		return
	}
	if *update || os.Getenv("EDDY_UPDATE_DOCS") != "" {
		if err := os.WriteFile(docPath, []byte(doc[:begin]+want+doc[end+len(endMark):]), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the reference in %s", docPath)
		return
	}
	t.Fatalf("the reference in %s is out of date; run: go test ./connectors/all -update", docPath)
}

// TestEveryBuiltInIsRegistered checks what connectors/all registers.
func TestEveryBuiltInIsRegistered(t *testing.T) {
	for _, name := range []string{"filesystem", "datagen", "nexmark", "print", "blackhole"} {
		if _, err := connector.Default.Connector(name); err != nil {
			t.Error(err)
		}
	}
	for _, name := range []string{"json", "csv", "debezium-json"} {
		if _, err := connector.Default.Format(name); err != nil {
			t.Error(err)
		}
	}
}
