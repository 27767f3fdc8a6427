package parser

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is a syntax error (or an error a later stage reports at a place in
// the SQL text, see ErrorAt). Its Error method prints
//
//	line 3, column 14: unexpected ")" (expected an expression)
//	WHERE a = )
//	          ^
//
// that is the position, the message, what was expected there, then the
// source line with a caret under the offending text.
type Error struct {
	// Line and Col locate the error, 1-based; Col counts characters.
	Line, Col int
	// Msg says what is wrong, e.g. `unexpected ")"`.
	Msg string
	// Expected lists what would have been accepted at that place, e.g.
	// "an expression", `")"`, "FROM". It may be empty for errors of
	// later stages.
	Expected []string
	// Source is the text of the source line the error is on (without its
	// line break).
	Source string
}

// Error prints the position, message, expectations, source line and caret.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "line %d, column %d: %s", e.Line, e.Col, e.Msg)
	if len(e.Expected) > 0 {
		b.WriteString(" (expected ")
		b.WriteString(joinAlternatives(e.Expected))
		b.WriteString(")")
	}
	line, col := window(e.Source, e.Col)
	b.WriteString("\n")
	b.WriteString(line)
	b.WriteString("\n")
	b.WriteString(caretLine(line, col))
	return b.String()
}

// maxShown is the most characters of a source line an error shows.
const maxShown = 120

// window cuts a long source line to about maxShown characters around
// column col, marking the cuts with "...", and returns the column in the
// cut line.
func window(line string, col int) (string, int) {
	r := []rune(line)
	if len(r) <= maxShown {
		return line, col
	}
	start := max(0, min(col-1-maxShown/2, len(r)-maxShown))
	end := min(len(r), start+maxShown)
	out := string(r[start:end])
	col -= start
	if start > 0 {
		out = "..." + out
		col += 3
	}
	if end < len(r) {
		out += "..."
	}
	return out, col
}

// Pos returns the position of the error.
func (e *Error) Pos() Pos { return Pos{Line: e.Line, Col: e.Col} }

// ErrorAt returns an *Error at pos in src with the given message and
// expectations, for stages after parsing (name resolution, type checking,
// option validation) that point at a node of the tree.
func ErrorAt(src string, pos Pos, msg string, expected ...string) *Error {
	return newError(src, pos, msg, expected)
}

func newError(src string, pos Pos, msg string, expected []string) *Error {
	return &Error{Line: pos.Line, Col: pos.Col, Msg: msg, Expected: expected, Source: sourceLine(src, pos.Line)}
}

// sourceLine returns line n (1-based) of src without its line break, or ""
// if src has fewer lines.
func sourceLine(src string, n int) string {
	for i := 1; i < n; i++ {
		j := strings.IndexByte(src, '\n')
		if j < 0 {
			return ""
		}
		src = src[j+1:]
	}
	if j := strings.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	return strings.TrimSuffix(src, "\r")
}

// caretLine returns spaces up to column col of line (tabs kept, so that the
// caret lines up in a terminal) and a caret.
func caretLine(line string, col int) string {
	var b strings.Builder
	i := 1
	for _, r := range line {
		if i >= col {
			break
		}
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
		i++
	}
	for ; i < col; i++ {
		b.WriteByte(' ')
	}
	b.WriteByte('^')
	return b.String()
}

// joinAlternatives joins "a", "b", "c" into "a, b or c".
func joinAlternatives(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// quoteString prints s as a SQL string literal.
func quoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// quoteRune prints r for an error message, escaping control characters.
func quoteRune(r rune) string {
	if r == utf8.RuneError {
		return "(invalid UTF-8)"
	}
	return strconv.QuoteRune(r)
}

// truncate shortens s to at most n runes for an error message.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "..."
		}
		i++
	}
	return s
}
