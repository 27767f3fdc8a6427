package expr

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/eddystream/eddy/sql/types"
)

// LIKE, ILIKE and SIMILAR TO. A constant pattern compiles once, when the
// expression does, into a matcher that needs no regular expression for the
// common shapes ('abc', 'abc%', '%abc', '%abc%') and no allocation.
func init() {
	for _, name := range []string{"LIKE", "ILIKE"} {
		fold := name == "ILIKE"
		register(&Builtin{
			Name: name,
			Resolve: resolver(name, "(string, pattern [, escape character])", fixed(types.Boolean()),
				sigOf(famStr, famStr), sigOf(famStr, famStr, famStr)),
			Func: &Func{Infix: true, Compile: func(c *Call, args []*Eval) (*Eval, error) { return compileLike(c, args, fold) }},
			Check: func(c *Call) error {
				p, pnull, pok := constString(c, 1)
				esc, enull, eok := "", false, true
				if len(c.Args) == 3 {
					esc, enull, eok = constString(c, 2)
				}
				if !pok || !eok || pnull || enull {
					return nil
				}
				_, err := parseLike(p, esc, fold)
				return err
			},
			Doc: "string " + name + " pattern [ESCAPE char]: whether string matches pattern, where % is any run of characters and _ any one character" +
				map[bool]string{true: ", ignoring case", false: ""}[fold] + "; without ESCAPE no character escapes; NULL if either is NULL",
		})
	}
	register(&Builtin{
		Name: "SIMILAR TO",
		Resolve: resolver("SIMILAR TO", "(string, pattern [, escape character])", fixed(types.Boolean()),
			sigOf(famStr, famStr), sigOf(famStr, famStr, famStr)),
		Func: &Func{Infix: true, Compile: compileSimilar},
		Check: func(c *Call) error {
			p, pnull, pok := constString(c, 1)
			esc, enull, eok := "", false, true
			if len(c.Args) == 3 {
				esc, enull, eok = constString(c, 2)
			}
			if !pok || !eok || pnull || enull {
				return nil
			}
			_, err := similarRegexp(p, esc)
			return err
		},
		Doc: "string SIMILAR TO pattern [ESCAPE char]: whether all of string matches the SQL regular expression pattern (% and _ as in LIKE, with | * + ? {m,n} ( ) and [...]); NULL if either is NULL",
	})
}

// likeMatcher matches a LIKE pattern.
type likeMatcher struct {
	fold bool
	// kind of pattern: exact, prefix, suffix, contains or general.
	kind int
	lit  string
	// parts is the general pattern split at %: each part a sequence of
	// literal runes and '_' wildcards (wild[i] marks a wildcard).
	parts []likePart
	// anchoredStart/End: the pattern does not start/end with %.
	anchoredStart, anchoredEnd bool
}

type likePart struct {
	runes []rune
	wild  []bool
	plain string // the literal text when the part has no wildcard
}

const (
	likeExact = iota
	likePrefix
	likeSuffix
	likeContains
	likeGeneral
)

// parseLike compiles a LIKE pattern with an optional escape character.
func parseLike(p, esc string, fold bool) (*likeMatcher, error) {
	var escape rune = -1
	if esc != "" || len(esc) > 0 {
		if utf8.RuneCountInString(esc) != 1 {
			return nil, fmt.Errorf("LIKE: the escape %q is not one character", esc)
		}
		escape, _ = utf8.DecodeRuneInString(esc)
	}
	if fold {
		p = strings.ToLower(p)
	}
	m := &likeMatcher{fold: fold}
	var parts []likePart
	cur := likePart{}
	pr := []rune(p)
	for i := 0; i < len(pr); i++ {
		r := pr[i]
		switch {
		case r == escape:
			if i+1 >= len(pr) {
				return nil, fmt.Errorf("LIKE: the pattern %q ends with the escape character", p)
			}
			next := pr[i+1]
			if next != '%' && next != '_' && next != escape {
				return nil, fmt.Errorf("LIKE: invalid escape sequence %q at %d of %q: the escape character may only precede %%, _ or itself", string([]rune{r, next}), i+1, p)
			}
			cur.runes = append(cur.runes, next)
			cur.wild = append(cur.wild, false)
			i++
		case r == '%':
			parts = append(parts, cur)
			cur = likePart{}
		case r == '_':
			cur.runes = append(cur.runes, '_')
			cur.wild = append(cur.wild, true)
		default:
			cur.runes = append(cur.runes, r)
			cur.wild = append(cur.wild, false)
		}
	}
	parts = append(parts, cur)
	hasWild := false
	for i := range parts {
		w := false
		for _, x := range parts[i].wild {
			w = w || x
		}
		if !w {
			parts[i].plain = string(parts[i].runes)
		}
		hasWild = hasWild || w
	}
	m.anchoredStart, m.anchoredEnd = true, true
	// Collapse empty parts in the middle (%% is %).
	first, last := parts[0], parts[len(parts)-1]
	var mid []likePart
	for _, x := range parts[1:max(len(parts)-1, 1)] {
		if len(x.runes) > 0 {
			mid = append(mid, x)
		}
	}
	switch {
	case hasWild:
	case len(parts) == 1:
		m.kind, m.lit = likeExact, first.plain
		return m, nil
	case len(parts) == 2 && last.plain == "":
		m.kind, m.lit = likePrefix, first.plain
		return m, nil
	case len(parts) == 2 && first.plain == "":
		m.kind, m.lit = likeSuffix, last.plain
		return m, nil
	case len(mid) <= 1 && first.plain == "" && last.plain == "":
		m.kind = likeContains
		if len(mid) == 1 {
			m.lit = mid[0].plain
		}
		return m, nil
	}
	m.kind = likeGeneral
	if len(parts) == 1 {
		m.parts = parts
		return m, nil
	}
	m.parts = append(append([]likePart{first}, mid...), last)
	m.anchoredEnd = true
	return m, nil
}

