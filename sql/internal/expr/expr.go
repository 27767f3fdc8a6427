// Package expr holds the resolved, typed expressions of eddy's SQL and
// compiles them into closures that evaluate them on binary rows without
// boxing a value.
//
// The planner resolves the parser's syntax tree against the columns in
// scope into an Expr tree: every node knows its SQL type. Compile turns a
// tree into an Eval, a typed function of a row; the operators of a query
// call those functions record by record. An error while evaluating (an
// overflow, a cast that fails) panics with an *Error that names the
// expression; the operator that called the function recovers it with
// Catch and fails the job (or sends the record to the dead letters) with
// it.
package expr

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy/sql/types"
)

// Expr is a resolved expression: a tree of Column, Field, Literal, Call,
// Cast and Case nodes, each with its type.
type Expr interface {
	// Type is the SQL type of the expression's value.
	Type() types.Type
	// String is the expression as SQL, for plans and error messages.
	String() string
}

// Column is the value of a column of the input row, by index.
type Column struct {
	Index int
	Name  string
	T     types.Type
}

// Type implements Expr.
func (c *Column) Type() types.Type { return c.T }

func (c *Column) String() string { return types.QuoteIdentifier(c.Name) }

// Field is a field of a ROW value, by index.
type Field struct {
	X     Expr
	Index int
	Name  string
	T     types.Type
}

// Type implements Expr.
func (f *Field) Type() types.Type { return f.T }

func (f *Field) String() string { return f.X.String() + "." + types.QuoteIdentifier(f.Name) }

// Literal is a constant. V is the boxed value (types.Value), nil for NULL.
type Literal struct {
	V types.Value
	T types.Type
	// Text is the literal as written, for printing.
	Text string
}

// Type implements Expr.
func (l *Literal) Type() types.Type { return l.T }

func (l *Literal) String() string {
	if l.Text != "" {
		return l.Text
	}
	if l.V == nil {
		return "NULL"
	}
	s, err := types.FormatValue(l.T, l.V, nil)
	if err != nil {
		return fmt.Sprint(l.V)
	}
	if l.T.IsString() {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return s
}

// Call is the call of a built-in or user-defined scalar function, or of an
// operator (Name is then the operator: "+", "=", "AND", "IS NULL", ...).
type Call struct {
	Name string
	Args []Expr
	T    types.Type
	// Fn compiles the call from its compiled arguments.
	Fn *Func
}

// Type implements Expr.
func (c *Call) Type() types.Type { return c.T }

func (c *Call) String() string {
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = a.String()
	}
	switch {
	case c.Fn != nil && c.Fn.Infix && len(args) == 2:
		return "(" + args[0] + " " + c.Name + " " + args[1] + ")"
	case c.Fn != nil && c.Fn.Postfix && len(args) == 1:
		return "(" + args[0] + " " + c.Name + ")"
	case c.Fn != nil && c.Fn.Prefix && len(args) == 1:
		return "(" + c.Name + " " + args[0] + ")"
	}
	return c.Name + "(" + strings.Join(args, ", ") + ")"
}

// Cast converts X to T: CAST, or TRY_CAST (Try), which gives NULL where
// CAST fails. The planner also inserts casts for implicit conversions.
type Cast struct {
	X   Expr
	T   types.Type
	Try bool
}

// Type implements Expr.
func (c *Cast) Type() types.Type { return c.T }

func (c *Cast) String() string {
	name := "CAST"
	if c.Try {
		name = "TRY_CAST"
	}
	return name + "(" + c.X.String() + " AS " + c.T.String() + ")"
}

// Case is a searched CASE: the Result of the first When whose Cond is
// TRUE, else Else (NULL if Else is nil).
type Case struct {
	Whens []When
	Else  Expr
	T     types.Type
}

// When is a branch of a Case.
type When struct {
	Cond, Result Expr
}

// Type implements Expr.
func (c *Case) Type() types.Type { return c.T }

func (c *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	for _, w := range c.Whens {
		fmt.Fprintf(&b, " WHEN %s THEN %s", w.Cond, w.Result)
	}
	if c.Else != nil {
		fmt.Fprintf(&b, " ELSE %s", c.Else)
	}
	b.WriteString(" END")
	return b.String()
}

// Walk calls fn on e and then on its children, depth first, while fn
// returns true.
func Walk(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	switch e := e.(type) {
	case *Field:
		Walk(e.X, fn)
	case *Call:
		for _, a := range e.Args {
			Walk(a, fn)
		}
	case *Cast:
		Walk(e.X, fn)
	case *Case:
		for _, w := range e.Whens {
			Walk(w.Cond, fn)
			Walk(w.Result, fn)
		}
		Walk(e.Else, fn)
	}
}

// Columns returns the indexes of the input columns e reads, in order of
// first use.
func Columns(e Expr) []int {
	var out []int
	seen := map[int]bool{}
	Walk(e, func(x Expr) bool {
		if c, ok := x.(*Column); ok && !seen[c.Index] {
			seen[c.Index] = true
			out = append(out, c.Index)
		}
		return true
	})
	return out
}

// Rewrite returns e with every node replaced by fn's result, children
// first; fn returns its argument to keep a node.
func Rewrite(e Expr, fn func(Expr) Expr) Expr {
	if e == nil {
		return nil
	}
	switch x := e.(type) {
	case *Field:
		c := *x
		c.X = Rewrite(x.X, fn)
		e = &c
	case *Call:
		c := *x
		c.Args = make([]Expr, len(x.Args))
		for i, a := range x.Args {
			c.Args[i] = Rewrite(a, fn)
		}
		e = &c
	case *Cast:
		c := *x
		c.X = Rewrite(x.X, fn)
		e = &c
	case *Case:
		c := *x
		c.Whens = make([]When, len(x.Whens))
		for i, w := range x.Whens {
			c.Whens[i] = When{Rewrite(w.Cond, fn), Rewrite(w.Result, fn)}
		}
		c.Else = Rewrite(x.Else, fn)
		e = &c
	}
	return fn(e)
}
