package plan

import (
	"strings"

	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
)

// The clauses this file refuses are those eddy's SQL does not plan yet;
// each error says what to write instead where there is a way.

var aggregateNames = map[string]bool{
	"COUNT": true, "SUM": true, "SUM0": true, "AVG": true, "MIN": true, "MAX": true,
	"STDDEV_POP": true, "STDDEV_SAMP": true, "VAR_POP": true, "VAR_SAMP": true, "STDDEV": true, "VARIANCE": true,
	"COLLECT": true, "LISTAGG": true, "FIRST_VALUE": true, "LAST_VALUE": true,
	"APPROX_COUNT_DISTINCT": true, "APPROX_PERCENTILE": true, "JSON_OBJECTAGG": true, "JSON_ARRAYAGG": true,
	"ARRAY_AGG": true,
}

func isAggregateName(name string) bool { return aggregateNames[name] }

// hasAggregate tells whether a select list or HAVING calls an aggregate
// (outside OVER).
func hasAggregate(n *parser.Select) bool {
	found := false
	for _, it := range n.Items {
		if it.Expr != nil {
			walkCalls(it.Expr, func(c *parser.FuncCall) {
				if c.Over == nil && c.OverName == nil && isAggregateName(strings.ToUpper(c.Name.Last().Name)) {
					found = true
				}
			})
		}
	}
	return found
}

// hasOver tells whether a select list calls a function with OVER.
func hasOver(n *parser.Select) bool {
	found := false
	for _, it := range n.Items {
		if it.Expr != nil {
			walkCalls(it.Expr, func(c *parser.FuncCall) {
				if c.Over != nil || c.OverName != nil {
					found = true
				}
			})
		}
	}
	return found
}

// walkCalls calls fn on every function call in e, outside subqueries.
func walkCalls(e parser.Expr, fn func(*parser.FuncCall)) {
	walkSyntax(e, func(n parser.Node) bool {
		switch n := n.(type) {
		case *parser.FuncCall:
			fn(n)
		case *parser.JSONFunc:
			if c, ok := expr.JSONAggregateCall(n); ok {
				fn(c)
			}
		case *parser.Subquery, *parser.Exists, *parser.InQuery:
			return false
		}
		return true
	})
}
