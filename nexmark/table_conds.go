package nexmark

import (
	"strings"
	"unsafe"

	"github.com/eddystream/eddy/connector"
)

// fieldCond is a comparison of an integer field of one kind of event with
// a constant, which the source of a table tests before writing a row
// (tableSource.ApplyFilters): events of the other kinds have the field
// NULL, which no comparison holds for.
type fieldCond struct {
	off  uintptr
	kind EventType
	op   connector.CompareOp
	c    int64
}

// holds tells whether the comparison holds for e.
func (c *fieldCond) holds(e *Event) bool {
	if e.Type != c.kind {
		return false
	}
	v := *(*int64)(unsafe.Add(unsafe.Pointer(e), c.off))
	switch c.op {
	case connector.OpEqual:
		return v == c.c
	case connector.OpNotEqual:
		return v != c.c
	case connector.OpLess:
		return v < c.c
	case connector.OpLessOrEqual:
		return v <= c.c
	case connector.OpGreater:
		return v > c.c
	case connector.OpGreaterOrEqual:
		return v >= c.c
	}
	return false
}

// fieldCondOf returns the comparison of p if it compares a BIGINT field of
// the person, auction or bid column with a constant.
func (s *tableSource) fieldCondOf(p connector.Predicate) (fieldCond, bool) {
	if len(p.Path) != 2 || p.Path[0] < 0 || p.Path[0] >= s.t.Schema.Len() {
		return fieldCond{}, false
	}
	col := s.t.Schema.Field(p.Path[0])
	er, ok := eventRows[strings.ToLower(col.Name)]
	if !ok || p.Path[1] < 0 || p.Path[1] >= col.Type.Row().Len() {
		return fieldCond{}, false
	}
	ef, ok := er.fields[strings.ToLower(col.Type.Row().Field(p.Path[1]).Name)]
	if !ok || ef.class != classInteger {
		return fieldCond{}, false
	}
	c, ok := p.Value.(int64)
	if !ok {
		return fieldCond{}, false
	}
	switch p.Op {
	case connector.OpEqual, connector.OpNotEqual, connector.OpLess, connector.OpLessOrEqual, connector.OpGreater, connector.OpGreaterOrEqual:
		return fieldCond{off: ef.off, kind: er.kind, op: p.Op, c: c}, true
	}
	return fieldCond{}, false
}
