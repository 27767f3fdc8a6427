package main

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// sqlStatement is one statement of the client's input: its text up to and
// without the ";" that ends it, and the line and column (from 1, in runes)
// where its text starts in the input.
type sqlStatement struct {
	Text      string
	Line, Col int
}

// Statement sets span several ";": BEGIN STATEMENT SET; ... END; and
// [EXPLAIN] EXECUTE STATEMENT SET BEGIN ...; END;, whose END closes them.
var (
	setBegin = regexp.MustCompile(`(?is)^(BEGIN\s+STATEMENT\s+SET|(EXPLAIN\s+(PLAN\s+FOR\s+)?)?(EXECUTE\s+)?STATEMENT\s+SET\s+BEGIN\b.*)$`)
	setEnd   = regexp.MustCompile(`(?is)(^|\s)END$`)
)

// splitStatements cuts src into the statements that end with a ";"
// outside quotes ('...', "...", `...`) and comments (-- to the end of the
// line, /* ... */), and returns them with the rest of src, a statement
// not ended yet (or only spaces and comments), whose Text is all of src
// after the last ";" and Line and Col where that starts. A statement set
// is one statement from its BEGIN to its END.
func splitStatements(src string) (stmts []sqlStatement, rest sqlStatement) {
	line, col := 1, 1
	start := -1 // offset of the current statement's text, -1 before it
	var sLine, sCol int
	inSet := false
	advance := func(r rune) {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	mark := func(i int) {
		if start < 0 {
			start, sLine, sCol = i, line, col
		}
	}
	restAt, restLine, restCol := 0, 1, 1 // where the unfinished statement starts
	restOf := func() sqlStatement { return sqlStatement{Text: src[restAt:], Line: restLine, Col: restCol} }
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRuneInString(src[i:])
		switch {
		case r == '-' && strings.HasPrefix(src[i:], "--"):
			for i < len(src) && src[i] != '\n' {
				i++
				col++
			}
			continue
		case r == '/' && strings.HasPrefix(src[i:], "/*") && !strings.HasPrefix(src[i:], "/*+"):
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return stmts, restOf()
			}
			for _, c := range src[i : i+2+j+2] {
				advance(c)
			}
			i += 2 + j + 2
			continue
		case r == '\'' || r == '"' || r == '`':
			mark(i)
			j := i + 1
			closed := false
			for j < len(src) {
				if src[j] == byte(r) {
					if j+1 < len(src) && src[j+1] == byte(r) {
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				j++
			}
			for _, c := range src[i:j] {
				advance(c)
			}
			i = j
			if !closed {
				return stmts, restOf()
			}
			continue
		case r == ';':
			if start >= 0 {
				text := strings.TrimSpace(src[start:i])
				switch {
				case inSet && setEnd.MatchString(text):
					inSet = false
				case !inSet && setBegin.MatchString(text) && !setEnd.MatchString(text):
					inSet = true
				}
				if !inSet {
					stmts = append(stmts, sqlStatement{Text: text, Line: sLine, Col: sCol})
					start = -1
				}
			}
			advance(r)
			i += size
			if start < 0 {
				restAt, restLine, restCol = i, line, col
			}
			continue
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
		default:
			mark(i)
		}
		advance(r)
		i += size
	}
	return stmts, restOf()
}

// blankSQL says whether src holds nothing but spaces and comments.
func blankSQL(src string) bool {
	stmts, rest := splitStatements(src + "\n;")
	return len(stmts) == 0 && strings.TrimSpace(rest.Text) == ""
}
