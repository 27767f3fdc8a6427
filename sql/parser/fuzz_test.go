package parser

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldenInputs returns the inputs of every case of the golden files.
func goldenInputs(t testing.TB) []string {
	var inputs []string
	for _, path := range goldenFiles(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			cmd := strings.Fields(lines[i])
			if len(cmd) == 0 || (cmd[0] != "parse" && cmd[0] != "expr" && cmd[0] != "type") {
				continue
			}
			var in []string
			for i++; i < len(lines) && lines[i] != "----"; i++ {
				in = append(in, lines[i])
			}
			inputs = append(inputs, strings.Join(in, "\n"))
		}
	}
	return inputs
}

// FuzzParse checks that no input makes the parser panic, that every error
// is an *Error at a position inside the input naming what was expected, and
// that whatever parses (as a script, an expression or a type) round-trips
// through its canonical form. It is seeded with the inputs of the golden
// tests, the benchmark script and, when EDDY_NEXMARK_SQL_DIR is set, the
// Nexmark files. Run it with
//
//	go test -run XXX -fuzz FuzzParse -fuzztime 300s ./sql/parser/
func FuzzParse(f *testing.F) {
	for _, s := range goldenInputs(f) {
		f.Add(s)
	}
	f.Add(benchScript)
	if dir := os.Getenv("EDDY_NEXMARK_SQL_DIR"); dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "*.sql"))
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil {
				f.Add(string(b))
			}
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		stmts, err := Parse(src)
		if err != nil {
			checkError(t, src, err)
		} else if err := roundTrip(stmts); err != nil {
			t.Fatalf("script %q: %v", src, err)
		}
		if e, err := ParseExpr(src); err != nil {
			checkError(t, src, err)
		} else {
			text := Format(e)
			again, err := ParseExpr(text)
			if err != nil {
				t.Fatalf("expression %q: canonical form %q does not parse: %v", src, text, err)
			}
			if !sameTree(e, again) {
				t.Fatalf("expression %q: canonical form %q parses to another tree:\n%s\n%s", src, text, Dump(e), Dump(again))
			}
		}
		if typ, err := ParseType(src); err != nil {
			checkError(t, src, err)
		} else {
			text := Format(typ)
			again, err := ParseType(text)
			if err != nil || !sameTree(typ, again) {
				t.Fatalf("type %q: canonical form %q does not parse back to the same type (%v)", src, text, err)
			}
		}
	})
}

// checkError checks that err is an *Error inside src that names what was
// expected, and that it prints.
func checkError(t *testing.T, src string, err error) {
	t.Helper()
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("%q: error is a %T: %v", src, err, err)
	}
	lines := strings.Count(src, "\n") + 1
	if pe.Line < 1 || pe.Line > lines || pe.Col < 1 {
		t.Fatalf("%q: error at line %d, column %d, outside the input: %v", src, pe.Line, pe.Col, err)
	}
	if len(pe.Expected) == 0 {
		t.Fatalf("%q: error names nothing expected: %v", src, err)
	}
	_ = pe.Error()
}
