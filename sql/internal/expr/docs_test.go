package expr_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/eddystream/eddy/sql/internal/expr"
)

var updateDocs = flag.Bool("update", false, "rewrite the generated reference in docs/sql-functions.md")

const (
	docPath   = "../../../docs/sql-functions.md"
	beginMark = "<!-- BEGIN GENERATED REFERENCE: go test ./sql/internal/expr -run TestFunctionDocs -update -->\n"
	endMark   = "<!-- END GENERATED REFERENCE -->\n"
)

// TestFunctionDocs checks that the reference part of docs/sql-functions.md
// is what the registry of built-in functions renders; with -update (or
// EDDY_UPDATE_DOCS=1) it rewrites it.
func TestFunctionDocs(t *testing.T) {
	b, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	begin, end := strings.Index(doc, beginMark), strings.Index(doc, endMark)
	if begin < 0 || end < begin {
		t.Fatalf("%s lacks the markers of its generated part:\n%s%s", docPath, beginMark, endMark)
	}
	want := beginMark + "\n" + expr.Builtins().Markdown() + "\n" + endMark
	got := doc[begin : end+len(endMark)]
	if got == want {
		return
	}
	if *updateDocs || os.Getenv("EDDY_UPDATE_DOCS") != "" {
		if err := os.WriteFile(docPath, []byte(doc[:begin]+want+doc[end+len(endMark):]), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the reference in %s", docPath)
		return
	}
	t.Fatalf("the reference in %s is out of date; run: go test ./sql/internal/expr -run TestFunctionDocs -update", docPath)
}

// TestEveryBuiltInIsDocumented checks that every built-in has a Doc line
// that names it.
func TestEveryBuiltInIsDocumented(t *testing.T) {
	r := expr.Builtins()
	for _, name := range r.Names() {
		b, _ := r.Lookup(name)
		if b.Doc == "" {
			t.Errorf("%s has no Doc", name)
		}
	}
}
