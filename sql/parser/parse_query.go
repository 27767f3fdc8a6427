package parser

// parseQuery parses [WITH ...] body [ORDER BY ...] [LIMIT ...] [OFFSET ...]
// [FETCH ...].
func (p *parser) parseQuery() *Query {
	p.enter()
	defer p.leave()
	q := &Query{Pos: p.tok().pos}
	if p.acceptKw("WITH") {
		for {
			name := p.ident("a name for the WITH query")
			cte := &CTE{Pos: name.Pos, Name: name}
			if p.isOp("(") {
				cte.Columns = p.parenIdentList("a column name")
			}
			p.expectKw("AS")
			p.expectOp("(")
			cte.Query = p.parseQuery()
			p.expectOp(")")
			q.With = append(q.With, cte)
			if !p.acceptOp(",") {
				break
			}
		}
	}
	q.Body = p.parseSetExpr(1)
	if p.acceptKws("ORDER", "BY") {
		q.OrderBy = p.orderItems()
	}
	p.limitClauses(q)
	return q
}

// limitClauses parses [LIMIT n|ALL] [OFFSET n [ROW|ROWS]]
// [FETCH FIRST|NEXT [n] ROW|ROWS ONLY].
func (p *parser) limitClauses(q *Query) {
	if p.acceptKw("LIMIT") {
		if !p.acceptKw("ALL") {
			q.Limit = p.parseExprPrec(precAdd)
		}
	}
	if p.acceptKw("OFFSET") {
		q.Offset = p.parseExprPrec(precAdd)
		if !p.acceptKw("ROWS") {
			p.acceptKw("ROW")
		}
	}
	if q.Limit == nil && p.acceptKw("FETCH") {
		if !p.acceptKw("FIRST") {
			p.expectKw("NEXT")
		}
		if !p.isKw("ROW") && !p.isKw("ROWS") {
			q.Limit = p.parseExprPrec(precAdd)
		} else {
			q.Limit = &NumberLit{Pos: p.tok().pos, Text: "1"}
		}
		if !p.acceptKw("ROWS") {
			p.expectKw("ROW")
		}
		p.expectKw("ONLY")
	}
}

// setOpPrec returns the level of the set operator at the current token:
// INTERSECT binds tighter than UNION and EXCEPT. 0 if there is none.
func (p *parser) setOpPrec() (SetOpKind, int) {
	switch {
	case p.atKw("UNION"):
		return Union, 1
	case p.atKw("EXCEPT"), p.isKw("MINUS"):
		return Except, 1
	case p.atKw("INTERSECT"):
		return Intersect, 2
	}
	return 0, 0
}

// parseSetExpr parses query terms joined by set operators of level >= min.
func (p *parser) parseSetExpr(min int) QueryBody {
	left := p.parseQueryPrimary()
	for {
		op, prec := p.setOpPrec()
		if prec == 0 || prec < min {
			return left
		}
		t := p.advance()
		s := &SetOp{Pos: t.pos, Op: op, Left: left}
		if p.acceptKw("ALL") {
			s.All = true
		} else {
			p.acceptKw("DISTINCT")
		}
		s.Right = p.parseSetExpr(prec + 1)
		left = s
	}
}

func (p *parser) parseQueryPrimary() QueryBody {
	switch {
	case p.atKw("SELECT"):
		return p.parseSelect()
	case p.atKw("VALUES"):
		return p.parseValues()
	case p.atOp("("):
		p.i++
		q := p.parseQuery()
		p.expectOp(")")
		return q
	}
	p.fail()
	return nil
}

func (p *parser) parseValues() *Values {
	t := p.advance()
	v := &Values{Pos: t.pos}
	for {
		v.Rows = append(v.Rows, p.valuesRow())
		if !p.acceptOp(",") {
			return v
		}
	}
}

// valuesRow parses (a, b, ...), ROW(a, b, ...) or a single expression.
func (p *parser) valuesRow() []Expr {
	if p.isOp("(") || (p.isKw("ROW") && p.isOpAt(1, "(")) {
		if p.isKw("ROW") {
			p.i++
		}
		p.i++
		var row []Expr
		if !p.isOp(")") {
			row = p.exprList()
		}
		p.expectOp(")")
		return row
	}
	return []Expr{p.parseExpr()}
}

func (p *parser) parseSelect() *Select {
	t := p.advance()
	s := &Select{Pos: t.pos, Hints: p.hints()}
	if p.acceptKw("DISTINCT") {
		s.Distinct = true
	} else {
		p.acceptKw("ALL")
	}
	s.Items = []*SelectItem{p.selectItem()}
	for p.acceptOp(",") {
		s.Items = append(s.Items, p.selectItem())
	}
	if p.acceptKw("FROM") {
		s.From = p.parseFrom()
	}
	if p.acceptKw("WHERE") {
		s.Where = p.parseExpr()
	}
	if p.acceptKws("GROUP", "BY") {
		s.GroupBy = []Expr{p.groupingElement()}
		for p.acceptOp(",") {
			s.GroupBy = append(s.GroupBy, p.groupingElement())
		}
	}
	if p.acceptKw("HAVING") {
		s.Having = p.parseExpr()
	}
	if p.acceptKw("WINDOW") {
		for {
			name := p.ident("a window name")
			p.expectKw("AS")
			s.Windows = append(s.Windows, &NamedWindow{Pos: name.Pos, Name: name, Spec: p.windowSpec()})
			if !p.acceptOp(",") {
				break
			}
		}
	}
	return s
}

