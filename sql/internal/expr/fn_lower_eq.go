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
	if (c.Name != "=" && c.Name != "<>") || len(c.Args) != 2 || c.Fn != builtinFunc(c.Name) {
		return nil, false, nil
	}
	low, lit := c.Args[0], c.Args[1]
	if _, isLit := low.(*Literal); isLit {
		low, lit = lit, low
	}
	call, isCall := low.(*Call)
	l, isLit := lit.(*Literal)
	if !isCall || !isLit || call.Fn != builtinFunc("LOWER") || len(call.Args) != 1 ||
		ClassOf(call.T) != ClassString || ClassOf(call.Args[0].Type()) != ClassString {
		return nil, false, nil
	}
	k, isStr := l.V.(string)
	if !isStr || l.V == nil {
		return nil, false, nil
	}
	x, err := compile(call.Args[0], h)
	if err != nil {
		return nil, true, err
	}
	get := x.Str
	want := c.Name == "="
	ev = &Eval{T: c.T, Bool: func(r types.Row) (bool, bool) {
		s, null := get(r)
		if null {
			return false, true
		}
		return lowerEquals(s, k) == want, false
	}}
	if x.Const {
		ev, err = fold(c, ev)
	}
	return ev, true, err
}

// builtinFunc returns the implementation of the built-in called name.
func builtinFunc(name string) *Func {
	if b, ok := builtins.funcs[name]; ok {
		return b.Func
	}
	return nil
}

// lowerEquals tells whether strings.ToLower(s) == k.
func lowerEquals(s, k string) bool {
	if len(s) != len(k) {
		for i := 0; i < len(s); i++ {
			if s[i] >= utf8.RuneSelf {
				return strings.ToLower(s) == k
			}
		}
		return false // ASCII lowers to as many bytes
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b >= utf8.RuneSelf {
			// The ASCII before lowered to k's bytes; the rest may change.
			return strings.ToLower(s[i:]) == k[i:]
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if b != k[i] {
			return false // what s[:i+1] lowers to is a prefix of the whole
		}
	}
	return true
}
