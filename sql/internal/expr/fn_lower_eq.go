package expr

import (
	"strings"
	"unicode/utf8"

	"github.com/eddystream/eddy/sql/types"
)

// compileLowerCompare compiles LOWER(x) = 'c' and LOWER(x) <> 'c' (the
// constant on either side) without lowering x: for x of ASCII only, LOWER
// maps each byte to one byte, so the comparison goes byte by byte, folding
// A-Z; x with other bytes is lowered as LOWER does (Unicode's mappings can
// change lengths and map non-ASCII to ASCII, as the Kelvin sign to k).
// Nexmark q21 tests LOWER(channel) against four names. ok is false for any
// other call.
func compileLowerCompare(c *Call, h *hooks) (ev *Eval, ok bool, err error) {
	x, k, want, ok := lowerCompare(c)
	if !ok {
		return nil, false, nil
	}
	return lowerTest(c, x, h, func(s string) bool { return lowerEquals(s, k) == want })
}

// lowerTest compiles c, a test of the text of x by match (NULL when x is
// NULL), folded when x is constant.
func lowerTest(c *Call, x Expr, h *hooks, match func(s string) bool) (*Eval, bool, error) {
	xe, err := compile(x, h)
	if err != nil {
		return nil, true, err
	}
	get := xe.Str
	ev := &Eval{T: c.T, Bool: func(r types.Row) (bool, bool) {
		s, null := get(r)
		if null {
			return false, true
		}
		return match(s), false
	}}
	if xe.Const {
		ev, err = fold(c, ev)
	}
	return ev, true, err
}

// lowerCompare returns the parts of LOWER(x) = 'k' (eq true) or
// LOWER(x) <> 'k', the constant on either side; ok is false for another
// expression.
func lowerCompare(e Expr) (x Expr, k string, eq, ok bool) {
	c, isCall := e.(*Call)
	if !isCall || (c.Name != "=" && c.Name != "<>") || len(c.Args) != 2 || c.Fn != builtinFunc(c.Name) {
		return nil, "", false, false
	}
	low, lit := c.Args[0], c.Args[1]
	if _, isLit := low.(*Literal); isLit {
		low, lit = lit, low
	}
	call, isCall := low.(*Call)
	l, isLit := lit.(*Literal)
	if !isCall || !isLit || call.Fn != builtinFunc("LOWER") || len(call.Args) != 1 ||
		ClassOf(call.T) != ClassString || ClassOf(call.Args[0].Type()) != ClassString {
		return nil, "", false, false
	}
	k, isStr := l.V.(string)
	if !isStr {
		return nil, "", false, false
	}
	return call.Args[0], k, c.Name == "=", true
}

// lowerChoice returns x and the constants of conditions that are all
// LOWER(x) = 'k' of one x that is not volatile, ok false otherwise.
func lowerChoice(conds []Expr) (x Expr, ks []string, ok bool) {
	var key string
	for i, c := range conds {
		cx, k, eq, isLower := lowerCompare(c)
		if !isLower || !eq {
			return nil, nil, false
		}
		ck, stable := sharedKey(cx)
		if !stable || (i > 0 && ck != key) {
			return nil, nil, false
		}
		x, key = cx, ck
		ks = append(ks, k)
	}
	return x, ks, len(ks) > 1
}

// compileLowerChoice compiles the pick of a CASE whose conditions are all
// LOWER(x) = 'k' of one x, or the OR of such comparisons (an IN list):
// x is read once, then compared with each constant in turn. The pick is
// the index of the first constant equal, len(ks) if none is or x is NULL.
func compileLowerChoice(x Expr, ks []string, h *hooks) (func(types.Row) int, error) {
	xe, err := compile(x, h)
	if err != nil {
		return nil, err
	}
	get := xe.Str
	return func(r types.Row) int {
		s, null := get(r)
		if null {
			return len(ks)
		}
		for i, k := range ks {
			if lowerEquals(s, k) {
				return i
			}
		}
		return len(ks)
	}, nil
}

// compileLowerIn compiles an OR of LOWER(x) = 'k' of one x (Nexmark
// q21's LOWER(channel) IN ('apple', ...)) into one reading of x; ok is
// false for another call.
func compileLowerIn(c *Call, h *hooks) (ev *Eval, ok bool, err error) {
	if c.Name != "OR" || c.Fn != builtinFunc("OR") {
		return nil, false, nil
	}
	var leaves []Expr
	var walk func(e Expr)
	walk = func(e Expr) {
		if o, isOr := e.(*Call); isOr && o.Name == "OR" && o.Fn == c.Fn && len(o.Args) == 2 {
			walk(o.Args[0])
			walk(o.Args[1])
			return
		}
		leaves = append(leaves, e)
	}
	walk(c)
	x, ks, ok := lowerChoice(leaves)
	if !ok {
		return nil, false, nil
	}
	return lowerTest(c, x, h, func(s string) bool {
		for _, k := range ks {
			if lowerEquals(s, k) {
				return true
			}
		}
		return false
	})
}

// builtinFunc returns the implementation of the built-in called name.
func builtinFunc(name string) *Func {
	if b, ok := builtins.funcs[name]; ok {
		return b.Func
	}
	return nil
}

// lowerEquals tells whether strings.ToLower(s) == k. It walks s and k
// together while s is ASCII: LOWER maps each such byte to one byte, so
// what a prefix of s lowers to is a prefix of the whole, and the first
// difference decides; the rest of s from a byte that is not ASCII is
// lowered as LOWER lowers it.
func lowerEquals(s, k string) bool {
	n := min(len(s), len(k))
	for i := 0; i < n; i++ {
		b := s[i]
		if b >= utf8.RuneSelf {
			return strings.ToLower(s[i:]) == k[i:]
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if b != k[i] {
			return false
		}
	}
	// s[:n] is ASCII and lowers to k[:n]; the rest of s, if any, lowers
	// to at least a byte a character.
	return len(s) == len(k)
}
