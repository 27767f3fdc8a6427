package plan

import (
	"strings"

	"github.com/eddystream/eddy/sql/parser"
)

// over plans a SELECT whose select list calls functions with OVER. A
// ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) filtered by the
// enclosing query is Flink's Top-N or deduplication pattern (rank.go);
// every other OVER call is an OVER aggregation (overAggregate).
func (q *queryPlanner) over(n *parser.Select, in Rel, sc *scope, cond any) (Rel, error) {
	var rowNumbers, others []*parser.FuncCall
	for _, it := range n.Items {
		if it.Expr == nil {
			continue
		}
		walkCalls(it.Expr, func(c *parser.FuncCall) {
			if c.Over == nil && c.OverName == nil {
				return
			}
			switch strings.ToUpper(c.Name.Last().Name) {
			case "ROW_NUMBER", "RANK", "DENSE_RANK":
				rowNumbers = append(rowNumbers, c)
			default:
				others = append(others, c)
			}
		})
	}
	if len(others) > 0 || len(rowNumbers) == 0 {
		if len(rowNumbers) > 0 {
			return nil, q.errorf(rowNumbers[0].Pos, "%s() OVER cannot be mixed with OVER aggregates in one SELECT: rank in a subquery of its own", strings.ToUpper(rowNumbers[0].Name.Last().Name))
		}
		return q.overAggregate(n, in, sc, cond)
	}
	return q.rankOver(n, in, sc, cond, rowNumbers)
}
