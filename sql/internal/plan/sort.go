package plan

import (
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// orderLimit plans ORDER BY ... LIMIT n [OFFSET m] of a query as Flink
// plans a streaming sort with a limit: a global Top-N (RankRel described as
// SortLimit; LIMIT without ORDER BY keeps the first rows to arrive). ORDER
// BY without LIMIT sorts an unbounded stream, which only a temporal sort
// can do: ascending on the rowtime attribute first (TemporalSortRel, in
// sort_temporal.go); other orders are refused, as Flink refuses them.
func (q *queryPlanner) orderLimit(n *parser.Query, r Rel) (Rel, error) {
	rt := r.Schema()
	sc := &scope{}
	sc.add("", rt)
	a := q.analyzer(sc)
	var keys []types.SortKey
	for _, o := range n.OrderBy {
		col := -1
		if k, ok := intLiteral(o.Expr); ok {
			if k < 1 || k > int64(rt.Len()) {
				return nil, q.errorf(o.Pos, "ORDER BY %d: the query has columns 1 to %d", k, rt.Len())
			}
			col = int(k - 1)
		} else {
			e, err := a.Expr(o.Expr)
			if err != nil {
				return nil, err
			}
			c, ok := e.(*expr.Column)
			if !ok {
				return nil, q.errorf(o.Pos, "ORDER BY %s: order by a column of the query's result (select the expression with an alias and order by the alias)", o.Expr)
			}
			col = c.Index
		}
		keys = append(keys, types.SortKey{Field: col, Descending: o.Desc, Nulls: nullOrder(o.Nulls)})
	}
	limit, offset := int64(-1), int64(0)
	if n.Limit != nil {
		k, ok := intLiteral(n.Limit)
		if !ok || k < 1 {
			return nil, q.errorf(n.Limit.Position(), "LIMIT takes a constant count of at least 1")
		}
		limit = k
	}
	if n.Offset != nil {
		k, ok := intLiteral(n.Offset)
		if !ok || k < 0 {
			return nil, q.errorf(n.Offset.Position(), "OFFSET takes a constant count")
		}
		offset = k
	}
	if limit < 0 {
		p := r.Props()
		switch {
		case n.Offset != nil:
			return nil, q.errorf(n.Offset.Position(), "OFFSET without LIMIT is not supported on an unbounded stream: add LIMIT")
		case keys[0].Field == p.Rowtime && p.Rowtime >= 0 && !keys[0].Descending:
			if !p.Mode.IsInsertOnly() {
				return nil, q.errorf(n.OrderBy[0].Pos, "TemporalSort doesn't support consuming update changes which is produced by node %s: ORDER BY the rowtime attribute %s sorts an insert-only stream, and its input is a %s stream", producer(r, p.Mode), rt.Field(p.Rowtime).Name, p.Mode.Describe())
			}
			return &TemporalSortRel{Input: r, Keys: keys}, nil
		case keys[0].Field == p.Rowtime && p.Rowtime >= 0:
			return nil, q.errorf(n.OrderBy[0].Pos, "Sort on a non-time-attribute field is not supported: ORDER BY the rowtime attribute %s DESC cannot be sorted on an unbounded stream, whose rows come in ascending time; order by it ascending, or add LIMIT for a Top-N", rt.Field(p.Rowtime).Name)
		case keys[0].Field == p.Proctime && p.Proctime >= 0 && !keys[0].Descending:
			if !p.Mode.IsInsertOnly() {
				return nil, q.errorf(n.OrderBy[0].Pos, "TemporalSort doesn't support consuming update changes which is produced by node %s: ORDER BY the processing-time attribute %s sorts an insert-only stream, and its input is a %s stream", producer(r, p.Mode), rt.Field(p.Proctime).Name, p.Mode.Describe())
			}
			return &TemporalSortRel{Input: r, Keys: keys}, nil
		case keys[0].Field == p.Proctime && p.Proctime >= 0:
			return nil, q.errorf(n.OrderBy[0].Pos, "Sort on a non-time-attribute field is not supported: ORDER BY the processing-time attribute %s DESC cannot be sorted on an unbounded stream, whose rows come in ascending time; order by it ascending, or add LIMIT for a Top-N", rt.Field(p.Proctime).Name)
		}
		return nil, q.errorf(n.OrderBy[0].Pos, "Sort on a non-time-attribute field is not supported: an unbounded stream can only be sorted ascending on its rowtime attribute first; add LIMIT for a Top-N")
	}
	if limit > 1<<31-1-offset {
		return nil, q.errorf(n.Limit.Position(), "LIMIT %d: a streaming Top-N keeps at most %d rows", limit, 1<<31-1)
	}
	if isUpsertMode(r.Props().Mode) {
		return nil, q.errorf(n.Pos, "ORDER BY ... LIMIT reads an upsert stream (%s), which it does not take yet", r.Props().Mode.Describe())
	}
	rank := newRankRel(r, nil, keys, offset+1, offset+limit, false, "")
	rank.SortLimit = true
	return rank, nil
}
