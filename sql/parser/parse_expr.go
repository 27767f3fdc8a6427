package parser

// Operator precedence levels, loosest first (those of Calcite, whose
// grammar Flink uses). A binary operator of level k takes a left operand
// of level >= k and a right operand of level >= k+1.
const (
	precOr      = 1
	precAnd     = 2
	precNot     = 3 // prefix NOT
	precIs      = 4 // postfix IS [NOT] NULL|TRUE|...
	precCmp     = 5 // = <> < <= > >= IS [NOT] DISTINCT FROM
	precPred    = 6 // [NOT] BETWEEN|IN|LIKE|ILIKE|SIMILAR TO
	precAdd     = 7 // + -
	precMul     = 8 // * / % ||
	precUnary   = 9 // prefix - +
	precPrimary = 10
)

func (p *parser) parseExpr() Expr { return p.parseExprPrec(precOr) }

// binaryPrec returns the level of the operator at the current token, or 0.
func (p *parser) binaryPrec() int {
	t := p.tok()
	switch t.kind {
	case tokOp:
		switch t.text {
		case "=", "<>", "!=", "<", "<=", ">", ">=":
			return precCmp
		case "+", "-":
			return precAdd
		case "*", "/", "%", "||":
			return precMul
		}
	case tokIdent:
		switch t.upper {
		case "OR":
			return precOr
		case "AND":
			return precAnd
		case "IS":
			if p.isKwAt(1, "DISTINCT") || (p.isKwAt(1, "NOT") && p.isKwAt(2, "DISTINCT")) {
				return precCmp
			}
			return precIs
		case "IN", "BETWEEN", "LIKE", "ILIKE", "SIMILAR":
			return precPred
		case "NOT":
			if p.isKwAt(1, "IN") || p.isKwAt(1, "BETWEEN") || p.isKwAt(1, "LIKE") ||
				p.isKwAt(1, "ILIKE") || p.isKwAt(1, "SIMILAR") {
				return precPred
			}
		}
	}
	return 0
}

// parseExprPrec parses an expression whose operators bind at least as
// tightly as level min.
func (p *parser) parseExprPrec(min int) Expr {
	p.enter()
	defer p.leave()
	left := p.parseUnary()
	for {
		prec := p.binaryPrec()
		if prec == 0 {
			p.note("an operator")
			return left
		}
		if prec < min {
			return left
		}
		left = p.parseInfix(left, prec)
	}
}

func (p *parser) parseUnary() Expr {
	t := p.tok()
	if t.kind == tokIdent && t.upper == "NOT" {
		p.i++
		return &Unary{Pos: t.pos, Op: "NOT", X: p.parseExprPrec(precNot)}
	}
	if t.kind == tokOp && (t.text == "-" || t.text == "+") {
		p.i++
		return &Unary{Pos: t.pos, Op: t.text, X: p.parseExprPrec(precUnary)}
	}
	return p.parsePostfix()
}

