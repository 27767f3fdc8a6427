package expr

import "github.com/eddystream/eddy/sql/parser"

// JSONAggregateCall returns the aggregate call that JSON_ARRAYAGG or
// JSON_OBJECTAGG stands for, and false for other JSON functions. Its one
// argument is the JSON of each row's part of the result, made by the
// scalar function with the same clauses: JSON_ARRAY(value ON NULL) for
// JSON_ARRAYAGG (ABSENT ON NULL by default), JSON_OBJECT(KEY key VALUE
// value ON NULL) for JSON_OBJECTAGG (NULL ON NULL by default). The
// aggregate joins their elements or members.
func JSONAggregateCall(n *parser.JSONFunc) (*parser.FuncCall, bool) {
	inner := &parser.JSONFunc{Pos: n.Pos, OnNull: n.OnNull}
	switch n.Name {
	case "JSON_ARRAYAGG":
		inner.Name, inner.Args = "JSON_ARRAY", n.Args
		if inner.OnNull == "" {
			inner.OnNull = "ABSENT"
		}
	case "JSON_OBJECTAGG":
		inner.Name, inner.Pairs = "JSON_OBJECT", n.Pairs
		if inner.OnNull == "" {
			inner.OnNull = "NULL"
		}
	default:
		return nil, false
	}
	name := &parser.ObjectName{Pos: n.Pos, Parts: []*parser.Ident{{Pos: n.Pos, Name: n.Name}}}
	return &parser.FuncCall{Pos: n.Pos, Name: name, Args: []parser.Expr{inner}}, true
}

// JSONAggregateText is the SQL of an aggregate call that JSONAggregateCall
// made, as its JSON_ARRAYAGG or JSON_OBJECTAGG; "" for other calls.
func JSONAggregateText(c *parser.FuncCall) string {
	if len(c.Args) != 1 {
		return ""
	}
	inner, ok := c.Args[0].(*parser.JSONFunc)
	if !ok {
		return ""
	}
	name := map[string]string{"JSON_ARRAY": "JSON_ARRAYAGG", "JSON_OBJECT": "JSON_OBJECTAGG"}[inner.Name]
	if name == "" {
		return ""
	}
	return (&parser.JSONFunc{Pos: c.Pos, Name: name, Args: inner.Args, Pairs: inner.Pairs, OnNull: inner.OnNull}).String()
}
