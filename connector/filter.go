package connector

import (
	"fmt"

	"github.com/eddystream/eddy/sql/types"
)

// CompareOp is the comparison of a Predicate.
type CompareOp uint8

// The comparisons a Predicate makes. The six comparisons with a constant
// follow SQL: a NULL field satisfies none of them. IsNull and IsNotNull
// take no constant.
const (
	OpEqual          CompareOp = iota + 1 // field = constant
	OpNotEqual                            // field <> constant
	OpLess                                // field < constant
	OpLessOrEqual                         // field <= constant
	OpGreater                             // field > constant
	OpGreaterOrEqual                      // field >= constant
	OpIsNull                              // field IS NULL
	OpIsNotNull                           // field IS NOT NULL
)

// String returns the operator as SQL writes it: "=", "<>", "<", "<=",
// ">", ">=", "IS NULL" or "IS NOT NULL".
func (o CompareOp) String() string {
	switch o {
	case OpEqual:
		return "="
	case OpNotEqual:
		return "<>"
	case OpLess:
		return "<"
	case OpLessOrEqual:
		return "<="
	case OpGreater:
		return ">"
	case OpGreaterOrEqual:
		return ">="
	case OpIsNull:
		return "IS NULL"
	case OpIsNotNull:
		return "IS NOT NULL"
	}
	return fmt.Sprintf("CompareOp(%d)", uint8(o))
}

// Predicate is a condition on one field of a table's rows that the planner
// offers a FilterableSource: the field at Path compared with a constant, or
// tested for NULL.
type Predicate struct {
	// Path is the field the predicate tests, as ProjectableSource's paths:
	// the index of a column of the table's rows (Table.RowType(): physical
	// then metadata columns), followed by the indexes of fields of nested
	// ROW values. A path ending inside a ROW that is NULL gives NULL.
	// Paths always refer to the table's rows, never to a projection of
	// them.
	Path []int
	// Op is the comparison.
	Op CompareOp
	// Value is the constant, boxed as types.Value does for the type of the
	// field at Path (an INT field compares with an int32, a VARCHAR with a
	// string, a TIMESTAMP with a types.Timestamp), never nil; nil for
	// OpIsNull and OpIsNotNull.
	Value types.Value
}

// String renders the predicate for messages: the path in brackets, the
// operator and the constant ("[0] = 2", "[3 2] > 100", "[1] IS NULL").
func (p Predicate) String() string {
	if p.Op == OpIsNull || p.Op == OpIsNotNull {
		return fmt.Sprintf("%v %s", p.Path, p.Op)
	}
	return fmt.Sprintf("%v %s %v", p.Path, p.Op, p.Value)
}

// PathType returns the type of the field at path in rows of type rt: the
// type of the last field, nullable if any ROW on the way is. It returns
// false if path does not name a field of rt.
func PathType(rt *types.RowType, path []int) (types.Type, bool) {
	if len(path) == 0 || rt == nil {
		return types.Type{}, false
	}
	nullable := false
	cur := rt
	var t types.Type
	for k, i := range path {
		if cur == nil || i < 0 || i >= cur.Len() {
			return types.Type{}, false
		}
		t = cur.FieldType(i)
		if k < len(path)-1 {
			if t.Kind() != types.KindRow {
				return types.Type{}, false
			}
			nullable = nullable || t.IsNullable()
			cur = t.Row()
		}
	}
	if nullable {
		t = t.Nullable()
	}
	return t, true
}

// PathValue returns the value of the field at path of r (of type rt),
// boxed as types.Value does: nil if the field or a ROW on the way is NULL.
func PathValue(rt *types.RowType, r types.Row, path []int) (types.Value, error) {
	if _, ok := PathType(rt, path); !ok {
		return nil, fmt.Errorf("connector: path %v names no field of %s", path, rt)
	}
	cur, row := rt, r
	for _, i := range path[:len(path)-1] {
		if row.IsNull(i) {
			return nil, nil
		}
		nt := cur.FieldType(i).Row()
		row, cur = row.Row(i, nt), nt
	}
	return types.FieldValue(cur, row, path[len(path)-1]), nil
}

// Holds tells whether the predicate holds for the row r of type rt (the
// table's rows): what a source that accepted it must compute, row by row
// or otherwise. A NULL field fails every comparison with a constant. It is
// slow (it boxes values), for tests and reference implementations.
func (p Predicate) Holds(rt *types.RowType, r types.Row) (bool, error) {
	t, ok := PathType(rt, p.Path)
	if !ok {
		return false, fmt.Errorf("connector: predicate %s: the path names no field of %s", p, rt)
	}
	v, err := PathValue(rt, r, p.Path)
	if err != nil {
		return false, err
	}
	switch p.Op {
	case OpIsNull:
		return v == nil, nil
	case OpIsNotNull:
		return v != nil, nil
	}
	if p.Value == nil {
		return false, fmt.Errorf("connector: predicate %s has no constant", p)
	}
	if v == nil {
		return false, nil
	}
	c, err := types.CompareValues(t.Nullable(), v, p.Value)
	if err != nil {
		return false, fmt.Errorf("connector: predicate %s: %w", p, err)
	}
	switch p.Op {
	case OpEqual:
		return c == 0, nil
	case OpNotEqual:
		return c != 0, nil
	case OpLess:
		return c < 0, nil
	case OpLessOrEqual:
		return c <= 0, nil
	case OpGreater:
		return c > 0, nil
	case OpGreaterOrEqual:
		return c >= 0, nil
	}
	return false, fmt.Errorf("connector: predicate %s: unknown operator", p)
}

// FilterableSource is implemented by sources of tables that can leave out
// the rows that fail some conditions before emitting them, so that a query
// with a WHERE clause does not pay for rows it drops (Flink's
// SupportsFilterPushDown). The planner offers the conjuncts of a WHERE
// clause over the table that are simple comparisons of a field with a
// constant (Predicate); the source accepts those it can evaluate, and the
// planner evaluates the others after the source.
//
// The filter runs in the reader: a row the source leaves out is never
// emitted, so the table's watermark strategy never sees it (its timestamp
// does not advance the watermark), as in Flink, where a pushed filter runs
// in the source before the watermark assigner.
//
// Composition: the planner calls ApplyFilters on the source OpenTableSource
// returns, then ProjectFields on the source ApplyFilters returns (if it
// implements ProjectableSource), then TransientRows on the result (if it
// implements TransientRowSource). A source returned by ApplyFilters should
// therefore implement ProjectableSource and TransientRowSource whenever the
// source it came from does. A source returned by ProjectFields may
// implement FilterableSource too; its predicates' paths still refer to the
// table's rows, not to the projected ones, so that the two orders give the
// same rows. connectortest.RunFilter checks both orders.
type FilterableSource interface {
	// ApplyFilters returns a source that emits only the rows for which
	// every accepted predicate holds (Predicate.Holds), and the indexes in
	// predicates of those it accepted, in increasing order. It must filter
	// exactly so: the planner drops the accepted predicates from its own
	// filter. A predicate it does not accept it ignores; if it accepts
	// none, it returns (nil, nil) and the planner keeps the source it had.
	// The source returned emits the same row type as the source it came
	// from. ApplyFilters does not change the source it is called on.
	ApplyFilters(predicates []Predicate) (Source[TableRecord], []int)
}
