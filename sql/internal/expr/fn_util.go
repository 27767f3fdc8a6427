package expr

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy/sql/types"
)

// fam is a family of argument types a built-in function accepts, as
// Flink's operand type checkers name them (STRING, INTEGER, NUMERIC, ...).
type fam uint8

const (
	// famStr is CHAR and VARCHAR.
	famStr fam = iota
	// famInt is TINYINT to BIGINT.
	famInt
	// famNum is any number, read as it is.
	famNum
	// famDouble is any number, cast to DOUBLE.
	famDouble
	// famBool is BOOLEAN.
	famBool
	// famBin is BINARY and VARBINARY.
	famBin
	// famAny is any type.
	famAny
	// famText is CHAR, VARCHAR, BINARY and VARBINARY (Flink's STRING
	// family).
	famText
)

func (f fam) accepts(t types.Type) bool {
	if t.Kind() == types.KindNull {
		return true
	}
	switch f {
	case famStr:
		return t.IsString()
	case famInt:
		return t.IsIntegral()
	case famNum, famDouble:
		return t.IsNumeric()
	case famBool:
		return t.Kind() == types.KindBoolean
	case famBin:
		return t.IsBinary()
	case famText:
		return t.IsString() || t.IsBinary()
	}
	return true
}

// cast returns the type an argument t of the family is cast to.
func (f fam) cast(t types.Type) types.Type {
	if t.Kind() == types.KindNull {
		switch f {
		case famStr, famText:
			return types.String().Nullable()
		case famInt:
			return types.Int().Nullable()
		case famNum, famDouble:
			return types.Double().Nullable()
		case famBin:
			return types.Bytes().Nullable()
		}
		return types.Boolean().Nullable()
	}
	if f == famDouble {
		return types.Double().WithNullability(t.IsNullable())
	}
	return t
}

// sig is one signature of a function: the families of its arguments; the
// last repeats when variadic is set.
type sig struct {
	args     []fam
	variadic bool
}

func sigOf(args ...fam) sig { return sig{args: args} }

func (s sig) match(ts []types.Type) bool {
	if s.variadic {
		if len(ts) < len(s.args)-1 {
			return false
		}
	} else if len(ts) != len(s.args) {
		return false
	}
	for i, t := range ts {
		f := s.args[min(i, len(s.args)-1)]
		if !f.accepts(t) {
			return false
		}
	}
	return true
}

func (s sig) casts(ts []types.Type) []types.Type {
	out := make([]types.Type, len(ts))
	for i, t := range ts {
		out[i] = s.args[min(i, len(s.args)-1)].cast(t)
	}
	return out
}

// resolver returns a Resolve function for the signatures: the first
// signature that matches gives the casts, result gives the result type
// from the argument types (after the casts). want describes the signatures
// for errors.
func resolver(name, want string, result func(args []types.Type) types.Type, sigs ...sig) func([]types.Type) (types.Type, []types.Type, error) {
	return func(args []types.Type) (types.Type, []types.Type, error) {
		for _, s := range sigs {
			if s.match(args) {
				casts := s.casts(args)
				return result(casts), casts, nil
			}
		}
		return types.Type{}, nil, &ArgError{name, args, want}
	}
}

// fixed returns a result function giving t, nullable if any argument is.
func fixed(t types.Type) func([]types.Type) types.Type {
	return func(args []types.Type) types.Type { return nullableIfAny(t, args) }
}

// forceNullable returns a result function giving t, always nullable.
func forceNullable(t types.Type) func([]types.Type) types.Type {
	return func([]types.Type) types.Type { return t.Nullable() }
}

// constArg returns the value of argument i of a call when it is a
// literal (after implicit casts): ok is false when it is not a constant.
func constArg(c *Call, i int) (v types.Value, ok bool) {
	if i >= len(c.Args) {
		return nil, false
	}
	l, isLit := c.Args[i].(*Literal)
	if !isLit {
		return nil, false
	}
	return l.V, true
}

