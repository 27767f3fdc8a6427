package parser

// parseScript parses statements separated by ";".
func (p *parser) parseScript() []Statement {
	var stmts []Statement
	for {
		for p.acceptOp(";") {
		}
		if p.tok().kind == tokEOF {
			return stmts
		}
		stmts = append(stmts, p.parseStatement())
		if p.acceptOp(";") {
			continue
		}
		p.expectEOF()
		return stmts
	}
}

// statementStarts are the keywords that begin a statement, for errors.
var statementStarts = []string{"a statement (CREATE, DROP, INSERT, SELECT, WITH, VALUES, SET, RESET, EXECUTE, BEGIN STATEMENT SET, EXPLAIN, SHOW, DESCRIBE, USE)"}

func (p *parser) parseStatement() Statement {
	t := p.tok()
	if t.kind == tokIdent {
		switch t.upper {
		case "CREATE":
			return p.parseCreate()
		case "DROP":
			return p.parseDrop()
		case "SET":
			return p.parseSet()
		case "RESET":
			p.i++
			r := &Reset{Pos: t.pos}
			if p.tok().kind == tokString {
				r.Key = p.stringLit("")
			} else {
				p.note("a quoted option key")
			}
			return r
		case "INSERT":
			return p.parseInsert()
		case "EXECUTE":
			return p.parseExecute()
		case "BEGIN":
			return p.parseBeginStatementSet()
		case "EXPLAIN":
			return p.parseExplain()
		case "SHOW":
			return p.parseShow()
		case "DESCRIBE", "DESC":
			p.i++
			d := &Describe{Pos: t.pos}
			if p.isKw("EXTENDED") && isIdentTok(p.peek(1)) {
				p.i++
				d.Extended = true
			}
			d.Name = p.objectName("a table name")
			return d
		case "USE":
			return p.parseUse()
		case "SELECT", "WITH", "VALUES":
			return &QueryStatement{Pos: t.pos, Query: p.parseQuery()}
		}
	}
	if p.isOp("(") {
		return &QueryStatement{Pos: t.pos, Query: p.parseQuery()}
	}
	p.fail(statementStarts...)
	return nil
}

func (p *parser) parseCreate() Statement {
	t := p.advance()
	temporary := p.acceptKw("TEMPORARY")
	system := p.acceptKw("SYSTEM")
	switch {
	case p.atKw("FUNCTION"):
		return p.parseCreateFunction(t, temporary, system)
	case system:
		p.fail()
	case p.atKw("TABLE"):
		return p.parseCreateTable(t, temporary)
	case p.atKw("VIEW"):
		return p.parseCreateView(t, temporary)
	}
	p.fail()
	return nil
}

// ifNotExists parses an optional IF NOT EXISTS.
func (p *parser) ifNotExists() bool {
	if p.isKw("IF") && p.isKwAt(1, "NOT") {
		p.i += 2
		p.expectKw("EXISTS")
		return true
	}
	p.note("IF NOT EXISTS")
	return false
}

func (p *parser) parseCreateTable(t token, temporary bool) *CreateTable {
	p.i++ // TABLE
	ct := &CreateTable{Pos: t.pos, Temporary: temporary, IfNotExists: p.ifNotExists()}
	ct.Name = p.objectName("a table name")
	if p.isOp("(") {
		p.i++
		for {
			p.tableElement(ct)
			if !p.acceptOp(",") {
				break
			}
		}
		p.expectOp(")")
	} else if !p.isKw("AS") && !p.isKw("WITH") {
		p.note(`"("`)
		p.note("AS")
		p.fail()
	}
	if p.acceptKw("COMMENT") {
		ct.Comment = p.stringLit("a comment string")
	}
	if p.acceptKws("PARTITIONED", "BY") {
		ct.PartitionBy = p.parenIdentList("a column name")
	}
	if p.acceptKw("WITH") {
		ct.Options = p.options()
	}
	if p.isKw("LIKE") {
		p.failAt(p.tok(), "CREATE TABLE ... LIKE is not supported", "AS query, or the columns in the statement")
	}
	if p.acceptKw("AS") {
		ct.AsQuery = p.parseQuery()
	}
	return ct
}

