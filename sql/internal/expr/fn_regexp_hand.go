package expr

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// handMatcher matches, without the regular expression engine, a pattern of
// one common shape, exactly as Go's regexp (leftmost-first) does:
//
//	pre... anchor post...
//
// a concatenation, each part possibly in captures, of
//   - pre parts that match one of a few fixed texts, tried in order: a
//     literal-free choice such as (&|^) (literals, start of text, the empty
//     string) or a small character class;
//   - anchor, the first case-sensitive literal;
//   - post parts that each repeat one character of a class (a class, ., a
//     one-character literal) with *, + or ?: all of them repeated at least
//     zero times (a repetition that cannot fail, taking the most, or the
//     least if non-greedy), or a single one after the anchor.
//
// '(&|^)channel_id=([^&]*)' is of that shape. Such a pattern's match is
// found by looking for the anchor, trying the few texts before it, and
// scanning the class after it.
type handMatcher struct {
	anchor string
	// rare is the offset of the anchor's rarest byte, which the search
	// for the anchor looks for (indexRare).
	rare int
	// combos are the choices of the pre parts in the order the engine
	// tries them; before is the longest of their texts.
	combos []handCombo
	before int
	post   []handRepeat
	// items is the number of parts (pre, the anchor, post); groupItem[g]
	// is the part that capture group g (from 1) holds.
	items     int
	groupItem []int
}

// handCombo is one choice of the pre parts: the text they match, each
// part's length in it, and the offsets in it where the start of text is
// asserted.
type handCombo struct {
	text  string
	lens  []int
	begin []int
}

// handRepeat is a post part: a class of characters repeated from min to
// max (-1: unbounded) times.
type handRepeat struct {
	ascii     [128]bool
	ranges    []rune // pairs of inclusive bounds, for runes from 0x80
	min, max  int
	nonGreedy bool
}

const (
	// handMaxCombos and handMaxClass bound the choices a pattern's pre
	// parts expand to, and the size of a class expanded into texts.
	handMaxCombos = 64
	handMaxClass  = 8
	// handMaxItems bounds the parts, so that their bounds fit an array.
	handMaxItems = 16
)

// newHandMatcher returns the hand matcher of the simplified pattern ast
// with ncap capture groups, nil if it is not of the shape.
func newHandMatcher(ast *syntax.Regexp, ncap int) *handMatcher {
	if ast.Op != syntax.OpConcat || len(ast.Sub) > handMaxItems {
		return nil
	}
	h := &handMatcher{items: len(ast.Sub), groupItem: make([]int, ncap+1)}
	for g := range h.groupItem {
		h.groupItem[g] = -1
	}
	h.combos = []handCombo{{}}
	anchorAt := -1
	for i, sub := range ast.Sub {
		part := sub
		for part.Op == syntax.OpCapture {
			if part.Cap <= 0 || part.Cap > ncap {
				return nil
			}
			h.groupItem[part.Cap] = i
			part = part.Sub[0]
		}
		switch {
		case anchorAt < 0 && part.Op == syntax.OpLiteral && part.Flags&syntax.FoldCase == 0:
			anchorAt = i
			h.anchor = string(part.Rune)
		case anchorAt < 0:
			alts, ok := handAlternatives(part)
			if !ok || !h.expand(alts) {
				return nil
			}
		default:
			rep, ok := handRepeatOf(part)
			if !ok {
				return nil
			}
			h.post = append(h.post, rep)
		}
	}
	if anchorAt < 0 {
		return nil
	}
	h.rare = rareOffset(h.anchor)
	for _, rep := range h.post {
		if rep.min > 0 && len(h.post) > 1 {
			return nil // a later part could need what an earlier one took
		}
	}
	for g := 1; g <= ncap; g++ {
		if h.groupItem[g] < 0 {
			return nil
		}
	}
	for _, c := range h.combos {
		h.before = max(h.before, len(c.text))
	}
	return h
}

// handAlt is one text a pre part matches, or the start of text.
type handAlt struct {
	text  string
	begin bool
}

// handAlternatives returns the texts a pre part matches, in the order the
// engine tries them.
func handAlternatives(re *syntax.Regexp) ([]handAlt, bool) {
	one := func(re *syntax.Regexp) (handAlt, bool) {
		switch re.Op {
		case syntax.OpLiteral:
			if re.Flags&syntax.FoldCase != 0 {
				return handAlt{}, false
			}
			return handAlt{text: string(re.Rune)}, true
		case syntax.OpBeginText:
			return handAlt{begin: true}, true
		case syntax.OpEmptyMatch:
			return handAlt{}, true
		}
		return handAlt{}, false
	}
	switch re.Op {
	case syntax.OpAlternate:
		alts := make([]handAlt, 0, len(re.Sub))
		for _, sub := range re.Sub {
			a, ok := one(sub)
			if !ok {
				return nil, false
			}
			alts = append(alts, a)
		}
		return alts, true
	case syntax.OpCharClass:
		// One character: at most one of the texts matches anywhere, so
		// their order does not matter.
		var alts []handAlt
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if len(alts) == handMaxClass {
					return nil, false
				}
				alts = append(alts, handAlt{text: string(r)})
			}
		}
		return alts, len(alts) > 0
	}
	a, ok := one(re)
	return []handAlt{a}, ok
}

