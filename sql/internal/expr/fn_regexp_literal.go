package expr

import (
	"regexp"
	"regexp/syntax"
	"strings"
)

// matcher is a compiled pattern with the longest literal every match of
// it contains, if any: a string without that literal cannot match, which
// strings.Contains tells far faster than the regular expression engine
// (URLs searched for '(&|^)channel_id=([^&]*)' mostly lack
// "channel_id=").
type matcher struct {
	*regexp.Regexp
	need string
}

// newMatcher returns the matcher of re, compiled from pattern p.
func newMatcher(re *regexp.Regexp, p string) *matcher {
	m := &matcher{Regexp: re}
	if ast, err := syntax.Parse(p, syntax.Perl); err == nil {
		m.need = requiredLiteral(ast.Simplify())
	}
	return m
}

// mayMatch reports whether s contains the required literal.
func (m *matcher) mayMatch(s string) bool { return m.need == "" || strings.Contains(s, m.need) }

// MatchString is the Regexp's, after the literal test.
func (m *matcher) MatchString(s string) bool { return m.mayMatch(s) && m.Regexp.MatchString(s) }

// FindStringIndex is the Regexp's, after the literal test.
func (m *matcher) FindStringIndex(s string) []int {
	if !m.mayMatch(s) {
		return nil
	}
	return m.Regexp.FindStringIndex(s)
}

// FindStringSubmatchIndex is the Regexp's, after the literal test.
func (m *matcher) FindStringSubmatchIndex(s string) []int {
	if !m.mayMatch(s) {
		return nil
	}
	return m.Regexp.FindStringSubmatchIndex(s)
}

// ReplaceAllLiteralString is the Regexp's; a string without the literal
// has nothing to replace.
func (m *matcher) ReplaceAllLiteralString(s, with string) string {
	if !m.mayMatch(s) {
		return s
	}
	return m.Regexp.ReplaceAllLiteralString(s, with)
}

// requiredLiteral returns the longest literal that every match of re
// contains: a case-sensitive literal of re itself, of a capture, or of a
// concatenation's parts (repetitions at least once included). Alternations
// and everything optional require nothing.
func requiredLiteral(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return ""
		}
		return string(re.Rune)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best := ""
		for _, sub := range re.Sub {
			if l := requiredLiteral(sub); len(l) > len(best) {
				best = l
			}
		}
		return best
	}
	return ""
}