// selectItem parses *, q.*, or expr [[AS] alias].
func (p *parser) selectItem() *SelectItem {
	t := p.tok()
	if p.isOp("*") {
		p.i++
		return &SelectItem{Pos: t.pos, Star: true}
	}
	// q.* : names separated by dots, then .*
	n := 0
	for isIdentTok(p.peek(n)) && p.isOpAt(n+1, ".") {
		if p.isOpAt(n+2, "*") {
			item := &SelectItem{Pos: t.pos, Star: true}
			for k := 0; k <= n; k += 2 {
				tk := p.peek(k)
				item.Qualifier = append(item.Qualifier, &Ident{Pos: tk.pos, Name: tk.text})
			}
			p.i += n + 3
			return item
		}
		n += 2
	}
	item := &SelectItem{Pos: t.pos, Expr: p.parseExpr()}
	item.Alias = p.optAlias()
	return item
}

// optAlias parses an optional [AS] name.
func (p *parser) optAlias() *Ident {
	if p.acceptKw("AS") {
		return p.ident("an alias")
	}
	if isIdentTok(p.tok()) {
		return p.ident("an alias")
	}
	p.note("AS")
	p.note("an alias")
	return nil
}

// groupingElement parses an item of GROUP BY: an expression, (), or
// GROUPING SETS / ROLLUP / CUBE (...).
func (p *parser) groupingElement() Expr {
	t := p.tok()
	if p.isOp("(") && p.isOpAt(1, ")") {
		p.i += 2
		return &RowExpr{Pos: t.pos}
	}
	kind := ""
	switch {
	case p.isKw("GROUPING") && p.isKwAt(1, "SETS"):
		p.i += 2
		kind = "GROUPING SETS"
	case (p.isKw("ROLLUP") || p.isKw("CUBE")) && p.isOpAt(1, "("):
		p.i++
		kind = t.upper
	default:
		return p.parseExpr()
	}
	g := &GroupingSets{Pos: t.pos, Kind: kind}
	p.expectOp("(")
	g.Items = []Expr{p.groupingElement()}
	for p.acceptOp(",") {
		g.Items = append(g.Items, p.groupingElement())
	}
	p.expectOp(")")
	return g
}

func (p *parser) orderItems() []*OrderItem {
	items := []*OrderItem{p.orderItem()}
	for p.acceptOp(",") {
		items = append(items, p.orderItem())
	}
	return items
}

func (p *parser) orderItem() *OrderItem {
	t := p.tok()
	o := &OrderItem{Pos: t.pos, Expr: p.parseExpr()}
	if p.acceptKw("DESC") {
		o.Desc = true
	} else if p.acceptKw("ASC") {
		o.Asc = true
	}
	if p.acceptKw("NULLS") {
		if p.acceptKw("FIRST") {
			o.Nulls = "FIRST"
		} else {
			p.expectKw("LAST")
			o.Nulls = "LAST"
		}
	}
	return o
}

// parseFrom parses table references joined by JOINs and commas (all left
// associative, at one level, as in Calcite).
func (p *parser) parseFrom() TableExpr {
	p.enter()
	defer p.leave()
	left := p.tablePrimary()
	for {
		t := p.tok()
		j := &Join{Pos: t.pos, Left: left}
		switch {
		case p.isOp(","):
			p.i++
			j.Kind = CommaJoin
		case p.isKw("CROSS"):
			p.i++
			p.expectKw("JOIN")
			j.Kind = CrossJoin
		default:
			if p.isKw("NATURAL") {
				p.i++
				j.Natural = true
			}
			switch {
			case p.isKw("JOIN"):
				j.Kind = InnerJoin
			case p.isKw("INNER"):
				p.i++
				j.Kind = InnerJoin
			case p.isKw("LEFT"):
				p.i++
				j.Kind = LeftJoin
				p.acceptKw("OUTER")
			case p.isKw("RIGHT"):
				p.i++
				j.Kind = RightJoin
				p.acceptKw("OUTER")
			case p.isKw("FULL"):
				p.i++
				j.Kind = FullJoin
				p.acceptKw("OUTER")
			default:
				p.note("JOIN")
				if j.Natural {
					p.fail()
				}
				p.note(`","`)
				return left
			}
			p.expectKw("JOIN")
		}
		j.Right = p.tablePrimary()
		if j.Kind != CommaJoin && j.Kind != CrossJoin && !j.Natural {
			switch {
			case p.acceptKw("ON"):
				j.On = p.parseExpr()
			case p.acceptKw("USING"):
				j.Using = p.parenIdentList("a column name")
			default:
				p.fail()
			}
		}
		left = j
	}
}

