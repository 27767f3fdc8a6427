package plan

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// Keyed operators after a join on the same key.
//
// A regular join keyed by one integer column (intJoinKeys) sends each row
// to the subtask its int64 key hashes to, and emits its results there. An
// operator after it keyed by a column of the result that holds that key
// would send every result to the subtask it is in already. It reads the
// join's stream reinterpreted as keyed instead (eddy.ReinterpretAsKeyed):
// no exchange, the operator chained to the join, and, when it keeps
// nothing of the rows it is given (a top-N copying what it keeps), the
// join writes its results into memory it uses again for each batch.

// intKeyCols are the columns of a stream's rows that hold the int64 key
// by which its rows are in their subtasks (builder.intKeyed).
type intKeyCols map[int]bool

// joinIntKeyCols returns the columns of the results of a join of kind,
// keyed by the int64 value of its one equi-key (intJoinKeys), that hold
// the key: the key columns of the sides that are never padded with NULLs,
// where the projections projs of the results (nil for the sides'
// columns, left then right) keep them. split is the number of left
// columns.
func joinIntKeyCols(k equiKey, kind eddy.JoinKind, split int, projs []expr.Expr) intKeyCols {
	var in []int
	if c, ok := k.left.(*expr.Column); ok && (kind == eddy.InnerJoin || kind == eddy.LeftJoin) {
		in = append(in, c.Index)
	}
	if c, ok := k.right.(*expr.Column); ok && (kind == eddy.InnerJoin || kind == eddy.RightJoin) {
		in = append(in, split+c.Index)
	}
	out := intKeyCols{}
	for o, p := range projs {
		if c, ok := p.(*expr.Column); ok {
			for _, i := range in {
				if c.Index == i {
					out[o] = true
				}
			}
		}
	}
	if projs == nil {
		for _, i := range in {
			out[i] = true
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// intKeyedBy returns s keyed by the int64 value of column cols[0] without
// an exchange, if the rows of built, the stream s is made from (by
// AsChangelog), are in the subtasks of that key already (builder.intKeyed).
func (b *builder) intKeyedBy(built, s *eddy.Stream[Rec], rt *types.RowType, cols []int) (*eddy.KeyedStream[int64, Rec], bool) {
	if len(cols) != 1 || !b.intKeyed[built][cols[0]] || !slotKey(rt.FieldType(cols[0])) {
		return nil, false
	}
	i := cols[0]
	return eddy.ReinterpretAsKeyed(s, func(c Rec) int64 { return c.Row.Int64(i) }), true
}

// regularJoinBelow reports whether r is a regular join, or a projection
// of one (which the join computes itself).
func regularJoinBelow(r Rel) bool {
	if c, ok := r.(*CalcRel); ok && c.Cond == nil {
		r = c.Input
	}
	_, ok := r.(*RegularJoinRel)
	return ok
}
