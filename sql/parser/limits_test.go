package parser

import (
	"errors"
	"strings"
	"testing"
)

// TestDeepNesting checks that nesting beyond maxDepth is an error, not a
// stack overflow, for each kind of nesting.
func TestDeepNesting(t *testing.T) {
	for name, src := range map[string]string{
		"parens":     "SELECT " + strings.Repeat("(", 10000) + "1" + strings.Repeat(")", 10000),
		"unary":      "SELECT " + strings.Repeat("- ", 10000) + "1",
		"not":        "SELECT " + strings.Repeat("NOT ", 10000) + "TRUE",
		"subqueries": strings.Repeat("SELECT * FROM (", 5000) + "SELECT 1" + strings.Repeat(")", 5000),
		"tables":     "SELECT * FROM " + strings.Repeat("(", 10000) + "t" + strings.Repeat(")", 10000),
		"types":      "SELECT CAST(x AS " + strings.Repeat("ARRAY<", 10000) + "INT" + strings.Repeat(">", 10000) + ")",
		"calls":      "SELECT " + strings.Repeat("f(", 10000) + "1" + strings.Repeat(")", 10000),
	} {
		_, err := Parse(src)
		var pe *Error
		if !errors.As(err, &pe) || pe.Msg != "too deeply nested" {
			t.Errorf("%s: got %.300v, want a nesting error", name, err)
		}
	}
	// Nesting within the limit parses.
	src := "SELECT " + strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100)
	if _, err := Parse(src); err != nil {
		t.Errorf("100 parentheses: %v", err)
	}
}

// TestNoExponentialBacktracking parses inputs that an exponential parser
// would not finish: the forms that are tried one way then another
// (SUBSTRING, FLOOR, parenthesized FROM items) nested 40 deep.
func TestNoExponentialBacktracking(t *testing.T) {
	for name, src := range map[string]string{
		"substring": "SELECT " + strings.Repeat("SUBSTRING(", 40) + "x" + strings.Repeat(", 1)", 40),
		"floor":     "SELECT " + strings.Repeat("FLOOR(", 40) + "x" + strings.Repeat(")", 40),
		"from":      "SELECT * FROM " + strings.Repeat("((SELECT * FROM ", 40) + "t" + strings.Repeat(")))", 40) + " x",
		"joins":     "SELECT * FROM " + strings.Repeat("((", 40) + "a JOIN b ON TRUE" + strings.Repeat(") JOIN c ON TRUE)", 40),
	} {
		// Errors or not, the point is to finish.
		_, _ = Parse(src)
		t.Logf("%s: done", name)
	}
}