// tablePrimary parses a table reference without joins.
func (p *parser) tablePrimary() TableExpr {
	t := p.tok()
	lateral := p.acceptKw("LATERAL")
	switch {
	case p.isKw("TABLE") && p.isOpAt(1, "("):
		p.i += 2
		call := p.tok()
		e := p.parseExpr()
		f, ok := e.(*FuncCall)
		if !ok || f.Over != nil || f.OverName != nil || f.Filter != nil {
			p.failAt(call, "TABLE(...) needs a call of a table function", "a call such as TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)")
		}
		p.expectOp(")")
		return &TableFunction{Pos: t.pos, Lateral: lateral, Call: f, Alias: p.tableAlias()}
	case p.isOp("(") && lateral:
		p.i++
		q := p.parseQuery()
		p.expectOp(")")
		return &DerivedTable{Pos: t.pos, Lateral: true, Query: q, Alias: p.tableAlias()}
	case lateral:
		p.fail("TABLE", `"("`)
	case p.isKw("UNNEST") && p.isOpAt(1, "("):
		p.i += 2
		u := &Unnest{Pos: t.pos, Args: p.exprList()}
		p.expectOp(")")
		if p.isKw("WITH") && p.isKwAt(1, "ORDINALITY") {
			p.i += 2
			u.WithOrdinality = true
		}
		u.Alias = p.tableAlias()
		return u
	case p.isOp("("):
		return p.parenTable()
	}
	if !isIdentTok(t) {
		p.note("a table name")
		p.note("TABLE")
		p.note("LATERAL")
		p.note("UNNEST")
		p.note(`"("`)
		if t.kind == tokIdent {
			p.failAt(t, "unexpected reserved word "+t.describe(), p.expAt()...)
		}
		p.fail()
	}
	tn := &TableName{Pos: t.pos, Name: p.objectName("a table name")}
	tn.Hints = p.hints()
	p.note("FOR SYSTEM_TIME AS OF")
	if p.isKw("FOR") {
		p.i++
		p.expectKw("SYSTEM_TIME")
		p.expectKw("AS")
		p.expectKw("OF")
		tn.SystemTime = p.parseExprPrec(precAdd)
	}
	tn.Alias = p.tableAlias()
	return tn
}

// parenTable parses (query) [AS] alias, or a parenthesized join.
func (p *parser) parenTable() TableExpr {
	t := p.tok()
	start := p.i
	if (p.isKwAt(1, "SELECT") || p.isKwAt(1, "WITH") || p.isKwAt(1, "VALUES") || p.isOpAt(1, "(")) && !p.notQuery[start] {
		var q *Query
		if p.attempt(func() {
			p.i++
			q = p.parseQuery()
			p.expectOp(")")
		}) {
			return &DerivedTable{Pos: t.pos, Query: q, Alias: p.tableAlias()}
		}
		// Remember the failure: nested parentheses would otherwise try
		// the query again at every level of the fallback, in exponential
		// time.
		if p.notQuery == nil {
			p.notQuery = map[int]bool{}
		}
		p.notQuery[start] = true
	}
	p.expectOp("(")
	inner := p.parseFrom()
	p.expectOp(")")
	return &ParenTable{Pos: t.pos, Table: inner, Alias: p.tableAlias()}
}

// tableAlias parses an optional [AS] name [(col, ...)].
func (p *parser) tableAlias() *TableAlias {
	t := p.tok()
	if !p.acceptKw("AS") && !isIdentTok(t) {
		p.note("an alias")
		return nil
	}
	a := &TableAlias{Pos: t.pos, Name: p.ident("an alias")}
	if p.isOp("(") {
		a.Columns = p.parenIdentList("a column name")
	}
	return a
}

// hints parses an optional /*+ hint, ... */.
func (p *parser) hints() []*Hint {
	if !p.isOp("/*+") {
		// Not noted as expected: a hint is seldom what is missing.
		return nil
	}
	p.i++
	var hs []*Hint
	for {
		name := p.ident("a hint name")
		h := &Hint{Pos: name.Pos, Name: name}
		if p.acceptOp("(") {
			for {
				p.hintArg(h)
				if !p.acceptOp(",") {
					break
				}
			}
			p.expectOp(")")
		}
		hs = append(hs, h)
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp("*/")
	return hs
}

// hintArg parses an argument of a hint: 'key' = 'value' (or key = 'value'),
// a name or a literal.
func (p *parser) hintArg(h *Hint) {
	t := p.tok()
	if (t.kind == tokString || isIdentTok(t)) && p.isOpAt(1, "=") {
		p.i += 2
		v := p.stringLit("a quoted hint option value")
		h.Options = append(h.Options, &Option{Pos: t.pos, Key: t.text, Value: v.Value, ValuePos: v.Pos})
		return
	}
	switch t.kind {
	case tokString, tokNumber:
		e, _ := p.parsePrimary()
		h.Args = append(h.Args, e)
	default:
		p.note("a quoted key = 'value'")
		h.Args = append(h.Args, &Ref{Pos: t.pos, Parts: []*Ident{p.ident("a name or a literal")}})
	}
}