// parseInfix parses the operator at the current token, of level prec, and
// its right operand(s).
func (p *parser) parseInfix(left Expr, prec int) Expr {
	t := p.advance()
	switch prec {
	case precOr, precAnd:
		return &Binary{Pos: t.pos, Op: t.upper, L: left, R: p.parseExprPrec(prec + 1)}
	case precAdd, precMul:
		return &Binary{Pos: t.pos, Op: t.text, L: left, R: p.parseExprPrec(prec + 1)}
	case precCmp:
		if t.kind == tokOp {
			op := t.text
			if op == "!=" {
				op = "<>"
			}
			return &Binary{Pos: t.pos, Op: op, L: left, R: p.parseExprPrec(precCmp + 1)}
		}
		// IS [NOT] DISTINCT FROM
		not := p.acceptKw("NOT")
		p.expectKw("DISTINCT")
		p.expectKw("FROM")
		return &DistinctFrom{Pos: t.pos, L: left, R: p.parseExprPrec(precCmp + 1), Not: not}
	case precIs:
		not := p.acceptKw("NOT")
		for _, w := range []string{"NULL", "TRUE", "FALSE", "UNKNOWN"} {
			if p.acceptKw(w) {
				return &IsExpr{Pos: t.pos, X: left, Not: not, What: w}
			}
		}
		if p.acceptKw("JSON") {
			what := "JSON"
			for _, w := range []string{"VALUE", "SCALAR", "ARRAY", "OBJECT"} {
				if p.acceptKw(w) {
					what += " " + w
					break
				}
			}
			return &IsExpr{Pos: t.pos, X: left, Not: not, What: what}
		}
		p.fail("DISTINCT FROM")
	case precPred:
		not := false
		kw := t
		if t.upper == "NOT" {
			not = true
			kw = p.advance()
		}
		switch kw.upper {
		case "IN":
			p.expectOp("(")
			if p.startsQuery() {
				q := p.parseQuery()
				p.expectOp(")")
				return &InQuery{Pos: t.pos, X: left, Not: not, Query: q}
			}
			list := p.exprList()
			p.expectOp(")")
			return &InList{Pos: t.pos, X: left, Not: not, List: list}
		case "BETWEEN":
			sym := false
			if p.acceptKw("SYMMETRIC") {
				sym = true
			} else {
				p.acceptKw("ASYMMETRIC")
			}
			low := p.parseExprPrec(precAdd)
			p.expectKw("AND")
			high := p.parseExprPrec(precAdd)
			return &Between{Pos: t.pos, X: left, Not: not, Symmetric: sym, Low: low, High: high}
		default: // LIKE, ILIKE, SIMILAR TO
			op := kw.upper
			if op == "SIMILAR" {
				p.expectKw("TO")
				op = "SIMILAR TO"
			}
			l := &Like{Pos: t.pos, X: left, Not: not, Op: op, Pattern: p.parseExprPrec(precAdd)}
			if p.acceptKw("ESCAPE") {
				l.Escape = p.parseExprPrec(precAdd)
			}
			return l
		}
	}
	panic("unreachable")
}

// startsQuery reports whether the current token starts a query.
func (p *parser) startsQuery() bool {
	return p.isKw("SELECT") || p.isKw("WITH") || p.isKw("VALUES")
}

// exprList parses expr, expr, ...
func (p *parser) exprList() []Expr {
	list := []Expr{p.parseExpr()}
	for p.acceptOp(",") {
		list = append(list, p.parseExpr())
	}
	return list
}

// parsePostfix parses a primary expression and its [index] and .field
// suffixes.
func (p *parser) parsePostfix() Expr {
	e, isName := p.parsePrimary()
	for {
		t := p.tok()
		switch {
		case t.kind == tokOp && t.text == "[":
			p.i++
			idx := p.parseExpr()
			p.expectOp("]")
			e = &Index{Pos: t.pos, X: e, Index: idx}
			isName = false
		case t.kind == tokOp && t.text == "." && p.peek(1).kind != tokOp:
			p.i++
			f := p.ident("a field name")
			if r, ok := e.(*Ref); ok && isName {
				r.Parts = append(r.Parts, f)
			} else {
				e = &FieldAccess{Pos: t.pos, X: e, Field: f}
			}
		default:
			return e
		}
	}
}

// parsePrimary parses a literal, a name, a call, a parenthesized
// expression or one of the special forms. isName is set for a bare
// (unparenthesized) name, whose .field suffixes extend the Ref.
func (p *parser) parsePrimary() (e Expr, isName bool) {
	t := p.tok()
	switch t.kind {
	case tokNumber:
		p.i++
		return &NumberLit{Pos: t.pos, Text: t.text}, false
	case tokString, tokNString:
		p.i++
		return &StringLit{Pos: t.pos, Value: t.text, National: t.kind == tokNString}, false
	case tokBinary:
		p.i++
		return &BinaryLit{Pos: t.pos, Hex: t.text}, false
	case tokParam:
		p.i++
		p.nparams++
		return &Param{Pos: t.pos, Index: p.nparams}, false
	case tokQuotedIdent:
		return p.parseNameOrCall()
	case tokOp:
		if t.text == "(" {
			return p.parseParen(), false
		}
	case tokIdent:
		if e := p.parseKeywordExpr(t); e != nil {
			return e, false
		}
		if !reserved[t.upper] {
			return p.parseNameOrCall()
		}
		if callableReserved[t.upper] && p.isOpAt(1, "(") {
			p.i++
			return p.parseCall(&ObjectName{Pos: t.pos, Parts: []*Ident{{Pos: t.pos, Name: t.text}}}), false
		}
	}
	p.fail("an expression")
	return nil, false
}

