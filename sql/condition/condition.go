// Package condition compiles SQL conditions in Flink's dialect over the
// rows of one type, for code that filters rows outside a query: what a
// WHERE clause keeps.
package condition

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// Condition is a compiled SQL condition over rows of one type: what a
// WHERE clause keeps. It is safe for concurrent use.
type Condition struct {
	src  string
	eval func(types.Row) (bool, bool)
}

// Compile compiles where, a SQL boolean expression in Flink's
// dialect over the columns of rt ("amount > 100 AND region IN ('eu',
// 'us')"), with the built-in scalar functions. Errors give the line, the
// column and a caret, and name the columns there are.
func Compile(rt *types.RowType, where string) (*Condition, error) {
	if strings.TrimSpace(where) == "" {
		return nil, fmt.Errorf("the condition is empty: give a SQL boolean expression over the columns %s", strings.Join(rt.Names(), ", "))
	}
	n, err := parser.ParseExpr(where)
	if err != nil {
		return nil, err
	}
	a := &expr.Analyzer{Src: where, Scope: rowScope{rt}, Funcs: expr.Builtins(),
		Subquery: func(n parser.Expr) (expr.Expr, error) {
			return nil, fmt.Errorf("a condition cannot hold a subquery")
		}}
	e, err := a.Expr(n)
	if err != nil {
		return nil, err
	}
	if k := e.Type().Kind(); k != types.KindBoolean && k != types.KindNull {
		return nil, fmt.Errorf("the condition %q is of type %s, not BOOLEAN", where, e.Type())
	}
	ev, err := expr.Compile(e)
	if err != nil {
		return nil, fmt.Errorf("compiling the condition %q: %w", where, err)
	}
	c := &Condition{src: where}
	if ev.Bool != nil {
		c.eval = ev.Bool
	} else {
		c.eval = func(types.Row) (bool, bool) { return false, true } // NULL
	}
	return c, nil
}

// String returns the condition as written.
func (c *Condition) String() string { return c.src }

// Holds tells whether the condition is TRUE for r (a row of the type it was
// compiled for); NULL, as in a WHERE clause, does not hold. An error of
// evaluation (an overflow, a bad cast) names the expression.
func (c *Condition) Holds(r types.Row) (ok bool, err error) {
	err = expr.Catch(func() {
		v, null := c.eval(r)
		ok = v && !null
	})
	return ok, err
}

// rowScope resolves the columns of a condition: those of one row type,
// and fields of its ROW columns after them.
type rowScope struct{ rt *types.RowType }

func (s rowScope) Column(parts []string) (expr.Expr, int, error) {
	i, ok := s.rt.Index(parts[0])
	if !ok {
		for _, n := range s.rt.Names() {
			if strings.EqualFold(n, parts[0]) {
				return nil, 0, fmt.Errorf("unknown column %s (names are case-sensitive: did you mean %s?)", parts[0], n)
			}
		}
		return nil, 0, fmt.Errorf("unknown column %s; the columns are %s", parts[0], strings.Join(s.rt.Names(), ", "))
	}
	f := s.rt.Field(i)
	return &expr.Column{Index: i, Name: f.Name, T: f.Type}, 1, nil
}
