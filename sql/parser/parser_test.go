package parser

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestDataDriven runs the golden files in testdata. Rewrite the expected
// outputs with
//
//	go test ./sql/parser -run TestDataDriven -rewrite
//
// and read the diff. Commands:
//
//	parse [dump]   parse the input as a script; print its canonical form
//	               (and with dump the tree with positions), or the error
//	expr           parse an expression; print its canonical form and its
//	               structure as nested operators
//	type [dump]    parse a data type; print its canonical form
//
// Every input that parses is also checked to round-trip: its canonical
// form parses back to the same tree.
func TestDataDriven(t *testing.T) {
	for _, path := range goldenFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
				return runCommand(t, td)
			})
		})
	}
}

// goldenFiles lists the golden files: the files of testdata, not its
// subdirectories (testdata/fuzz holds the fuzzer's corpus).
func goldenFiles(t testing.TB) []string {
	paths, err := filepath.Glob("testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			files = append(files, p)
		}
	}
	return files
}

func runCommand(t *testing.T, td *datadriven.TestData) string {
	switch td.Cmd {
	case "parse":
		stmts, err := Parse(td.Input)
		if err != nil {
			return errorText(t, err)
		}
		if err := roundTrip(stmts); err != nil {
			t.Errorf("%s: %v", td.Pos, err)
		}
		out := FormatScript(stmts)
		if td.HasArg("dump") {
			for _, s := range stmts {
				out += Dump(s) + "\n"
			}
		}
		return out
	case "expr":
		e, err := ParseExpr(td.Input)
		if err != nil {
			return errorText(t, err)
		}
		again, err := ParseExpr(Format(e))
		if err != nil {
			t.Errorf("%s: canonical form %q does not parse: %v", td.Pos, Format(e), err)
		} else if !sameTree(e, again) {
			t.Errorf("%s: canonical form %q parses to another tree:\n%s\n%s", td.Pos, Format(e), Dump(e), Dump(again))
		}
		return Format(e) + "\n" + structure(e) + "\n"
	case "type":
		typ, err := ParseType(td.Input)
		if err != nil {
			return errorText(t, err)
		}
		again, err := ParseType(Format(typ))
		if err != nil || !sameTree(typ, again) {
			t.Errorf("%s: canonical form %q does not parse back to the same type (%v)", td.Pos, Format(typ), err)
		}
		out := Format(typ) + "\n"
		if td.HasArg("dump") {
			out += Dump(typ) + "\n"
		}
		return out
	}
	t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
	return ""
}

// errorText prints a parse error, checking that it is an *Error that names
// what was expected.
func errorText(t *testing.T, err error) string {
	var pe *Error
	if !errors.As(err, &pe) {
		t.Errorf("error is a %T, not an *Error: %v", err, err)
	} else if len(pe.Expected) == 0 {
		t.Errorf("error names nothing expected: %v", err)
	}
	return "error: " + err.Error() + "\n"
}

// structure prints an expression with every operator application in
// parentheses, prefix style: (AND (= a 1) (NOT b)). Other nodes print in
// canonical form.
func structure(e Expr) string {
	switch e := e.(type) {
	case *Binary:
		return fmt.Sprintf("(%s %s %s)", e.Op, structure(e.L), structure(e.R))
	case *Unary:
		return fmt.Sprintf("(%s %s)", e.Op, structure(e.X))
	case *IsExpr:
		return fmt.Sprintf("(IS %s%s %s)", not(e.Not), e.What, structure(e.X))
	case *DistinctFrom:
		return fmt.Sprintf("(IS %sDISTINCT FROM %s %s)", not(e.Not), structure(e.L), structure(e.R))
	case *Between:
		sym := ""
		if e.Symmetric {
			sym = " SYMMETRIC"
		}
		return fmt.Sprintf("(%sBETWEEN%s %s %s %s)", not(e.Not), sym, structure(e.X), structure(e.Low), structure(e.High))
	case *InList:
		parts := make([]string, len(e.List))
		for i, x := range e.List {
			parts[i] = structure(x)
		}
		return fmt.Sprintf("(%sIN %s [%s])", not(e.Not), structure(e.X), strings.Join(parts, " "))
	case *InQuery:
		return fmt.Sprintf("(%sIN %s (%s))", not(e.Not), structure(e.X), Format(e.Query))
	case *Like:
		s := fmt.Sprintf("(%s%s %s %s", not(e.Not), e.Op, structure(e.X), structure(e.Pattern))
		if e.Escape != nil {
			s += " ESCAPE " + structure(e.Escape)
		}
		return s + ")"
	case *Index:
		return fmt.Sprintf("([] %s %s)", structure(e.X), structure(e.Index))
	case *FieldAccess:
		return fmt.Sprintf("(. %s %s)", structure(e.X), QuoteIdent(e.Field.Name))
	}
	return Format(e)
}

func not(b bool) string {
	if b {
		return "NOT "
	}
	return ""
}