// parseParen parses (expr), (a, b, ...) or (query).
func (p *parser) parseParen() Expr {
	t := p.expectOp("(")
	if p.startsQuery() {
		q := p.parseQuery()
		p.expectOp(")")
		return &Subquery{Pos: t.pos, Query: q}
	}
	list := p.exprList()
	p.expectOp(")")
	if len(list) == 1 {
		return list[0]
	}
	return &RowExpr{Pos: t.pos, Fields: list}
}

// parseNameOrCall parses a.b.c or a.b.f(args).
func (p *parser) parseNameOrCall() (Expr, bool) {
	first := p.ident("a name")
	parts := []*Ident{first}
	for p.isOp(".") && isIdentTok(p.peek(1)) {
		p.i++
		parts = append(parts, p.ident("a name"))
	}
	if p.isOp("(") {
		return p.parseCall(&ObjectName{Pos: first.Pos, Parts: parts}), false
	}
	return &Ref{Pos: first.Pos, Parts: parts}, true
}

// parseKeywordExpr parses the expressions that start with a keyword, or
// returns nil if t does not start one.
func (p *parser) parseKeywordExpr(t token) Expr {
	next := p.peek(1)
	paren := next.kind == tokOp && next.text == "("
	switch t.upper {
	case "TRUE", "FALSE":
		p.i++
		return &BoolLit{Pos: t.pos, Value: t.upper == "TRUE"}
	case "NULL":
		p.i++
		return &NullLit{Pos: t.pos}
	case "UNKNOWN":
		p.i++
		return &UnknownLit{Pos: t.pos}
	case "DATE", "TIME", "TIMESTAMP":
		p.i++
		s := p.stringLit("a string literal after " + t.upper)
		return &TypedLit{Pos: t.pos, Type: t.upper, Value: s.Value}
	case "INTERVAL":
		return p.parseInterval()
	case "CASE":
		return p.parseCase()
	case "EXISTS":
		p.i++
		p.expectOp("(")
		q := p.parseQuery()
		p.expectOp(")")
		return &Exists{Pos: t.pos, Query: q}
	case "ROW":
		p.i++
		p.expectOp("(")
		r := &RowExpr{Pos: t.pos, Explicit: true}
		if !p.acceptOp(")") {
			r.Fields = p.exprList()
			p.expectOp(")")
		}
		return r
	case "ARRAY":
		p.i++
		p.expectOp("[")
		a := &ArrayExpr{Pos: t.pos}
		if !p.acceptOp("]") {
			a.Elems = p.exprList()
			p.expectOp("]")
		}
		return a
	case "MAP":
		p.i++
		p.expectOp("[")
		m := &MapExpr{Pos: t.pos}
		if !p.acceptOp("]") {
			m.Elems = []Expr{p.parseExpr()}
			for p.acceptOp(",") {
				m.Elems = append(m.Elems, p.parseExpr())
			}
			if len(m.Elems)%2 != 0 {
				p.fail(`","`, "a value for the last key")
			}
			p.expectOp("]")
		}
		return m
	case "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "LOCALTIME", "LOCALTIMESTAMP":
		p.i++
		return &FuncCall{Pos: t.pos, Name: &ObjectName{Pos: t.pos, Parts: []*Ident{{Pos: t.pos, Name: t.upper}}}, NoParens: true}
	}
	if !paren {
		return nil
	}
	switch t.upper {
	case "CAST", "TRY_CAST":
		p.i += 2
		x := p.parseExpr()
		p.expectKw("AS")
		typ := p.parseType()
		p.expectOp(")")
		return &Cast{Pos: t.pos, Try: t.upper == "TRY_CAST", X: x, Type: typ}
	case "EXTRACT":
		p.i += 2
		u := p.tok()
		if u.kind != tokIdent || !extractUnits[u.upper] {
			p.fail("a time unit (YEAR, MONTH, DAY, HOUR, MINUTE, SECOND, ...)")
		}
		p.i++
		p.expectKw("FROM")
		x := p.parseExpr()
		p.expectOp(")")
		return &Extract{Pos: t.pos, Unit: u.upper, X: x}
	case "POSITION":
		p.i += 2
		f := p.newCall(t, SyntaxPosition)
		f.Args = append(f.Args, p.parseExprPrec(precAdd))
		p.expectKw("IN")
		f.Args = append(f.Args, p.parseExpr())
		if p.acceptKw("FROM") {
			f.Args = append(f.Args, p.parseExpr())
		}
		p.expectOp(")")
		return f
	case "SUBSTRING":
		// SUBSTRING(s FROM a [FOR b]) or SUBSTRING(s, a [, b]).
		if !p.plainFirstArg() {
			return nil
		}
		p.i += 2
		s := p.parseExpr()
		if !p.acceptKw("FROM") {
			return p.finishCall(p.newCall(t, SyntaxCall), s)
		}
		f := p.newCall(t, SyntaxSubstring)
		f.Args = []Expr{s, p.parseExpr()}
		if p.acceptKw("FOR") {
			f.Args = append(f.Args, p.parseExpr())
		}
		p.expectOp(")")
		return f
	case "OVERLAY":
		p.i += 2
		f := p.newCall(t, SyntaxOverlay)
		f.Args = []Expr{p.parseExpr()}
		p.expectKw("PLACING")
		f.Args = append(f.Args, p.parseExpr())
		p.expectKw("FROM")
		f.Args = append(f.Args, p.parseExpr())
		if p.acceptKw("FOR") {
			f.Args = append(f.Args, p.parseExpr())
		}
		p.expectOp(")")
		return f
	case "TRIM":
		return p.parseTrim()
	case "FLOOR", "CEIL", "CEILING":
		// FLOOR(x TO unit) or FLOOR(x).
		if !p.plainFirstArg() {
			return nil
		}
		p.i += 2
		x := p.parseExpr()
		if !p.acceptKw("TO") {
			return p.finishCall(p.newCall(t, SyntaxCall), x)
		}
		f := p.newCall(t, SyntaxFloorTo)
		f.Args = []Expr{x, p.timeUnit()}
		p.expectOp(")")
		return f
	case "DESCRIPTOR":
		p.i += 2
		d := &Descriptor{Pos: t.pos, Columns: p.identList("a column name")}
		p.expectOp(")")
		return d
	case "JSON_VALUE", "JSON_QUERY", "JSON_EXISTS", "JSON_OBJECT", "JSON_ARRAY", "JSON_OBJECTAGG", "JSON_ARRAYAGG":
		return p.parseJSON()
	}
	return nil
}