// match reports whether s matches.
func (m *likeMatcher) match(s string) bool {
	if m.fold {
		s = strings.ToLower(s)
	}
	switch m.kind {
	case likeExact:
		return s == m.lit
	case likePrefix:
		return strings.HasPrefix(s, m.lit)
	case likeSuffix:
		return strings.HasSuffix(s, m.lit)
	case likeContains:
		return strings.Contains(s, m.lit)
	}
	if len(m.parts) == 1 {
		n, ok := m.parts[0].matchAt(s)
		return ok && n == len(s)
	}
	// first part anchored at the start, the last at the end, the middle
	// ones leftmost in between.
	n, ok := m.parts[0].matchAt(s)
	if !ok {
		return false
	}
	s = s[n:]
	lastPart := m.parts[len(m.parts)-1]
	for _, p := range m.parts[1 : len(m.parts)-1] {
		i, end := p.find(s)
		if i < 0 {
			return false
		}
		s = s[end:]
	}
	// the last part must match a suffix of s.
	k := len(lastPart.runes)
	if utf8.RuneCountInString(s) < k {
		return false
	}
	off := len(s)
	for j := 0; j < k; j++ {
		_, size := utf8.DecodeLastRuneInString(s[:off])
		off -= size
	}
	n, ok = lastPart.matchAt(s[off:])
	return ok && n == len(s)-off
}

// matchAt matches the part at the start of s, returning the bytes used.
func (p *likePart) matchAt(s string) (int, bool) {
	if p.plain != "" || len(p.runes) == 0 {
		return len(p.plain), strings.HasPrefix(s, p.plain)
	}
	off := 0
	for i, r := range p.runes {
		if off >= len(s) {
			return 0, false
		}
		c, size := utf8.DecodeRuneInString(s[off:])
		if p.wild[i] {
			if isLineTerminator(c) {
				return 0, false
			}
		} else if c != r {
			return 0, false
		}
		off += size
	}
	return off, true
}

