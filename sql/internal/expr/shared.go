package expr

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy/sql/types"
)

// Shared compiles expressions that are evaluated together over each row
// (a Calc's condition and projections) so that a subexpression they hold
// more than once — a call, a cast or a CASE, the same computation over the
// same columns — is evaluated once per row: the first use computes it, the
// others read its value. Nexmark q21's REGEXP_EXTRACT in the WHERE and the
// SELECT, or q14's 0.908 * price thrice, run once a row.
//
// Next must be called before the expressions are evaluated over each new
// row. Volatile calls, and expressions holding them, are never shared. A
// Shared and what it compiles belong to one goroutine.
type Shared struct {
	gen   uint64
	count map[string]int
	evals map[string]*Eval
}

// NewShared returns a Shared for the expressions es (nil ones are
// skipped), which it counts the subexpressions of.
func NewShared(es ...Expr) *Shared {
	s := &Shared{gen: 1, count: map[string]int{}, evals: map[string]*Eval{}}
	for _, e := range es {
		if e != nil {
			s.countIn(e)
		}
	}
	return s
}

// Next starts a new row: the shared values computed so far are stale.
func (s *Shared) Next() { s.gen++ }

// Compile compiles e, one of the expressions s was made for.
func (s *Shared) Compile(e Expr) (*Eval, error) { return compile(e, &hooks{shared: s}) }

// Setter is expr.Setter for e compiled by s.
func (s *Shared) Setter(e Expr, i int) (func(in types.Row, w *types.RowWriter), error) {
	ev, err := s.Compile(e)
	if err != nil {
		return nil, err
	}
	return SetterOf(ev, i), nil
}

// RefSetter is RefSetterOf for e compiled by s.
func (s *Shared) RefSetter(e Expr, i int) (func(in types.Row, w *types.RowWriter), error) {
	ev, err := s.Compile(e)
	if err != nil {
		return nil, err
	}
	return RefSetterOf(ev, i), nil
}

// Len returns the number of subexpressions s evaluates once per row.
func (s *Shared) Len() int {
	n := 0
	for _, c := range s.count {
		if c > 1 {
			n++
		}
	}
	return n
}

// countIn counts the shareable subexpressions of e; those of a repeated
// one are counted at its first occurrence only, so that only the
// outermost repeated computation is kept.
func (s *Shared) countIn(e Expr) {
	if k, ok := sharedKey(e); ok && compound(e) {
		s.count[k]++
		if s.count[k] > 1 {
			return
		}
	}
	for _, c := range children(e) {
		s.countIn(c)
	}
}

// compile returns the shared Eval of e if e occurs more than once (ok
// false otherwise: compile it as usual).
func (s *Shared) compile(e Expr, h *hooks) (*Eval, bool, error) {
	if !compound(e) {
		return nil, false, nil
	}
	k, ok := sharedKey(e)
	if !ok || s.count[k] < 2 {
		return nil, false, nil
	}
	if ev, ok := s.evals[k]; ok {
		return ev, true, nil
	}
	ev, err := compileNode(e, h)
	if err != nil {
		return nil, true, err
	}
	if !ev.Const {
		ev = s.memo(ev)
	}
	s.evals[k] = ev
	return ev, true, nil
}

// memo returns ev computing its value at most once per row of s.
func (s *Shared) memo(ev *Eval) *Eval {
	out := &Eval{T: ev.T}
	switch {
	case ev.Bool != nil:
		out.Bool = memoOf(s, ev.Bool)
	case ev.Int != nil:
		out.Int = memoOf(s, ev.Int)
	case ev.Float != nil:
		out.Float = memoOf(s, ev.Float)
	case ev.Dec != nil:
		out.Dec = memoOf(s, ev.Dec)
	case ev.Str != nil:
		out.Str = memoOf(s, ev.Str)
	case ev.TS != nil:
		out.TS = memoOf(s, ev.TS)
	case ev.Row != nil:
		out.Row = memoOf(s, ev.Row)
	case ev.Arr != nil:
		out.Arr = memoOf(s, ev.Arr)
	case ev.Map != nil:
		out.Map = memoOf(s, ev.Map)
	default:
		return ev
	}
	return out
}

func memoOf[V any](s *Shared, f func(types.Row) (V, bool)) func(types.Row) (V, bool) {
	var gen uint64
	var v V
	var null bool
	return func(r types.Row) (V, bool) {
		if gen != s.gen {
			v, null = f(r)
			gen = s.gen
		}
		return v, null
	}
}

// compound tells whether e computes something worth sharing.
func compound(e Expr) bool {
	switch e.(type) {
	case *Call, *Cast, *Case:
		return true
	}
	return false
}

// children returns the operands of e.
func children(e Expr) []Expr {
	switch e := e.(type) {
	case *Field:
		return []Expr{e.X}
	case *Cast:
		return []Expr{e.X}
	case *Call:
		return e.Args
	case *Case:
		var out []Expr
		for _, w := range e.Whens {
			out = append(out, w.Cond, w.Result)
		}
		if e.Else != nil {
			out = append(out, e.Else)
		}
		return out
	}
	return nil
}

// SharedKey is sharedKey, for the planner's merging of expressions that
// compute the same value.
func SharedKey(e Expr) (string, bool) { return sharedKey(e) }

// sharedKey returns a text that two expressions have alike only if they
// compute the same value from the same row: columns by index, calls by
// their function, every type written out. ok is false for an expression
// that holds a volatile call or a node it does not know.
func sharedKey(e Expr) (string, bool) {
	var b strings.Builder
	ok := writeKey(&b, e)
	return b.String(), ok
}

func writeKey(b *strings.Builder, e Expr) bool {
	switch e := e.(type) {
	case *Column:
		fmt.Fprintf(b, "$%d:%s", e.Index, e.T)
		return true
	case *Field:
		b.WriteString("(")
		ok := writeKey(b, e.X)
		fmt.Fprintf(b, ").%d:%s", e.Index, e.T)
		return ok
	case *Literal:
		// The value itself, exactly: its printed form can be alike for
		// other values (strings in an ARRAY are not quoted).
		fmt.Fprintf(b, "%T%#v:%s", e.V, e.V, e.T)
		return true
	case *Cast:
		if e.Try {
			b.WriteString("TRY_")
		}
		b.WriteString("CAST(")
		ok := writeKey(b, e.X)
		fmt.Fprintf(b, "):%s", e.T)
		return ok
	case *Call:
		if e.Fn == nil || e.Fn.Volatile {
			return false
		}
		fmt.Fprintf(b, "%s@%p(", e.Name, e.Fn)
		for i, a := range e.Args {
			if i > 0 {
				b.WriteString(",")
			}
			if !writeKey(b, a) {
				return false
			}
		}
		fmt.Fprintf(b, "):%s", e.T)
		return true
	case *Case:
		b.WriteString("CASE(")
		for _, w := range e.Whens {
			b.WriteString("W")
			if !writeKey(b, w.Cond) {
				return false
			}
			b.WriteString("T")
			if !writeKey(b, w.Result) {
				return false
			}
		}
		if e.Else != nil {
			b.WriteString("E")
			if !writeKey(b, e.Else) {
				return false
			}
		}
		fmt.Fprintf(b, "):%s", e.T)
		return true
	}
	return false
}