// newCall starts a call of the function named by t. The functions of a
// special syntax, keywords, are named in upper case; a plain call keeps the
// spelling.
func (p *parser) newCall(t token, syntax FuncSyntax) *FuncCall {
	name := t.text
	if syntax != SyntaxCall {
		name = t.upper
	}
	return &FuncCall{Pos: t.pos, Name: &ObjectName{Pos: t.pos, Parts: []*Ident{{Pos: t.pos, Name: name}}}, Syntax: syntax}
}

// timeUnit parses a time unit (singular or plural) as a *TimeUnit.
func (p *parser) timeUnit() *TimeUnit {
	u := p.tok()
	unit, ok := timeUnits[u.upper]
	if u.kind != tokIdent || !ok {
		p.fail("a time unit (YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE or SECOND)")
	}
	p.i++
	return &TimeUnit{Pos: u.pos, Unit: unit}
}

func (p *parser) parseTrim() Expr {
	t := p.advance()
	p.expectOp("(")
	tr := &Trim{Pos: t.pos}
	for _, s := range []string{"BOTH", "LEADING", "TRAILING"} {
		if p.acceptKw(s) {
			tr.Spec = s
			break
		}
	}
	if p.acceptKw("FROM") {
		tr.X = p.parseExpr()
		p.expectOp(")")
		return tr
	}
	e := p.parseExpr()
	if p.acceptKw("FROM") {
		tr.Chars = e
		tr.X = p.parseExpr()
	} else if tr.Spec != "" {
		p.fail()
	} else {
		tr.X = e
	}
	p.expectOp(")")
	return tr
}

// parseInterval parses INTERVAL [+|-] 'value' qualifier.
func (p *parser) parseInterval() Expr {
	t := p.advance()
	lit := &IntervalLit{Pos: t.pos}
	if p.acceptOp("-") {
		lit.Negative = true
	} else {
		p.acceptOp("+")
	}
	lit.Value = p.stringLit("a quoted value (as in INTERVAL '10' SECOND)").Value
	lit.Qualifier = p.intervalQualifier()
	return lit
}