// expand makes the choices of the pre parts so far followed by one of
// alts, in the engine's order: the earlier parts' choice varies slowest.
func (h *handMatcher) expand(alts []handAlt) bool {
	if len(h.combos)*len(alts) > handMaxCombos {
		return false
	}
	out := make([]handCombo, 0, len(h.combos)*len(alts))
	for _, c := range h.combos {
		for _, a := range alts {
			n := handCombo{text: c.text + a.text}
			n.lens = append(append([]int(nil), c.lens...), len(a.text))
			n.begin = append([]int(nil), c.begin...)
			if a.begin {
				n.begin = append(n.begin, len(c.text))
			}
			out = append(out, n)
		}
	}
	h.combos = out
	return true
}

// handRepeatOf returns the post part of re, a repetition of one character
// of a class.
func handRepeatOf(re *syntax.Regexp) (handRepeat, bool) {
	var rep handRepeat
	switch re.Op {
	case syntax.OpStar:
		rep.min, rep.max = 0, -1
	case syntax.OpPlus:
		rep.min, rep.max = 1, -1
	case syntax.OpQuest:
		rep.min, rep.max = 0, 1
	default:
		return rep, false
	}
	rep.nonGreedy = re.Flags&syntax.NonGreedy != 0
	var ranges []rune
	switch x := re.Sub[0]; x.Op {
	case syntax.OpCharClass:
		ranges = x.Rune
	case syntax.OpAnyChar:
		ranges = []rune{0, utf8.MaxRune}
	case syntax.OpAnyCharNotNL:
		ranges = []rune{0, '\n' - 1, '\n' + 1, utf8.MaxRune}
	case syntax.OpLiteral:
		if len(x.Rune) != 1 || x.Flags&syntax.FoldCase != 0 {
			return rep, false
		}
		ranges = []rune{x.Rune[0], x.Rune[0]}
	default:
		return rep, false
	}
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		for r := lo; r <= hi && r < utf8.RuneSelf; r++ {
			rep.ascii[r] = true
		}
		if hi >= utf8.RuneSelf {
			rep.ranges = append(rep.ranges, max(lo, utf8.RuneSelf), hi)
		}
	}
	return rep, true
}

// has tells whether the class holds r.
func (rep *handRepeat) has(r rune) bool {
	for i := 0; i+1 < len(rep.ranges); i += 2 {
		if r >= rep.ranges[i] && r <= rep.ranges[i+1] {
			return true
		}
	}
	return false
}

// span returns how many bytes from the start of s the repetition takes,
// false if it cannot match there. Text that is not UTF-8 reads as U+FFFD
// a byte at a time, as the engine reads it.
func (rep *handRepeat) span(s string) (int, bool) {
	want := rep.max
	if rep.nonGreedy {
		want = rep.min
	}
	n, i := 0, 0
	for i < len(s) && n != want {
		if c := s[i]; c < utf8.RuneSelf {
			if !rep.ascii[c] {
				break
			}
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			if !rep.has(r) {
				break
			}
			i += size
		}
		n++
	}
	return i, n >= rep.min
}

// match finds the first match in s, writing the bounds of its parts into
// bounds: part k spans bounds[k] to bounds[k+1]. false if s holds none.
func (h *handMatcher) match(s string, bounds *[handMaxItems + 1]int) bool {
	pos := 0 // every match starting before pos was tried
	for pos <= len(s) {
		i := indexRare(s[pos:], h.anchor, h.rare)
		if i < 0 {
			return false
		}
		i += pos
		for j := max(pos, i-h.before); j <= i; j++ {
			for c := range h.combos {
				if h.matchAt(s, j, &h.combos[c], bounds) {
					return true
				}
			}
		}
		pos = i + 1
	}
	return false
}

// matchAt tells whether the match with choice c of the pre parts starts at
// j, and sets bounds if so.
func (h *handMatcher) matchAt(s string, j int, c *handCombo, bounds *[handMaxItems + 1]int) bool {
	rest := s[j:]
	if !strings.HasPrefix(rest, c.text) || !strings.HasPrefix(rest[len(c.text):], h.anchor) {
		return false
	}
	for _, b := range c.begin {
		if j+b != 0 {
			return false
		}
	}
	k, at := 0, j
	for _, n := range c.lens {
		bounds[k] = at
		at += n
		k++
	}
	bounds[k] = at
	at += len(h.anchor)
	k++
	for p := range h.post {
		bounds[k] = at
		n, ok := h.post[p].span(s[at:])
		if !ok {
			return false
		}
		at += n
		k++
	}
	bounds[k] = at
	return true
}

// group returns the bounds of group g (0: the whole match) of the first
// match in s, ok false if there is none.
func (h *handMatcher) group(s string, g int) (start, end int, ok bool) {
	var bounds [handMaxItems + 1]int
	if !h.match(s, &bounds) {
		return 0, 0, false
	}
	if g == 0 {
		return bounds[0], bounds[h.items], true
	}
	k := h.groupItem[g]
	return bounds[k], bounds[k+1], true
}

// submatchIndex is FindStringSubmatchIndex's result.
func (h *handMatcher) submatchIndex(s string) []int {
	var bounds [handMaxItems + 1]int
	if !h.match(s, &bounds) {
		return nil
	}
	loc := make([]int, 2*len(h.groupItem))
	loc[0], loc[1] = bounds[0], bounds[h.items]
	for g := 1; g < len(h.groupItem); g++ {
		k := h.groupItem[g]
		loc[2*g], loc[2*g+1] = bounds[k], bounds[k+1]
	}
	return loc
}