// tableElement parses a column, a watermark or a constraint of CREATE TABLE.
func (p *parser) tableElement(ct *CreateTable) {
	t := p.tok()
	switch {
	case p.isKw("WATERMARK") && p.isKwAt(1, "FOR"):
		p.i += 2
		w := &Watermark{Pos: t.pos, Column: []*Ident{p.ident("a column name")}}
		for p.acceptOp(".") {
			w.Column = append(w.Column, p.ident("a field name"))
		}
		p.expectKw("AS")
		w.Expr = p.parseExpr()
		ct.Watermarks = append(ct.Watermarks, w)
		return
	case p.isKw("CONSTRAINT") || (p.isKw("PRIMARY") && p.isKwAt(1, "KEY")):
		c := p.primaryKey(false)
		ct.Constraints = append(ct.Constraints, c)
		return
	}
	p.note("WATERMARK")
	p.note("PRIMARY KEY")
	p.note("CONSTRAINT")
	name := p.ident("a column name")
	col := &ColumnDef{Pos: name.Pos, Name: name}
	ct.Columns = append(ct.Columns, col)
	if p.acceptKw("AS") {
		col.Kind = ComputedColumn
		col.Expr = p.parseExpr()
	} else {
		col.Type = p.parseType()
		if p.acceptKw("METADATA") {
			col.Kind = MetadataColumn
			if p.acceptKw("FROM") {
				col.MetadataKey = p.stringLit("a metadata key string")
			}
			col.Virtual = p.acceptKw("VIRTUAL")
		} else if p.isKw("CONSTRAINT") || (p.isKw("PRIMARY") && p.isKwAt(1, "KEY")) {
			col.PrimaryKey = p.primaryKey(true)
		} else {
			p.note("METADATA")
			p.note("PRIMARY KEY")
		}
	}
	if p.acceptKw("COMMENT") {
		col.Comment = p.stringLit("a comment string")
	}
}

// primaryKey parses [CONSTRAINT name] PRIMARY KEY [(cols)] [NOT ENFORCED];
// the column list is absent inline on a column.
func (p *parser) primaryKey(inline bool) *TableConstraint {
	c := &TableConstraint{Pos: p.tok().pos}
	if p.acceptKw("CONSTRAINT") {
		c.Name = p.ident("a constraint name")
	}
	p.expectKw("PRIMARY")
	p.expectKw("KEY")
	if !inline {
		c.Columns = p.parenIdentList("a column name")
	}
	if p.isKw("NOT") && p.isKwAt(1, "ENFORCED") {
		p.i += 2
		c.NotEnforced = true
	} else if !p.acceptKw("ENFORCED") {
		p.note("NOT ENFORCED")
	}
	return c
}