// intervalQualifier parses unit [(p [, f])] [TO unit [(f)]].
func (p *parser) intervalQualifier() *IntervalQualifier {
	start := p.timeUnit()
	q := &IntervalQualifier{Pos: start.Pos, Start: start.Unit, StartParams: p.optParams(2)}
	if p.acceptKw("TO") {
		q.End = p.timeUnit().Unit
		q.EndParams = p.optParams(1)
	}
	return q
}

// optParams parses an optional (n [, n ...]) of at most max integers.
func (p *parser) optParams(max int) []int {
	if !p.acceptOp("(") {
		return nil
	}
	ps := []int{p.intLit("an integer precision")}
	for len(ps) < max && p.acceptOp(",") {
		ps = append(ps, p.intLit("an integer"))
	}
	p.expectOp(")")
	return ps
}

func (p *parser) parseCase() Expr {
	t := p.advance()
	c := &Case{Pos: t.pos}
	if !p.atKw("WHEN") {
		c.Operand = p.parseExpr()
	}
	for {
		w := p.tok()
		if !p.acceptKw("WHEN") {
			break
		}
		cond := p.parseExpr()
		p.expectKw("THEN")
		c.Whens = append(c.Whens, &When{Pos: w.pos, Cond: cond, Result: p.parseExpr()})
	}
	if len(c.Whens) == 0 {
		p.fail()
	}
	if p.acceptKw("ELSE") {
		c.Else = p.parseExpr()
	}
	p.expectKw("END")
	return c
}

// plainFirstArg reports whether the token after the current name and its
// "(" starts a plain expression argument (not ")", "*", DISTINCT, ALL,
// TABLE or name =>).
func (p *parser) plainFirstArg() bool {
	t := p.peek(2)
	switch {
	case t.kind == tokOp && (t.text == ")" || t.text == "*"):
		return false
	case t.kind == tokIdent && (t.upper == "DISTINCT" || t.upper == "ALL" || t.upper == "TABLE"):
		return false
	case isIdentTok(t) && p.isOpAt(3, "=>"):
		return false
	}
	return true
}

// parseCall parses the argument list and the aggregate and window clauses
// of a call of name; the current token is "(".
func (p *parser) parseCall(name *ObjectName) *FuncCall {
	f := &FuncCall{Pos: name.Pos, Name: name}
	p.expectOp("(")
	switch {
	case p.acceptOp(")"):
		return p.callClauses(f)
	case p.isOp("*") && p.isOpAt(1, ")"):
		p.i += 2
		f.Star = true
		return p.callClauses(f)
	}
	if p.acceptKw("DISTINCT") {
		f.Distinct = true
	} else {
		p.acceptKw("ALL")
	}
	up := upperASCII(name.Last().Name)
	if len(name.Parts) == 1 && (up == "TIMESTAMPADD" || up == "TIMESTAMPDIFF") && p.tok().kind == tokIdent &&
		timeUnits[p.tok().upper] != "" && p.isOpAt(1, ",") {
		f.Args = append(f.Args, p.timeUnit())
		p.expectOp(",")
	}
	return p.finishCall(f, p.parseFuncArg())
}

// finishCall parses the arguments after the first one (already parsed),
// the ")" and the clauses after it.
func (p *parser) finishCall(f *FuncCall, first Expr) *FuncCall {
	f.Args = append(f.Args, first)
	for p.acceptOp(",") {
		f.Args = append(f.Args, p.parseFuncArg())
	}
	p.expectOp(")")
	return p.callClauses(f)
}

// callClauses parses the clauses after the arguments of a call:
// IGNORE|RESPECT NULLS, WITHIN GROUP, FILTER and OVER.
func (p *parser) callClauses(f *FuncCall) *FuncCall {
	if (p.isKw("IGNORE") || p.isKw("RESPECT")) && p.isKwAt(1, "NULLS") {
		f.NullTreatment = p.advance().upper + " NULLS"
		p.i++
	}
	if p.acceptKw("WITHIN") {
		p.expectKw("GROUP")
		p.expectOp("(")
		p.expectKw("ORDER")
		p.expectKw("BY")
		f.WithinGroup = p.orderItems()
		p.expectOp(")")
	}
	if p.acceptKw("FILTER") {
		p.expectOp("(")
		p.expectKw("WHERE")
		f.Filter = p.parseExpr()
		p.expectOp(")")
	}
	if p.acceptKw("OVER") {
		if p.isOp("(") {
			f.Over = p.windowSpec()
		} else {
			f.OverName = p.ident("a window name or \"(\"")
		}
	}
	return f
}