// find returns the leftmost match of the part in s: its start and end.
func (p *likePart) find(s string) (int, int) {
	if p.plain != "" {
		i := strings.Index(s, p.plain)
		if i < 0 {
			return -1, -1
		}
		return i, i + len(p.plain)
	}
	for i := 0; i <= len(s); {
		if n, ok := p.matchAt(s[i:]); ok {
			return i, i + n
		}
		if i == len(s) {
			break
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return -1, -1
}

// isLineTerminator is Java's: what . and _ do not match.
func isLineTerminator(r rune) bool {
	return r == '\n' || r == '\r' || r == '\u0085' || r == '\u2028' || r == '\u2029'
}

func compileLike(c *Call, args []*Eval, fold bool) (*Eval, error) {
	x, pat := args[0].Str, args[1].Str
	escEval := func(types.Row) (string, bool) { return "", false }
	if len(args) == 3 {
		escEval = args[2].Str
	}
	p, pnull, pconst := constStringEval(args[1])
	esc, enull, econst := "", false, true
	if len(args) == 3 {
		esc, enull, econst = constStringEval(args[2])
	}
	if pconst && econst {
		if pnull || enull {
			return constEval(c.T, nil)
		}
		m, err := parseLike(p, esc, fold)
		if err != nil {
			return nil, err
		}
		return &Eval{Bool: func(r types.Row) (bool, bool) {
			s, null := x(r)
			if null {
				return false, true
			}
			return m.match(s), false
		}}, nil
	}
	cache := newPatternCache(func(key string) (*likeMatcher, error) {
		p, e, _ := strings.Cut(key, "\x00")
		return parseLike(p, e, fold)
	})
	return &Eval{Bool: func(r types.Row) (bool, bool) {
		s, n1 := x(r)
		p, n2 := pat(r)
		e, n3 := escEval(r)
		if n1 || n2 || n3 {
			return false, true
		}
		m, err := cache.get(p + "\x00" + e)
		if err != nil {
			failErr(c, err)
		}
		return m.match(s), false
	}}, nil
}

// patternCache keeps compiled patterns of non-constant pattern arguments,
// up to a bound.
type patternCache[T any] struct {
	m       map[string]T
	compile func(string) (T, error)
}

func newPatternCache[T any](compile func(string) (T, error)) *patternCache[T] {
	return &patternCache[T]{m: map[string]T{}, compile: compile}
}

func (pc *patternCache[T]) get(key string) (T, error) {
	if v, ok := pc.m[key]; ok {
		return v, nil
	}
	// The key may be in a row's memory, which is reused for later rows:
	// what is kept, and what compile keeps of it, must be a copy.
	key = strings.Clone(key)
	v, err := pc.compile(key)
	if err != nil {
		return v, err
	}
	if len(pc.m) >= 256 {
		clear(pc.m)
	}
	pc.m[key] = v
	return v, nil
}

// similarRegexp translates a SIMILAR TO pattern into a regular expression
// that must match all of the string.
func similarRegexp(p, esc string) (*regexp.Regexp, error) {
	var escape rune = -1
	if esc != "" {
		if utf8.RuneCountInString(esc) != 1 {
			return nil, fmt.Errorf("SIMILAR TO: the escape %q is not one character", esc)
		}
		escape, _ = utf8.DecodeRuneInString(esc)
	}
	var b strings.Builder
	b.WriteString(`^(?:`)
	pr := []rune(p)
	inClass := false
	for i := 0; i < len(pr); i++ {
		r := pr[i]
		switch {
		case r == escape:
			if i+1 >= len(pr) {
				return nil, fmt.Errorf("SIMILAR TO: the pattern %q ends with the escape character", p)
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(pr[i])))
		case inClass:
			if r == ']' {
				inClass = false
			}
			if r == '\\' {
				b.WriteString(`\\`)
			} else {
				b.WriteRune(r)
			}
		case r == '[':
			inClass = true
			b.WriteRune(r)
		case r == '%':
			b.WriteString(`(?s:.*)`)
		case r == '_':
			b.WriteString(`.`)
		case strings.ContainsRune("|*+?{}()", r):
			b.WriteRune(r)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`)$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("SIMILAR TO: bad pattern %q: %w", p, err)
	}
	return re, nil
}

func compileSimilar(c *Call, args []*Eval) (*Eval, error) {
	x, pat := args[0].Str, args[1].Str
	escEval := func(types.Row) (string, bool) { return "", false }
	if len(args) == 3 {
		escEval = args[2].Str
	}
	p, pnull, pconst := constStringEval(args[1])
	esc, enull, econst := "", false, true
	if len(args) == 3 {
		esc, enull, econst = constStringEval(args[2])
	}
	if pconst && econst {
		if pnull || enull {
			return constEval(c.T, nil)
		}
		re, err := similarRegexp(p, esc)
		if err != nil {
			return nil, err
		}
		return &Eval{Bool: func(r types.Row) (bool, bool) {
			s, null := x(r)
			return !null && re.MatchString(s), null
		}}, nil
	}
	cache := newPatternCache(func(key string) (*regexp.Regexp, error) {
		p, e, _ := strings.Cut(key, "\x00")
		return similarRegexp(p, e)
	})
	return &Eval{Bool: func(r types.Row) (bool, bool) {
		s, n1 := x(r)
		p, n2 := pat(r)
		e, n3 := escEval(r)
		if n1 || n2 || n3 {
			return false, true
		}
		re, err := cache.get(p + "\x00" + e)
		if err != nil {
			failErr(c, err)
		}
		return re.MatchString(s), false
	}}, nil
}
