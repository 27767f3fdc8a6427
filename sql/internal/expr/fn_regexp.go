package expr

import (
	"fmt"
	"regexp"

	"github.com/eddystream/eddy/sql/types"
)

// The regular expression functions REGEXP, REGEXP_EXTRACT and
// REGEXP_REPLACE. Flink's patterns are Java's; eddy runs them with Go's RE2
// engine, which has the same syntax for classes, groups, quantifiers,
// anchors and flags but no backreferences, lookaround, possessive
// quantifiers or atomic groups (such a constant pattern is an error of the
// query). A constant pattern compiles once; others are cached as they
// come.
func init() {
	str := famStr
	register(&Builtin{
		Name:    "REGEXP",
		Resolve: resolver("REGEXP", "(string, regex)", fixed(types.Boolean()), sigOf(str, str)),
		Func: &Func{Compile: func(c *Call, args []*Eval) (*Eval, error) {
			get, err := regexpArg(c, args[1])
			if err != nil {
				return nil, err
			}
			x := args[0].Str
			return &Eval{Bool: func(r types.Row) (bool, bool) {
				s, null := x(r)
				if null {
					return false, true
				}
				re, null, ok := get(r)
				if null {
					return false, true
				}
				return ok && re != nil && re.MatchString(s), false
			}}, nil
		}},
		Check: checkRegexp(1),
		Doc:   "REGEXP(string, regex): whether some (possibly empty) substring of string matches the regular expression; FALSE for an empty regex",
	})
	register(&Builtin{
		Name: "REGEXP_EXTRACT",
		Resolve: resolver("REGEXP_EXTRACT", "(string, regex [, group INT])", forceNullable(types.String()),
			sigOf(str, str), sigOf(str, str, famInt)),
		Func: &Func{Compile: func(c *Call, args []*Eval) (*Eval, error) {
			get, err := regexpArg(c, args[1])
			if err != nil {
				return nil, err
			}
			x := args[0].Str
			group := func(types.Row) (int64, bool) { return 0, false }
			if len(args) == 3 {
				group = args[2].Int
			}
			if re, g, ok := constRegexpGroup(c, args); ok {
				// A constant pattern and group: no more to check a row.
				return &Eval{Str: func(r types.Row) (string, bool) {
					s, null := x(r)
					if null {
						return "", true
					}
					start, end, ok := re.group(s, g)
					if !ok {
						return "", true
					}
					return s[start:end], false
				}}, nil
			}
			return &Eval{Str: func(r types.Row) (string, bool) {
				s, null := x(r)
				if null {
					return "", true
				}
				g, null := group(r)
				if null {
					return "", true
				}
				re, null, ok := get(r)
				if null || !ok || re == nil || g < 0 || g > int64(re.NumSubexp()) {
					return "", true
				}
				start, end, ok := re.group(s, int(g))
				if !ok {
					return "", true
				}
				return s[start:end], false
			}}, nil
		}},
		Check: checkRegexp(1),
		Doc:   "REGEXP_EXTRACT(string, regex [, group]): the text of group (0, the whole match, by default) of the first match of regex in string; NULL if there is no match or no such group",
	})
	register(&Builtin{
		Name: "REGEXP_REPLACE",
		Resolve: resolver("REGEXP_REPLACE", "(string, regex, replacement)", fixed(types.String()),
			sigOf(str, str, str)),
		Func: &Func{Compile: func(c *Call, args []*Eval) (*Eval, error) {
			get, err := regexpArg(c, args[1])
			if err != nil {
				return nil, err
			}
			x, rep := args[0].Str, args[2].Str
			return &Eval{Str: func(r types.Row) (string, bool) {
				s, n1 := x(r)
				with, n2 := rep(r)
				if n1 || n2 {
					return "", true
				}
				re, null, ok := get(r)
				if null || !ok || re == nil {
					return "", true
				}
				return re.ReplaceAllLiteralString(s, with), false
			}}, nil
		}},
		Check: checkRegexp(1),
		Doc:   "REGEXP_REPLACE(string, regex, replacement): string with every match of regex replaced by replacement (taken literally)",
	})
}

// constRegexpGroup returns the pattern and the group of a REGEXP_EXTRACT
// whose pattern and group (if given) are constants, not NULL, and the group
// one of the pattern's; ok is false otherwise.
func constRegexpGroup(c *Call, args []*Eval) (re *matcher, g int, ok bool) {
	p, null, isConst := constStringEval(args[1])
	if !isConst || null {
		return nil, 0, false
	}
	if len(args) == 3 {
		if !args[2].Const {
			return nil, 0, false
		}
		v, null := args[2].Int(types.Row{})
		if null || v < 0 || v > 1<<20 {
			return nil, 0, false
		}
		g = int(v)
	}
	re, err := compileRegexp(p)
	if err != nil || g > re.NumSubexp() {
		return nil, 0, false
	}
	return re, g, true
}

// compileRegexp compiles a pattern, naming it in the error.
func compileRegexp(p string) (*matcher, error) {
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("bad regular expression %q (eddy runs Go's RE2 syntax, Java's without backreferences, lookaround, possessive quantifiers and atomic groups): %w", p, err)
	}
	return newMatcher(re, p), nil
}

func checkRegexp(i int) func(*Call) error {
	return checkConstString(i, func(s string) error {
		_, err := compileRegexp(s)
		return err
	})
}

// regexpArg returns a function giving the compiled pattern of x for a row:
// null for NULL, ok false for a pattern that does not compile (which Flink
// turns into NULL or FALSE), re nil for the empty pattern (REGEXP's FALSE).
func regexpArg(c *Call, x *Eval) (func(types.Row) (re *matcher, null, ok bool), error) {
	if p, null, isConst := constStringEval(x); isConst {
		if null {
			return func(types.Row) (*matcher, bool, bool) { return nil, true, false }, nil
		}
		re, err := compileRegexp(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		if p == "" && c.Name == "REGEXP" {
			re = nil
		}
		return func(types.Row) (*matcher, bool, bool) { return re, false, true }, nil
	}
	get := x.Str
	cache := newPatternCache(compileRegexp)
	isRegexp := c.Name == "REGEXP"
	return func(r types.Row) (*matcher, bool, bool) {
		p, null := get(r)
		if null {
			return nil, true, false
		}
		if p == "" && isRegexp {
			return nil, false, true
		}
		re, err := cache.get(p)
		if err != nil {
			return nil, false, false
		}
		return re, false, true
	}, nil
}
