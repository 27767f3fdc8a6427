package expr

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// matcher is a compiled pattern with the longest literal every match of
// it contains, if any: a string without that literal cannot match, which
// strings.Contains tells far faster than the regular expression engine
// (URLs searched for '(&|^)channel_id=([^&]*)' mostly lack
// "channel_id=").
type matcher struct {
	*regexp.Regexp
	need string
	// Where the pattern is a concatenation whose parts before a literal
	// (anchor) match at most before bytes, a match starts at most before
	// bytes ahead of the anchor's first occurrence: the search runs from
	// there, with inner, the pattern whose start-of-text assertions never
	// hold, for a window that does not start the string. inner is nil
	// without such an anchor.
	anchor string
	before int
	inner  *regexp.Regexp
	// hand, if set, finds the matches of a pattern of its shape without
	// the engine.
	hand *handMatcher
}

// newMatcher returns the matcher of re, compiled from pattern p.
func newMatcher(re *regexp.Regexp, p string) *matcher {
	m := &matcher{Regexp: re}
	if ast, err := syntax.Parse(p, syntax.Perl); err == nil {
		ast = ast.Simplify()
		m.need = requiredLiteral(ast)
		m.anchorWindow(ast)
		m.hand = newHandMatcher(ast, re.NumSubexp())
	}
	return m
}

// anchorWindow sets the anchor of a pattern that is a concatenation with
// a case-sensitive literal among its parts (in a capture or not), the
// parts before it of bounded length, and no assertion that looks at the
// text before a position (^ and $ in multi-line mode, \b, \B).
func (m *matcher) anchorWindow(ast *syntax.Regexp) {
	if ast.Op != syntax.OpConcat || looksBehind(ast) {
		return
	}
	before := 0
	for _, sub := range ast.Sub {
		lit := sub
		for lit.Op == syntax.OpCapture {
			lit = lit.Sub[0]
		}
		if lit.Op == syntax.OpLiteral && lit.Flags&syntax.FoldCase == 0 {
			inner, err := regexp.Compile(withoutBeginText(ast).String())
			if err != nil {
				return
			}
			m.anchor, m.before, m.inner = string(lit.Rune), before, inner
			return
		}
		n := maxLen(sub)
		if n < 0 {
			return
		}
		before += n
	}
}

// looksBehind tells whether a pattern has an assertion that depends on the
// text before a position other than its start.
func looksBehind(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, sub := range re.Sub {
		if looksBehind(sub) {
			return true
		}
	}
	return false
}

// maxLen returns the most bytes a pattern matches, -1 if unbounded.
func maxLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginText, syntax.OpEndText, syntax.OpNoMatch:
		return 0
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return len(re.Rune) * utf8.UTFMax
		}
		return len(string(re.Rune))
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax
	case syntax.OpCapture:
		return maxLen(re.Sub[0])
	case syntax.OpQuest:
		return maxLen(re.Sub[0])
	case syntax.OpRepeat:
		if re.Max < 0 {
			return -1
		}
		if n := maxLen(re.Sub[0]); n >= 0 {
			return n * re.Max
		}
	case syntax.OpConcat:
		total := 0
		for _, sub := range re.Sub {
			n := maxLen(sub)
			if n < 0 {
				return -1
			}
			total += n
		}
		return total
	case syntax.OpAlternate:
		most := 0
		for _, sub := range re.Sub {
			n := maxLen(sub)
			if n < 0 {
				return -1
			}
			most = max(most, n)
		}
		return most
	}
	return -1
}

// withoutBeginText returns a copy of re whose start-of-text assertions
// never match.
func withoutBeginText(re *syntax.Regexp) *syntax.Regexp {
	c := *re
	if c.Op == syntax.OpBeginText {
		return &syntax.Regexp{Op: syntax.OpNoMatch, Flags: c.Flags}
	}
	c.Sub = make([]*syntax.Regexp, len(re.Sub))
	for i, sub := range re.Sub {
		c.Sub[i] = withoutBeginText(sub)
	}
	return &c
}

// window returns where the search for a match of s may start (a match
// starts there or later) and the pattern to search with from there; a
// false ok means s holds no match.
func (m *matcher) window(s string) (start int, re *regexp.Regexp, ok bool) {
	if m.inner == nil {
		return 0, m.Regexp, m.mayMatch(s)
	}
	i := strings.Index(s, m.anchor)
	if i < 0 || !m.mayMatch(s) {
		return 0, nil, false
	}
	if start = i - m.before; start <= 0 {
		return 0, m.Regexp, true
	}
	return start, m.inner, true
}

// mayMatch reports whether s contains the required literal.
func (m *matcher) mayMatch(s string) bool { return m.need == "" || strings.Contains(s, m.need) }

// MatchString is the Regexp's, after the literal test, searching from
// the anchor's window.
func (m *matcher) MatchString(s string) bool {
	if m.hand != nil {
		_, _, ok := m.hand.group(s, 0)
		return ok
	}
	start, re, ok := m.window(s)
	return ok && re.MatchString(s[start:])
}

// FindStringIndex is the Regexp's, after the literal test, searching from
// the anchor's window.
func (m *matcher) FindStringIndex(s string) []int {
	if m.hand != nil {
		start, end, ok := m.hand.group(s, 0)
		if !ok {
			return nil
		}
		return []int{start, end}
	}
	start, re, ok := m.window(s)
	if !ok {
		return nil
	}
	return shift(re.FindStringIndex(s[start:]), start)
}

// FindStringSubmatchIndex is the Regexp's, after the literal test,
// searching from the anchor's window.
func (m *matcher) FindStringSubmatchIndex(s string) []int {
	if m.hand != nil {
		return m.hand.submatchIndex(s)
	}
	start, re, ok := m.window(s)
	if !ok {
		return nil
	}
	return shift(re.FindStringSubmatchIndex(s[start:]), start)
}

// group returns the bounds of group g (0 for the whole match, at most
// NumSubexp) of the first match in s; ok is false if there is no match or
// the group takes no part in it.
func (m *matcher) group(s string, g int) (start, end int, ok bool) {
	if m.hand != nil {
		return m.hand.group(s, g)
	}
	var loc []int
	if g == 0 {
		loc = m.FindStringIndex(s)
	} else {
		loc = m.FindStringSubmatchIndex(s)
	}
	if loc == nil || loc[2*g] < 0 {
		return 0, 0, false
	}
	return loc[2*g], loc[2*g+1], true
}

// shift moves the indexes of a match in s[start:] to indexes in s.
func shift(loc []int, start int) []int {
	if start == 0 {
		return loc
	}
	for i, v := range loc {
		if v >= 0 {
			loc[i] = v + start
		}
	}
	return loc
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
