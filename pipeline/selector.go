package pipeline

import (
	"fmt"
	"regexp"
	"strings"
)

// Selector is a list of table patterns as Flink CDC writes them in
// 'tables', 'source-table' and 'tables.exclude': comma-separated, each a
// dot-separated name whose parts are regular expressions matched whole —
// "app_db.\.*" is every table of app_db, since '\.' stands for the regular
// expression '.', the unescaped dot separating the parts.
type Selector struct {
	text     string
	patterns [][]*regexp.Regexp // each 1 to 3 parts: [namespace.][schema.]table
}

// ParseSelector reads a list of table patterns.
func ParseSelector(s string) (*Selector, error) {
	sel := &Selector{text: s}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		var parts []string
		var cur strings.Builder
		for i := 0; i < len(p); i++ {
			switch {
			case p[i] == '\\' && i+1 < len(p) && p[i+1] == '.':
				cur.WriteByte('.')
				i++
			case p[i] == '.':
				parts = append(parts, cur.String())
				cur.Reset()
			default:
				cur.WriteByte(p[i])
			}
		}
		parts = append(parts, cur.String())
		if len(parts) > 3 {
			return nil, fmt.Errorf("pattern %q has %d dot-separated parts; write [namespace.][schema.]table, with '\\.' for a regular expression's '.'", p, len(parts))
		}
		var res []*regexp.Regexp
		for _, part := range parts {
			if part == "" {
				return nil, fmt.Errorf("pattern %q has an empty part", p)
			}
			re, err := regexp.Compile("^(?:" + part + ")$")
			if err != nil {
				return nil, fmt.Errorf("pattern %q: part %q: %w (an unescaped '.' separates the parts; write '\\.' for a regular expression's '.')", p, part, err)
			}
			res = append(res, re)
		}
		sel.patterns = append(sel.patterns, res)
	}
	if len(sel.patterns) == 0 {
		return nil, fmt.Errorf("no table pattern in %q", s)
	}
	return sel, nil
}

// String returns the selector as written.
func (s *Selector) String() string { return s.text }

// Matches reports whether a pattern of the list matches t. A pattern of
// two parts matches schema and table, one of one part the table alone.
func (s *Selector) Matches(t TableID) bool {
	for _, p := range s.patterns {
		var parts []string
		switch len(p) {
		case 1:
			parts = []string{t.Table}
		case 2:
			parts = []string{t.Schema, t.Table}
		default:
			parts = []string{t.Namespace, t.Schema, t.Table}
		}
		ok := true
		for i, re := range p {
			if !re.MatchString(parts[i]) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// MatchesSchema returns, for patterns with a schema part, whether the schema
// part of one of them can match schema: for sources that list the tables
// of the schemas they may capture.
func (s *Selector) MatchesSchema(schema string) bool {
	for _, p := range s.patterns {
		if len(p) == 1 || p[len(p)-2].MatchString(schema) {
			return true
		}
	}
	return false
}