// options parses ('key' = 'value', ...).
func (p *parser) options() []*Option {
	p.expectOp("(")
	var opts []*Option
	if p.acceptOp(")") {
		return nil
	}
	for {
		opts = append(opts, p.option())
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
	return opts
}

// option parses 'key' = 'value'.
func (p *parser) option() *Option {
	k := p.stringLit("a quoted option key (as in 'connector')")
	p.expectOp("=")
	v := p.stringLit("a quoted option value (as in 'kafka')")
	return &Option{Pos: k.Pos, Key: k.Value, Value: v.Value, ValuePos: v.Pos}
}

func (p *parser) parseCreateView(t token, temporary bool) *CreateView {
	p.i++ // VIEW
	v := &CreateView{Pos: t.pos, Temporary: temporary, IfNotExists: p.ifNotExists()}
	v.Name = p.objectName("a view name")
	if p.isOp("(") {
		v.Columns = p.parenIdentList("a column name")
	}
	if p.acceptKw("COMMENT") {
		v.Comment = p.stringLit("a comment string")
	}
	p.expectKw("AS")
	v.Query = p.parseQuery()
	return v
}

func (p *parser) parseCreateFunction(t token, temporary, system bool) *CreateFunction {
	p.i++ // FUNCTION
	f := &CreateFunction{Pos: t.pos, Temporary: temporary, System: system, IfNotExists: p.ifNotExists()}
	f.Name = p.objectName("a function name")
	p.expectKw("AS")
	f.Identifier = p.stringLit("a quoted function identifier (as in 'com.example.MyFunction')")
	if p.acceptKw("LANGUAGE") {
		l := p.tok()
		switch l.upper {
		case "GO", "JAVA", "SCALA", "PYTHON":
			if l.kind == tokIdent {
				p.i++
				f.Language = l.upper
			}
		}
		if f.Language == "" {
			p.fail("GO", "JAVA", "SCALA", "PYTHON")
		}
	}
	if p.acceptKw("USING") {
		for {
			p.expectKw("JAR")
			f.Jars = append(f.Jars, p.stringLit("a quoted jar path"))
			if !p.acceptOp(",") {
				break
			}
		}
	}
	return f
}

func (p *parser) parseDrop() *Drop {
	t := p.advance()
	d := &Drop{Pos: t.pos, Temporary: p.acceptKw("TEMPORARY")}
	d.System = p.acceptKw("SYSTEM")
	w := p.tok()
	if w.kind == tokIdent {
		switch w.upper {
		case "FUNCTION":
			d.What = w.upper
		case "TABLE", "VIEW", "DATABASE", "CATALOG":
			if !d.System {
				d.What = w.upper
			}
		}
	}
	if d.What == "" {
		if d.System {
			p.fail("FUNCTION")
		}
		p.fail("TABLE", "VIEW", "FUNCTION", "DATABASE", "CATALOG")
	}
	p.i++
	if p.isKw("IF") && p.isKwAt(1, "EXISTS") {
		p.i += 2
		d.IfExists = true
	} else {
		p.note("IF EXISTS")
	}
	d.Name = p.objectName("a name")
	return d
}

func (p *parser) parseSet() *Set {
	t := p.advance()
	s := &Set{Pos: t.pos}
	if p.tok().kind == tokString {
		s.Option = p.option()
	} else {
		p.note("a quoted option key (as in 'parallelism.default')")
	}
	return s
}

// parseInsert parses INSERT INTO|OVERWRITE table [PARTITION (...)] [(cols)]
// query; the column list may also come before PARTITION.
func (p *parser) parseInsert() *Insert {
	t := p.expectKw("INSERT")
	ins := &Insert{Pos: t.pos}
	if p.acceptKw("OVERWRITE") {
		ins.Overwrite = true
	} else {
		p.expectKw("INTO")
	}
	ins.Table = p.objectName("a table name")
	ins.Hints = p.hints()
	p.insertPartition(ins)
	if p.isOp("(") && !p.isKwAt(1, "SELECT") && !p.isKwAt(1, "WITH") && !p.isKwAt(1, "VALUES") && !p.isOpAt(1, "(") {
		ins.Columns = p.parenIdentList("a column name")
		if ins.Partition == nil {
			p.insertPartition(ins)
		}
	}
	if !p.startsQuery() && !p.isOp("(") {
		if ins.Columns == nil {
			p.note(`a column list in "("`)
		}
		p.fail("a query (SELECT, VALUES or WITH)")
	}
	ins.Query = p.parseQuery()
	return ins
}

func (p *parser) insertPartition(ins *Insert) {
	if !p.acceptKw("PARTITION") {
		return
	}
	p.expectOp("(")
	for {
		c := p.ident("a partition column name")
		p.expectOp("=")
		ins.Partition = append(ins.Partition, &PartitionValue{Pos: c.Pos, Column: c, Value: p.parseExpr()})
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
}

// parseExecute parses EXECUTE STATEMENT SET BEGIN ... END, EXECUTE INSERT
// ... or EXECUTE query.
func (p *parser) parseExecute() Statement {
	t := p.advance()
	if p.isKw("STATEMENT") {
		return p.statementSetBody(t)
	}
	p.note("STATEMENT SET")
	if p.isKw("INSERT") {
		return &Execute{Pos: t.pos, Statement: p.parseInsert()}
	}
	p.note("INSERT")
	if p.startsQuery() || p.isOp("(") {
		return &Execute{Pos: t.pos, Statement: &QueryStatement{Pos: p.tok().pos, Query: p.parseQuery()}}
	}
	p.fail("a query")
	return nil
}

// statementSetBody parses STATEMENT SET BEGIN insert; ... END.
func (p *parser) statementSetBody(t token) *StatementSet {
	p.expectKw("STATEMENT")
	p.expectKw("SET")
	p.expectKw("BEGIN")
	ss := &StatementSet{Pos: t.pos}
	p.statementSetInserts(ss)
	return ss
}

// parseBeginStatementSet parses BEGIN STATEMENT SET; insert; ... END.
func (p *parser) parseBeginStatementSet() *StatementSet {
	t := p.advance()
	p.expectKw("STATEMENT")
	p.expectKw("SET")
	p.expectOp(";")
	ss := &StatementSet{Pos: t.pos, Begin: true}
	p.statementSetInserts(ss)
	return ss
}

// statementSetInserts parses insert; insert; ... END (empty statements and
// a missing ";" before END are accepted).
func (p *parser) statementSetInserts(ss *StatementSet) {
	for {
		for p.acceptOp(";") {
		}
		if p.acceptKw("END") {
			return
		}
		if !p.isKw("INSERT") {
			p.fail("INSERT")
		}
		ss.Inserts = append(ss.Inserts, p.parseInsert())
		if !p.acceptOp(";") {
			p.expectKw("END")
			return
		}
	}
}

// explainDetails are the details EXPLAIN may list.
var explainDetails = map[string]bool{
	"ESTIMATED_COST": true, "CHANGELOG_MODE": true, "PLAN_ADVICE": true, "JSON_EXECUTION_PLAN": true,
}

func (p *parser) parseExplain() *Explain {
	t := p.advance()
	e := &Explain{Pos: t.pos}
	if p.tok().kind == tokIdent && explainDetails[p.tok().upper] {
		e.Details = []string{p.advance().upper}
		for p.acceptOp(",") {
			d := p.tok()
			if d.kind != tokIdent || !explainDetails[d.upper] {
				p.fail("ESTIMATED_COST", "CHANGELOG_MODE", "PLAN_ADVICE", "JSON_EXECUTION_PLAN")
			}
			e.Details = append(e.Details, p.advance().upper)
		}
	} else if p.isKw("PLAN") && p.isKwAt(1, "FOR") {
		p.i += 2
		e.PlanFor = true
	} else {
		p.note("PLAN FOR")
		p.note("an explain detail (ESTIMATED_COST, CHANGELOG_MODE, PLAN_ADVICE, JSON_EXECUTION_PLAN)")
	}
	s := p.tok()
	switch {
	case p.isKw("INSERT"):
		e.Statement = p.parseInsert()
	case p.isKw("STATEMENT"):
		e.Statement = p.statementSetBody(s)
	case p.isKw("EXECUTE"):
		e.Statement = p.parseExecute()
	case p.startsQuery() || p.isOp("("):
		e.Statement = &QueryStatement{Pos: s.pos, Query: p.parseQuery()}
	default:
		p.fail("a query", "INSERT", "STATEMENT SET", "EXECUTE")
	}
	return e
}

// showKinds are the SHOW forms and whether they take FROM|IN and LIKE.
var showKinds = map[string]struct{ from, like bool }{
	"CATALOGS": {false, true}, "DATABASES": {true, true}, "TABLES": {true, true},
	"VIEWS": {true, true}, "FUNCTIONS": {true, true}, "USER FUNCTIONS": {true, true},
	"MODULES": {false, false}, "FULL MODULES": {false, false}, "JARS": {false, false},
	"JOBS": {false, false}, "CURRENT CATALOG": {false, false}, "CURRENT DATABASE": {false, false},
	"COLUMNS": {true, true}, "PROCEDURES": {true, true}, "MATERIALIZED TABLES": {true, true},
}

func (p *parser) parseShow() Statement {
	t := p.advance()
	if p.isKw("CREATE") {
		p.i++
		sc := &ShowCreate{Pos: t.pos}
		w := p.tok()
		if !p.isKw("TABLE") && !p.isKw("VIEW") {
			p.fail("TABLE", "VIEW")
		}
		p.i++
		sc.What = w.upper
		sc.Name = p.objectName("a name")
		return sc
	}
	w := p.tok()
	what := w.upper
	switch what {
	case "USER", "FULL", "CURRENT", "MATERIALIZED":
		next := p.peek(1)
		if next.kind == tokIdent {
			what += " " + next.upper
		}
	}
	kind, ok := showKinds[what]
	if w.kind != tokIdent || !ok {
		p.fail("CATALOGS", "DATABASES", "TABLES", "VIEWS", "FUNCTIONS", "USER FUNCTIONS", "MODULES",
			"FULL MODULES", "JARS", "JOBS", "CURRENT CATALOG", "CURRENT DATABASE", "COLUMNS", "CREATE TABLE", "CREATE VIEW")
	}
	p.i++
	if what != w.upper {
		p.i++
	}
	s := &Show{Pos: t.pos, What: what}
	if kind.from {
		if p.isKw("FROM") || p.isKw("IN") {
			s.FromIn = p.advance().upper
			s.From = p.objectName("a name")
		} else if what == "COLUMNS" {
			p.fail("FROM", "IN")
		} else {
			p.note("FROM")
			p.note("IN")
		}
	}
	if kind.like {
		if p.isKw("NOT") && (p.isKwAt(1, "LIKE") || p.isKwAt(1, "ILIKE")) {
			p.i++
			s.NotLike = true
		}
		switch {
		case p.acceptKw("LIKE"):
			s.Like = p.stringLit("a quoted pattern")
		case p.acceptKw("ILIKE"):
			s.ILike = true
			s.Like = p.stringLit("a quoted pattern")
		}
	}
	return s
}

func (p *parser) parseUse() *Use {
	t := p.advance()
	u := &Use{Pos: t.pos}
	switch {
	case p.isKw("CATALOG") && (isIdentTok(p.peek(1))):
		p.i++
		u.What = "CATALOG"
		u.Names = []*ObjectName{p.objectName("a catalog name")}
	case p.isKw("MODULES") && (isIdentTok(p.peek(1))):
		p.i++
		u.What = "MODULES"
		u.Names = []*ObjectName{p.objectName("a module name")}
		for p.acceptOp(",") {
			u.Names = append(u.Names, p.objectName("a module name"))
		}
	default:
		p.note("CATALOG")
		p.note("MODULES")
		u.Names = []*ObjectName{p.objectName("a database name")}
	}
	return u
}
