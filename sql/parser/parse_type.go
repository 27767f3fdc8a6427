package parser

// parseType parses a data type with its nullability, and the postfix
// collection forms T ARRAY and T MULTISET.
func (p *parser) parseType() *Type {
	p.enter()
	defer p.leave()
	t := p.baseType()
	p.nullability(t)
	for {
		k := p.tok()
		if !p.atKw("ARRAY") && !p.atKw("MULTISET") {
			return t
		}
		p.i++
		t = &Type{Pos: t.Pos, Name: k.upper, Elem: t}
		p.nullability(t)
	}
}

// nullability parses an optional NOT NULL or NULL after a type. A NULL that
// starts a JSON clause (NULL ON ...) is left alone.
func (p *parser) nullability(t *Type) {
	switch {
	case p.isKw("NOT") && p.isKwAt(1, "NULL"):
		p.i += 2
		t.NotNull = true
	case p.isKw("NULL") && !p.isKwAt(1, "ON"):
		p.i++
	default:
		p.note("NOT NULL")
	}
}

// typeNames are the built-in type names that take no parameters, or
// optional integer ones (at most the given count).
var typeNames = map[string]int{
	"BOOLEAN": 0, "TINYINT": 0, "SMALLINT": 0, "INT": 0, "INTEGER": 0,
	"BIGINT": 0, "FLOAT": 0, "REAL": 0, "DATE": 0, "STRING": 0, "BYTES": 0,
	"DECIMAL": 2, "DEC": 2, "NUMERIC": 2, "VARCHAR": 1, "VARBINARY": 1,
	"TIMESTAMP_LTZ": 1,
}

func (p *parser) baseType() *Type {
	tk := p.tok()
	if tk.kind == tokQuotedIdent {
		return &Type{Pos: tk.pos, Named: p.objectName("a type name")}
	}
	if tk.kind != tokIdent {
		p.fail("a data type")
	}
	t := &Type{Pos: tk.pos, Name: tk.upper}
	if n, ok := typeNames[tk.upper]; ok {
		p.i++
		if n > 0 {
			t.Params = p.optParams(n)
		}
		return t
	}
	switch tk.upper {
	case "DOUBLE":
		p.i++
		if p.acceptKw("PRECISION") {
			t.Name = "DOUBLE PRECISION"
		}
	case "CHAR", "CHARACTER", "BINARY":
		p.i++
		if p.acceptKw("VARYING") {
			t.Name += " VARYING"
		}
		t.Params = p.optParams(1)
	case "TIME", "TIMESTAMP":
		p.i++
		t.Params = p.optParams(1)
		switch {
		case p.isKw("WITHOUT") && p.isKwAt(1, "TIME"):
			p.i += 2
			p.expectKw("ZONE")
			t.Zone = "WITHOUT TIME ZONE"
		case p.isKw("WITH") && p.isKwAt(1, "LOCAL"):
			p.i += 2
			p.expectKw("TIME")
			p.expectKw("ZONE")
			t.Zone = "WITH LOCAL TIME ZONE"
		case p.isKw("WITH") && p.isKwAt(1, "TIME"):
			p.i += 2
			p.expectKw("ZONE")
			t.Zone = "WITH TIME ZONE"
		}
	case "INTERVAL":
		p.i++
		t.Interval = p.intervalQualifier()
	case "ARRAY", "MULTISET":
		p.i++
		p.expectOp("<")
		t.Elem = p.parseType()
		p.expectOp(">")
	case "MAP":
		p.i++
		p.expectOp("<")
		t.Key = p.parseType()
		p.expectOp(",")
		t.Elem = p.parseType()
		p.expectOp(">")
	case "ROW":
		p.i++
		t.Fields = p.rowFields()
	case "RAW":
		p.i++
		p.expectOp("(")
		t.RawArgs = []*StringLit{p.stringLit("a class name string")}
		if p.acceptOp(",") {
			t.RawArgs = append(t.RawArgs, p.stringLit("a serializer snapshot string"))
		}
		p.expectOp(")")
	case "NULL":
		p.i++
	default:
		if reserved[tk.upper] {
			p.fail("a data type")
		}
		t.Name = ""
		t.Named = p.objectName("a type name")
	}
	return t
}

// rowFields parses <name type ['comment'], ...> or (name type, ...).
func (p *parser) rowFields() []*FieldDef {
	closer := ">"
	switch {
	case p.acceptOp("<>"):
		return nil
	case p.acceptOp("<"):
	case p.acceptOp("("):
		closer = ")"
	default:
		p.fail()
	}
	var fs []*FieldDef
	if p.acceptOp(closer) {
		return nil
	}
	for {
		name := p.ident("a field name")
		f := &FieldDef{Pos: name.Pos, Name: name, Type: p.parseType()}
		if p.tok().kind == tokString {
			f.Comment = p.stringLit("")
		} else {
			p.note("a comment string")
		}
		fs = append(fs, f)
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(closer)
	return fs
}
