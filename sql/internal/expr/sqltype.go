package expr

import (
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// sqlLengths returns t with the length SQL gives a VARCHAR or VARBINARY
// written without one, at any depth (ROW fields, ARRAY, MULTISET and MAP
// elements): the largest, as Flink's SQL does (its type system's default
// precision), so that `name VARCHAR` in a CREATE TABLE or a CAST is a
// STRING. A type string (types.ParseType, as Flink's type string parser)
// reads VARCHAR alone as VARCHAR(1).
func sqlLengths(t *parser.Type) *parser.Type {
	if t == nil {
		return nil
	}
	c := *t
	switch c.Name {
	case "VARCHAR", "VARBINARY", "CHARACTER VARYING", "CHAR VARYING", "BINARY VARYING":
		if len(c.Params) == 0 {
			c.Params = []int{types.MaxLength}
		}
	}
	c.Elem, c.Key = sqlLengths(t.Elem), sqlLengths(t.Key)
	if len(t.Fields) > 0 {
		c.Fields = make([]*parser.FieldDef, len(t.Fields))
		for i, f := range t.Fields {
			fc := *f
			fc.Type = sqlLengths(f.Type)
			c.Fields[i] = &fc
		}
	}
	return &c
}
