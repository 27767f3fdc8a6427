package parser

// parseJSON parses the JSON functions with clauses of their own:
//
//	JSON_VALUE(v, path [RETURNING type] [behavior ON EMPTY] [behavior ON ERROR])
//	JSON_QUERY(v, path [RETURNING type] [wrapper] [behavior ON EMPTY] [behavior ON ERROR])
//	JSON_EXISTS(v, path [behavior ON ERROR])
//	JSON_OBJECT([[KEY] k VALUE v, ...] [NULL|ABSENT ON NULL])
//	JSON_OBJECTAGG([KEY] k VALUE v [NULL|ABSENT ON NULL])
//	JSON_ARRAY([v, ...] [NULL|ABSENT ON NULL])
//	JSON_ARRAYAGG(v [ORDER BY ...] [NULL|ABSENT ON NULL])
func (p *parser) parseJSON() Expr {
	t := p.advance()
	p.expectOp("(")
	f := &JSONFunc{Pos: t.pos, Name: t.upper}
	switch f.Name {
	case "JSON_VALUE", "JSON_QUERY", "JSON_EXISTS":
		f.Args = []Expr{p.parseExpr()}
		p.expectOp(",")
		f.Args = append(f.Args, p.parseExpr())
		if f.Name != "JSON_EXISTS" && p.acceptKw("RETURNING") {
			f.Returning = p.parseType()
		}
		if f.Name == "JSON_QUERY" {
			f.Wrapper = p.jsonWrapper()
		}
		p.jsonBehaviors(f)
	case "JSON_OBJECT":
		if !p.isOp(")") && !p.atJSONOnNull() {
			f.Pairs = append(f.Pairs, p.jsonKeyValue())
			for p.acceptOp(",") {
				f.Pairs = append(f.Pairs, p.jsonKeyValue())
			}
		}
		f.OnNull = p.jsonOnNull()
	case "JSON_OBJECTAGG":
		f.Pairs = []*JSONKeyValue{p.jsonKeyValue()}
		f.OnNull = p.jsonOnNull()
	case "JSON_ARRAY":
		if !p.isOp(")") && !p.atJSONOnNull() {
			f.Args = p.exprList()
		}
		f.OnNull = p.jsonOnNull()
	case "JSON_ARRAYAGG":
		f.Args = []Expr{p.parseExpr()}
		if p.acceptKws("ORDER", "BY") {
			f.OrderBy = p.orderItems()
		}
		f.OnNull = p.jsonOnNull()
	}
	p.expectOp(")")
	return f
}

// jsonKeyValue parses [KEY] key VALUE value.
func (p *parser) jsonKeyValue() *JSONKeyValue {
	t := p.tok()
	kv := &JSONKeyValue{Pos: t.pos}
	// KEY is a keyword unless it is itself the key (KEY VALUE v).
	if p.isKw("KEY") && !p.isKwAt(1, "VALUE") {
		p.i++
		kv.KeyWord = true
	}
	kv.Key = p.parseExpr()
	p.expectKw("VALUE")
	kv.Value = p.parseExpr()
	return kv
}

func (p *parser) atJSONOnNull() bool {
	return (p.isKw("NULL") || p.isKw("ABSENT")) && p.isKwAt(1, "ON") && p.isKwAt(2, "NULL")
}

// jsonOnNull parses an optional NULL ON NULL or ABSENT ON NULL.
func (p *parser) jsonOnNull() string {
	if !p.atJSONOnNull() {
		p.note("NULL ON NULL")
		p.note("ABSENT ON NULL")
		return ""
	}
	w := p.advance().upper
	p.i += 2
	return w
}

// jsonWrapper parses JSON_QUERY's optional wrapper clause:
// WITHOUT [ARRAY] WRAPPER | WITH [CONDITIONAL|UNCONDITIONAL] [ARRAY] WRAPPER.
func (p *parser) jsonWrapper() string {
	var w string
	switch {
	case p.acceptKw("WITHOUT"):
		w = "WITHOUT"
	case p.acceptKw("WITH"):
		w = "WITH"
		if p.acceptKw("CONDITIONAL") {
			w += " CONDITIONAL"
		} else if p.acceptKw("UNCONDITIONAL") {
			w += " UNCONDITIONAL"
		}
	default:
		return ""
	}
	if p.acceptKw("ARRAY") {
		w += " ARRAY"
	}
	p.expectKw("WRAPPER")
	return w + " WRAPPER"
}

// jsonBehaviors parses the ON EMPTY and ON ERROR clauses of JSON_VALUE,
// JSON_QUERY and JSON_EXISTS, in that order.
func (p *parser) jsonBehaviors(f *JSONFunc) {
	var kinds []string
	switch f.Name {
	case "JSON_VALUE":
		kinds = []string{"NULL", "ERROR", "DEFAULT"}
	case "JSON_QUERY":
		kinds = []string{"NULL", "ERROR", "EMPTY"}
	default:
		kinds = []string{"TRUE", "FALSE", "UNKNOWN", "ERROR"}
	}
	for {
		t := p.tok()
		kind := ""
		for _, k := range kinds {
			if p.atKw(k) {
				kind = k
				break
			}
		}
		if kind == "" {
			return
		}
		p.i++
		b := &JSONBehavior{Pos: t.pos, Kind: kind}
		switch kind {
		case "DEFAULT":
			b.Default = p.parseExpr()
		case "EMPTY":
			if p.acceptKw("ARRAY") {
				b.Kind = "EMPTY ARRAY"
			} else {
				p.expectKw("OBJECT")
				b.Kind = "EMPTY OBJECT"
			}
		}
		p.expectKw("ON")
		if f.Name != "JSON_EXISTS" && f.OnEmpty == nil && f.OnError == nil && p.acceptKw("EMPTY") {
			f.OnEmpty = b
			continue
		}
		if f.OnError == nil {
			p.expectKw("ERROR")
			f.OnError = b
			return
		}
		p.fail()
	}
}
