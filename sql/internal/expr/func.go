package expr

import (
	"fmt"
	"sort"
	"strings"

	"github.com/eddystream/eddy/sql/types"
)

// Func is the implementation of a scalar function or operator.
type Func struct {
	// Infix, Prefix and Postfix say how a call prints: a + b, NOT a,
	// a IS NULL; otherwise f(a, b).
	Infix, Prefix, Postfix bool
	// Volatile is set for functions whose value changes from call to call
	// with the same arguments (RAND, CURRENT_TIMESTAMP): they are not
	// folded into constants.
	Volatile bool
	// Compile builds the Eval of call from its compiled arguments. The
	// arguments have the types Resolve asked for; the result's type is set
	// by the caller to call.T.
	Compile func(call *Call, args []*Eval) (*Eval, error)
}

// Builtin is a scalar function or operator of the SQL catalog.
type Builtin struct {
	// Name is the name in upper case (the operator for operators).
	Name string
	// Resolve checks the types of the arguments and returns the type of
	// the result and the types the arguments are cast to first (nil, or an
	// entry equal to the argument's type, for no cast). Its error says
	// what the function takes.
	Resolve func(args []types.Type) (result types.Type, casts []types.Type, err error)
	Func    *Func
	// Check, if set, validates a resolved call whose argument values may be
	// constants: a pattern, a unit or a format that cannot work is an error
	// of the query rather than of every row. It may refine call.T from
	// constant arguments (ROUND's scale, a unit's result type).
	Check func(call *Call) error
	// Doc is one line for SHOW FUNCTIONS and the docs: the signature and
	// what the function does.
	Doc string
}

// Registry is the set of scalar functions and operators by name.
type Registry struct {
	funcs map[string]*Builtin
}

// builtins holds eddy's built-in scalar functions and operators.
var builtins = &Registry{funcs: map[string]*Builtin{}}

// Builtins returns the registry of built-in functions.
func Builtins() *Registry { return builtins }

// NewRegistry returns a registry holding the built-in functions, to which
// user-defined functions can be added.
func NewRegistry() *Registry {
	r := &Registry{funcs: make(map[string]*Builtin, len(builtins.funcs))}
	for k, v := range builtins.funcs {
		r.funcs[k] = v
	}
	return r
}

// Add registers b under its name, replacing a function of that name.
func (r *Registry) Add(b *Builtin) { r.funcs[strings.ToUpper(b.Name)] = b }

// Remove removes the function called name, bringing back the built-in of
// that name if there is one.
func (r *Registry) Remove(name string) {
	k := strings.ToUpper(name)
	delete(r.funcs, k)
	if b, ok := builtins.funcs[k]; ok && r != builtins {
		r.funcs[k] = b
	}
}

// Lookup returns the function called name (case-insensitive).
func (r *Registry) Lookup(name string) (*Builtin, bool) {
	b, ok := r.funcs[strings.ToUpper(name)]
	return b, ok
}

// Names returns the names of the registered functions, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.funcs))
	for n := range r.funcs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func register(b *Builtin) {
	if _, dup := builtins.funcs[b.Name]; dup {
		panic("sql: built-in " + b.Name + " defined twice")
	}
	builtins.funcs[b.Name] = b
}

// NewCall resolves a call of b with args: it checks their types, casts
// them as b asks, and returns the typed call.
func NewCall(b *Builtin, args ...Expr) (Expr, error) {
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	res, casts, err := b.Resolve(ts)
	if err != nil {
		return nil, err
	}
	out := make([]Expr, len(args))
	copy(out, args)
	for i, c := range casts {
		if i < len(out) && c.Kind() != types.KindNull && !c.Equal(ts[i]) {
			out[i] = ImplicitCast(out[i], c)
		}
	}
	call := &Call{Name: b.Name, Args: out, T: res, Fn: b.Func}
	if b.Check != nil {
		if err := b.Check(call); err != nil {
			return nil, err
		}
	}
	return call, nil
}

// ImplicitCast returns e converted to t: e itself if it has type t, a
// NULL literal of type t for an untyped NULL, else a Cast.
func ImplicitCast(e Expr, t types.Type) Expr {
	if e.Type().Equal(t) {
		return e
	}
	if l, ok := e.(*Literal); ok && l.V == nil {
		return &Literal{T: t.Nullable(), Text: "NULL"}
	}
	if e.Type().EqualIgnoringNullability(t) && !t.IsNullable() {
		return e
	}
	c := &Cast{X: e, T: t.WithNullability(e.Type().IsNullable() || t.IsNullable())}
	if l, ok := e.(*Literal); ok {
		// A constant converts once, keeping its text.
		if ev, err := Compile(c); err == nil {
			var v types.Value
			if Catch(func() { v = ev.Boxed()(types.Row{}) }) == nil && v != nil {
				return &Literal{V: v, T: c.T, Text: l.Text}
			}
		}
	}
	return c
}

// ArgError is the error of a call whose arguments a function does not
// take.
type ArgError struct {
	Func string
	Args []types.Type
	// Want describes the signatures the function takes.
	Want string
}

func (e *ArgError) Error() string {
	as := make([]string, len(e.Args))
	for i, a := range e.Args {
		as[i] = a.String()
	}
	return fmt.Sprintf("cannot apply %s to (%s): it takes %s", e.Func, strings.Join(as, ", "), e.Want)
}

func nullableIfAny(t types.Type, args []types.Type) types.Type {
	for _, a := range args {
		if a.IsNullable() {
			return t.Nullable()
		}
	}
	return t.NotNull()
}