// parseFuncArg parses an argument: name => value, TABLE t ..., or an
// expression.
func (p *parser) parseFuncArg() Expr {
	t := p.tok()
	if isIdentTok(t) && p.isOpAt(1, "=>") {
		name := p.ident("an argument name")
		p.i++
		return &NamedArg{Pos: t.pos, Name: name, Value: p.parseArgValue()}
	}
	return p.parseArgValue()
}

func (p *parser) parseArgValue() Expr {
	t := p.tok()
	if !p.isKw("TABLE") {
		p.note("TABLE")
		return p.parseExpr()
	}
	p.i++
	a := &TableArg{Pos: t.pos, Name: p.objectName("a table name")}
	if p.acceptKws("PARTITION", "BY") {
		a.PartitionBy = p.exprsMaybeParen()
	}
	if p.acceptKws("ORDER", "BY") {
		if p.acceptOp("(") {
			a.OrderBy = p.orderItems()
			p.expectOp(")")
		} else {
			a.OrderBy = []*OrderItem{p.orderItem()}
		}
	}
	return a
}

// exprsMaybeParen parses a single expression or a parenthesized list.
func (p *parser) exprsMaybeParen() []Expr {
	if p.acceptOp("(") {
		l := p.exprList()
		p.expectOp(")")
		return l
	}
	return []Expr{p.parseExpr()}
}

// windowSpec parses ([base] [PARTITION BY ...] [ORDER BY ...] [frame]).
func (p *parser) windowSpec() *WindowSpec {
	t := p.expectOp("(")
	w := &WindowSpec{Pos: t.pos}
	if isIdentTok(p.tok()) && !p.startsFrame() {
		w.Base = p.ident("a window name")
	}
	if p.acceptKws("PARTITION", "BY") {
		w.PartitionBy = p.exprList()
	}
	if p.acceptKws("ORDER", "BY") {
		w.OrderBy = p.orderItems()
	}
	if p.startsFrame() {
		w.Frame = p.windowFrame()
	} else {
		p.note("ROWS")
		p.note("RANGE")
	}
	p.expectOp(")")
	return w
}

// startsFrame reports whether ROWS or RANGE starts a frame here (they are
// not reserved, so they could also name a window).
func (p *parser) startsFrame() bool {
	if !p.isKw("ROWS") && !p.isKw("RANGE") {
		return false
	}
	n := p.peek(1)
	return !(n.kind == tokOp && n.text == ")") && !p.isKwAt(1, "PARTITION") && !p.isKwAt(1, "ORDER")
}

func (p *parser) windowFrame() *WindowFrame {
	t := p.advance()
	f := &WindowFrame{Pos: t.pos, Units: t.upper}
	if p.acceptKw("BETWEEN") {
		f.Start = p.frameBound()
		p.expectKw("AND")
		f.End = p.frameBound()
	} else {
		f.Start = p.frameBound()
	}
	return f
}

func (p *parser) frameBound() *FrameBound {
	t := p.tok()
	b := &FrameBound{Pos: t.pos}
	switch {
	case p.isKw("UNBOUNDED") && (p.isKwAt(1, "PRECEDING") || p.isKwAt(1, "FOLLOWING")):
		p.i++
		if p.advance().upper == "PRECEDING" {
			b.Kind = UnboundedPreceding
		} else {
			b.Kind = UnboundedFollowing
		}
	case p.isKw("CURRENT") && p.isKwAt(1, "ROW"):
		p.i += 2
		b.Kind = CurrentRow
	default:
		p.note("UNBOUNDED")
		p.note("CURRENT ROW")
		b.Offset = p.parseExprPrec(precAdd)
		if p.acceptKw("PRECEDING") {
			b.Kind = Preceding
		} else if p.acceptKw("FOLLOWING") {
			b.Kind = Following
		} else {
			p.fail()
		}
	}
	return b
}