// constString returns argument i as a constant string; ok is false when it
// is not a constant, null when it is the NULL constant.
func constString(c *Call, i int) (s string, null, ok bool) {
	v, ok := constArg(c, i)
	if !ok {
		return "", false, false
	}
	switch x := v.(type) {
	case string:
		return x, false, true
	case []byte:
		return string(x), false, true
	case nil:
		return "", true, true
	}
	return "", false, false
}

// constStringEval returns the value of a constant string Eval.
func constStringEval(e *Eval) (s string, null, ok bool) {
	if !e.Const || e.Class() != ClassString {
		return "", false, false
	}
	s, null = e.Str(types.Row{})
	return s, null, true
}

// register1 registers a function.
func def(name, doc string, resolve func([]types.Type) (types.Type, []types.Type, error), compile func(*Call, []*Eval) (*Eval, error)) *Builtin {
	b := &Builtin{Name: name, Resolve: resolve, Func: &Func{Compile: compile}, Doc: doc}
	register(b)
	return b
}

// strFn1 is a string function of one string: NULL for NULL.
func strFn1(f func(string) string) func(*Call, []*Eval) (*Eval, error) {
	return func(c *Call, args []*Eval) (*Eval, error) {
		x := args[0].Str
		return &Eval{Str: func(r types.Row) (string, bool) {
			s, null := x(r)
			if null {
				return "", true
			}
			return f(s), false
		}}, nil
	}
}

// strFnN is a string function of string and integer arguments: NULL if any
// is NULL; f may give NULL too.
func strFnN(f func(c *Call, vals []string, ints []int64) (string, bool)) func(*Call, []*Eval) (*Eval, error) {
	return func(c *Call, args []*Eval) (*Eval, error) {
		get := argGetters(args)
		n := len(args)
		return &Eval{Str: func(r types.Row) (string, bool) {
			var sv [4]string
			var iv [4]int64
			for i := 0; i < n; i++ {
				if get[i](r, &sv[i], &iv[i]) {
					return "", true
				}
			}
			return f(c, sv[:n], iv[:n])
		}}, nil
	}
}

// argGetters reads string, integer or float (truncated) arguments into
// slots, reporting NULL.
func argGetters(args []*Eval) []func(types.Row, *string, *int64) bool {
	out := make([]func(types.Row, *string, *int64) bool, len(args))
	for i, a := range args {
		switch a.Class() {
		case ClassString:
			f := a.Str
			out[i] = func(r types.Row, s *string, _ *int64) bool {
				v, null := f(r)
				*s = v
				return null
			}
		case ClassInt:
			f := a.Int
			out[i] = func(r types.Row, _ *string, n *int64) bool {
				v, null := f(r)
				*n = v
				return null
			}
		default:
			isNull := a.IsNull()
			out[i] = func(r types.Row, _ *string, _ *int64) bool { return isNull(r) }
		}
	}
	return out
}

// intFnStr is an INT function of string arguments: NULL if any is NULL.
func intFnStr(f func(c *Call, vals []string, ints []int64) int64) func(*Call, []*Eval) (*Eval, error) {
	return func(c *Call, args []*Eval) (*Eval, error) {
		get := argGetters(args)
		n := len(args)
		return &Eval{Int: func(r types.Row) (int64, bool) {
			var sv [4]string
			var iv [4]int64
			for i := 0; i < n; i++ {
				if get[i](r, &sv[i], &iv[i]) {
					return 0, true
				}
			}
			return f(c, sv[:n], iv[:n]), false
		}}, nil
	}
}

// varcharOf returns VARCHAR of the length of a string type t (STRING for
// others).
func varcharOf(t types.Type) types.Type {
	if t.IsString() && t.Length() > 0 {
		return types.VarChar(t.Length())
	}
	return types.String()
}

// upperWord returns s in upper case as a unit name ("day" -> "DAY").
func upperWord(s string) string { return strings.ToUpper(strings.TrimSpace(s)) }

// quoteList joins names for messages: A, B or C.
func quoteList(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// checkConstArg runs check on argument i when it is a constant string.
func checkConstString(i int, check func(s string) error) func(*Call) error {
	return func(c *Call) error {
		s, null, ok := constString(c, i)
		if !ok || null {
			return nil
		}
		if err := check(s); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		return nil
	}
}
