package mysqlcdc

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	// The parser makes the literals of the statements it reads (the
	// values of DEFAULT, say) with a driver of values: this is the one
	// that needs nothing else.
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// A pipeline's source keeps each captured table as it is at the place it
// reads in the binary log, as Debezium and Flink CDC keep a schema
// history: a statement that changes the table is applied to the table the
// source holds, as the server applied it then. Describing the table from
// the server instead would give it as it is now, which, when the source
// reads behind the server and the table changed again since, is a later
// schema: the rows between the two changes would be decoded with the wrong
// columns. Statements the source cannot apply (ones the parser does not
// read, clauses the source does not follow, a table it does not hold) are
// followed by describing the table, as before; the columns of each table
// map event are then checked against the description (checkTableMap).

// draft is a table as a statement leaves it, before config.finish: its
// primary key by its columns' names.
type draft struct {
	t  *tableInfo
	pk []string
}

// draftOf returns a table the source holds as a draft, under another name
// where db and name are not "".
func draftOf(t *tableInfo, db, name string) *draft {
	d := &draft{t: &tableInfo{db: t.db, name: t.name, cols: slices.Clone(t.cols), engine: t.engine, collation: t.collation, chunkKey: -1}}
	if db != "" {
		d.t.db, d.t.name = db, name
	}
	for _, j := range t.pk {
		d.pk = append(d.pk, t.cols[j].name)
	}
	return d
}

// table returns the draft's table with its primary key by index, for
// config.finish.
func (d *draft) table() *tableInfo {
	d.t.pk = nil
	for _, n := range d.pk {
		d.t.pk = append(d.t.pk, d.t.column(n))
	}
	return d.t
}

// ddlEdit is what applying a statement to the tables the source holds
// gives.
type ddlEdit struct {
	// tables are, by id, the tables as the statement leaves them: nil for
	// one it drops or moves away, or that the source does not capture. A
	// table the statement names that is not here is described from the
	// server.
	tables map[string]*draft
	// names are the tables of tables, as database and table, in the order
	// the statement names them.
	names [][2]string
	// renames are the columns the statement renames, old name to new.
	renames map[string]string
	// why says, where the statement is not applied, why not.
	why string
}

func (e *ddlEdit) set(db, name string, d *draft) {
	id := db + "." + name
	if _, ok := e.tables[id]; !ok {
		e.names = append(e.names, [2]string{db, name})
	}
	e.tables[id] = d
}

// notApplied returns an edit that applies nothing, saying why.
func notApplied(why string) *ddlEdit { return &ddlEdit{why: why} }

// Modes of sql_mode under which the servers read types otherwise (DATE is
// a DATETIME under ORACLE, TIMESTAMP under MAXDB): statements run under
// them are not applied.
const foreignModes = pmysql.ModePostgreSQL | pmysql.ModeOracle | pmysql.ModeMsSQL | pmysql.ModeDb2 | pmysql.ModeMaxdb

// Modes of sql_mode that change how the parser reads a statement.
const parserModes = pmysql.ModeRealAsFloat | pmysql.ModePipesAsConcat | pmysql.ModeANSIQuotes | pmysql.ModeIgnoreSpace |
	pmysql.ModeNoBackslashEscapes | pmysql.ModeHighNotPrecedence

// nationalTypes matches the national character types, of utf8mb3, which
// the parser reads as the table's character set.
var nationalTypes = regexp.MustCompile(`(?i)\bN(?:ATIONAL|CHAR|VARCHAR)\b`)

// applyDDL applies a statement that changes tables (ddlStatement matched
// it) to the tables the source holds. DROP TABLE drops them; ALTER TABLE,
// RENAME TABLE and CREATE TABLE are parsed and applied where the source
// follows every clause.
func (b *binlogReader[T]) applyDDL(conn *client.Conn, schema, q string, st queryStatus) *ddlEdit {
	// The statement's lines stay as they are: its string literals (the
	// members of an ENUM) may span them.
	m := ddlStatement.FindStringSubmatch(trimComments(q))
	if m == nil {
		return notApplied("not a statement that changes tables")
	}
	head := strings.ToUpper(strings.Join(strings.Fields(m[1]), " "))
	e := &ddlEdit{tables: map[string]*draft{}, renames: map[string]string{}}
	var stmt string
	switch {
	case strings.HasPrefix(head, "DROP") && strings.Contains(head, "TEMPORARY"):
		return notApplied("a temporary table may hide a table of the same name")
	case strings.HasPrefix(head, "DROP"):
		_, names, _ := ddlTables(schema, q)
		for _, n := range names {
			e.set(n[0], n[1], nil)
		}
		return e
	case strings.HasPrefix(head, "ALTER"):
		// ONLINE, IGNORE and IF EXISTS (MariaDB's) do not change what a
		// logged statement did.
		stmt = "ALTER TABLE " + m[2]
	case strings.HasPrefix(head, "RENAME"):
		stmt = "RENAME TABLE " + m[2]
	case head == "CREATE OR REPLACE TABLE":
		stmt = "CREATE TABLE " + m[2]
	case strings.HasPrefix(head, "CREATE"):
		stmt = m[1] + " " + m[2]
	default:
		return notApplied("a statement the source does not apply")
	}
	if !st.known {
		return notApplied("the event does not say the statement's sql_mode")
	}
	if st.sqlMode&uint64(foreignModes) != 0 {
		return notApplied("the statement ran under a sql_mode of another database's types")
	}
	if b.r.facts == nil {
		f, err := readServerFacts(conn)
		if err != nil {
			return notApplied(err.Error())
		}
		b.r.facts = f
	}
	if !isASCII(stmt) && !b.r.facts.utf8Client(st.clientCollation) {
		return notApplied("the statement's text is not UTF-8")
	}
	if nationalTypes.MatchString(stmt) {
		return notApplied("the statement declares a national character type")
	}
	if b.parser == nil {
		b.parser = parser.New()
	}
	b.parser.SetSQLMode(pmysql.SQLMode(st.sqlMode) & parserModes)
	stmts, _, err := b.parser.Parse(stmt, "", "")
	if err != nil {
		return notApplied(fmt.Sprintf("the parser does not read it (%v)", err))
	}
	if len(stmts) != 1 {
		return notApplied("the parser reads more than one statement")
	}
	var why string
	switch s := stmts[0].(type) {
	case *ast.AlterTableStmt:
		why = b.applyAlter(conn, e, schema, s, st)
	case *ast.RenameTableStmt:
		b.applyRename(e, schema, s)
	case *ast.CreateTableStmt:
		why = b.applyCreate(conn, e, schema, s, st, head == "CREATE OR REPLACE TABLE")
	default:
		why = "a statement the source does not apply"
	}
	if why != "" {
		return notApplied(why)
	}
	return e
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// nameOf returns a table's database and name, in the default database
// schema where the statement names none.
func nameOf(schema string, t *ast.TableName) (string, string) {
	if t.Schema.O != "" {
		return t.Schema.O, t.Name.O
	}
	return schema, t.Name.O
}

// columnChange is a column an ALTER TABLE clause adds (from "") or
// declares anew (MODIFY, CHANGE, RENAME COLUMN), and where it puts it.
type columnChange struct {
	from string
	col  column
	pos  *ast.ColumnPosition
	pk   bool
}

// positioned tells whether the clause places the column (FIRST, AFTER).
func (c *columnChange) positioned() bool { return c.pos != nil && c.pos.Tp != ast.ColumnPositionNone }

// applyAlter applies ALTER TABLE to the table the source holds, as the
// server does (mysql_prepare_alter_table): the table's columns are taken
// in their order, less those dropped, a column declared anew in its place;
// then the columns added, and those placed, in the order of their clauses,
// at the end, FIRST or AFTER a column of the new list, a column placed
// anew leaving its place first; then the keys, whose columns take their
// new names all at once (RENAME COLUMN a TO b, RENAME COLUMN b TO a swaps
// them). A clause that would fail on the server (a column that exists
// added, one that does not dropped) says that the source's table is not
// the server's, and nothing is applied.
func (b *binlogReader[T]) applyAlter(conn *client.Conn, e *ddlEdit, schema string, s *ast.AlterTableStmt, st queryStatus) string {
	db, name := nameOf(schema, s.Table)
	before := b.r.tables[db+"."+name]
	if before == nil {
		return "the source does not hold the table"
	}
	if before.collation == "" {
		// A table restored from a checkpoint written before the source
		// kept its default collation.
		if err := readTableCollation(conn, before); err != nil {
			return err.Error()
		}
	}
	d := draftOf(before, "", "")
	t := d.t
	var moveTo *ast.TableName
	// Table options first: a new default character set is that of the
	// columns the statement declares.
	for _, sp := range s.Specs {
		switch sp.Tp {
		case ast.AlterTableOption:
			if why := b.tableOptions(t, sp.Options); why != "" {
				return why
			}
		case ast.AlterTableRenameTable:
			moveTo = sp.NewTable
		}
	}
	dropped := map[string]bool{}
	changed := map[string]*columnChange{}
	var changes []*columnChange // declared anew, in the order of their clauses
	var placed []*columnChange  // added or placed, in the order of their clauses
	var newKeys []*ast.Constraint
	dropPK := false
	has := func(n string) bool { return t.column(n) >= 0 }
	touched := func(n string) bool { return dropped[strings.ToLower(n)] || changed[strings.ToLower(n)] != nil }
	for _, sp := range s.Specs {
		switch sp.Tp {
		case ast.AlterTableAddColumns:
			for _, def := range sp.NewColumns {
				n := def.Name.Name.O
				if has(n) && sp.IfNotExists {
					continue
				}
				c, why := b.r.facts.columnOf(def, t.collation, st)
				if why != "" {
					return why
				}
				ch := &columnChange{col: c.col, pk: c.pk}
				if len(sp.NewColumns) == 1 {
					ch.pos = sp.Position
				}
				placed = append(placed, ch)
			}
			newKeys = append(newKeys, sp.NewConstraints...)
		case ast.AlterTableDropColumn:
			n := sp.OldColumnName.Name.O
			switch {
			case !has(n) && sp.IfExists:
			case !has(n) || touched(n):
				return fmt.Sprintf("it drops column %s, which the source's table does not have", n)
			case slices.ContainsFunc(d.pk, func(k string) bool { return strings.EqualFold(k, n) }):
				return fmt.Sprintf("it drops column %s of the primary key", n)
			default:
				dropped[strings.ToLower(n)] = true
			}
		case ast.AlterTableModifyColumn, ast.AlterTableChangeColumn:
			def := sp.NewColumns[0]
			from := def.Name.Name.O
			if sp.Tp == ast.AlterTableChangeColumn {
				from = sp.OldColumnName.Name.O
			}
			if !has(from) && sp.IfExists {
				continue
			}
			if !has(from) || touched(from) {
				return fmt.Sprintf("it changes column %s, which the source's table does not have", from)
			}
			c, why := b.r.facts.columnOf(def, t.collation, st)
			if why != "" {
				return why
			}
			ch := &columnChange{from: t.cols[t.column(from)].name, col: c.col, pos: sp.Position, pk: c.pk}
			changed[strings.ToLower(from)] = ch
			changes = append(changes, ch)
			if ch.positioned() {
				placed = append(placed, ch)
			}
		case ast.AlterTableRenameColumn:
			from := sp.OldColumnName.Name.O
			if !has(from) || touched(from) {
				return fmt.Sprintf("it renames column %s, which the source's table does not have", from)
			}
			c := t.cols[t.column(from)]
			ch := &columnChange{from: c.name, col: c}
			ch.col.name = sp.NewColumnName.Name.O
			changed[strings.ToLower(from)] = ch
			changes = append(changes, ch)
		case ast.AlterTableAlterColumn:
			// SET DEFAULT and DROP DEFAULT change no column's type.
			if n := sp.NewColumns[0].Name.Name.O; !has(n) {
				return fmt.Sprintf("it alters column %s, which the source's table does not have", n)
			}
		case ast.AlterTableAddConstraint:
			newKeys = append(newKeys, sp.Constraint)
		case ast.AlterTableDropPrimaryKey:
			dropPK = true
		case ast.AlterTableDropIndex:
			dropPK = dropPK || strings.EqualFold(sp.Name, "PRIMARY")
		case ast.AlterTableOption, ast.AlterTableRenameTable,
			ast.AlterTableDropForeignKey, ast.AlterTableRenameIndex, ast.AlterTableLock, ast.AlterTableAlgorithm,
			ast.AlterTableForce, ast.AlterTableEnableKeys, ast.AlterTableDisableKeys, ast.AlterTableIndexInvisible,
			ast.AlterTableOrderByColumns, ast.AlterTableAlterCheck, ast.AlterTableDropCheck,
			ast.AlterTableAddPartitions, ast.AlterTableCoalescePartitions, ast.AlterTableDropPartition,
			ast.AlterTableTruncatePartition, ast.AlterTablePartition, ast.AlterTableRemovePartitioning,
			ast.AlterTableRebuildPartition, ast.AlterTableReorganizePartition, ast.AlterTableCheckPartitions,
			ast.AlterTableOptimizePartition, ast.AlterTableRepairPartition, ast.AlterTableWithValidation,
			ast.AlterTableWithoutValidation:
			// No column changes.
		default:
			return "a clause the source does not follow"
		}
	}
	// The columns kept, or declared anew in their place: one its clause
	// places stays there until the clause moves it, as the server keeps
	// it, so that a column placed before it may be placed after it.
	type slot struct {
		col column
		ch  *columnChange
	}
	var slots []slot
	for _, c := range t.cols {
		switch ch := changed[strings.ToLower(c.name)]; {
		case dropped[strings.ToLower(c.name)]:
		case ch == nil:
			slots = append(slots, slot{col: c})
		default:
			slots = append(slots, slot{col: ch.col, ch: ch})
		}
	}
	// The columns added, and placed.
	for _, ch := range placed {
		if ch.from != "" {
			slots = slices.DeleteFunc(slots, func(s slot) bool { return s.ch == ch })
		}
		at := len(slots)
		if ch.pos != nil {
			switch ch.pos.Tp {
			case ast.ColumnPositionFirst:
				at = 0
			case ast.ColumnPositionAfter:
				j := slices.IndexFunc(slots, func(s slot) bool { return strings.EqualFold(s.col.name, ch.pos.RelativeColumn.Name.O) })
				if j < 0 {
					return fmt.Sprintf("it places column %s after %s, which the table does not have then", ch.col.name, ch.pos.RelativeColumn.Name.O)
				}
				at = j + 1
			}
		}
		slots = slices.Insert(slots, at, slot{col: ch.col, ch: ch})
	}
	cols := make([]column, len(slots))
	for i, s := range slots {
		cols[i] = s.col
	}
	t.cols = cols
	for i := range cols {
		for j := range i {
			if strings.EqualFold(cols[i].name, cols[j].name) {
				return fmt.Sprintf("it leaves two columns named %s", cols[i].name)
			}
		}
	}
	// The renames, and the keys: a key's columns are renamed by their
	// names before the statement, all at once.
	newNames := map[string]string{}
	var added []*columnChange
	for _, ch := range changes {
		if ch.from != ch.col.name {
			e.renames[ch.from] = ch.col.name
		}
		newNames[strings.ToLower(ch.from)] = ch.col.name
		added = append(added, ch)
	}
	for i, k := range d.pk {
		if n, ok := newNames[strings.ToLower(k)]; ok {
			d.pk[i] = n
		}
	}
	for _, ch := range placed {
		if ch.from == "" {
			added = append(added, ch)
		}
	}
	if dropPK {
		d.pk = nil
	}
	for _, ch := range added {
		if ch.pk {
			newKeys = append(newKeys, &ast.Constraint{Tp: ast.ConstraintPrimaryKey, Keys: []*ast.IndexPartSpecification{{Column: &ast.ColumnName{Name: ast.NewCIStr(ch.col.name)}}}})
		}
	}
	for _, k := range newKeys {
		if why := d.addConstraint(k); why != "" {
			return why
		}
	}
	for _, k := range d.pk {
		t.cols[t.column(k)].notNull = true // a column of the primary key is NOT NULL
	}
	if moveTo == nil {
		e.set(db, name, d)
		return ""
	}
	toDB, toName := nameOf(schema, moveTo)
	if toDB == db && toName == name {
		e.set(db, name, d)
		return ""
	}
	e.set(db, name, nil)
	t.db, t.name = toDB, toName
	if !b.r.cfg.captures(toDB, toName) {
		d = nil
	}
	e.set(toDB, toName, d)
	return ""
}

// addConstraint applies ADD of a key or constraint: only a primary key
// changes what the source holds, its columns becoming NOT NULL.
func (d *draft) addConstraint(k *ast.Constraint) string {
	switch k.Tp {
	case ast.ConstraintPrimaryKey:
		if len(d.pk) > 0 {
			return "it adds a second primary key"
		}
		var pk []string
		for _, part := range k.Keys {
			if part.Column == nil || part.Expr != nil {
				return "a primary key on an expression"
			}
			j := d.t.column(part.Column.Name.O)
			if j < 0 {
				return fmt.Sprintf("a primary key on column %s, which the source's table does not have", part.Column.Name.O)
			}
			pk = append(pk, d.t.cols[j].name)
		}
		for _, n := range pk {
			d.t.cols[d.t.column(n)].notNull = true
		}
		d.pk = pk
	case ast.ConstraintKey, ast.ConstraintIndex, ast.ConstraintUniq, ast.ConstraintUniqKey, ast.ConstraintUniqIndex,
		ast.ConstraintForeignKey, ast.ConstraintFulltext, ast.ConstraintCheck:
	default:
		return "a key of a kind the source does not follow"
	}
	return ""
}

// tableOptions applies table options: ENGINE, and the default character
// set and collation, which the table's new text columns take; the others
// change no column. CONVERT TO CHARACTER SET changes the types of text
// columns as the server sees fit, and is not applied.
func (b *binlogReader[T]) tableOptions(t *tableInfo, opts []*ast.TableOption) string {
	var cs, coll string
	for _, o := range opts {
		switch o.Tp {
		case ast.TableOptionEngine:
			t.engine = o.StrValue
		case ast.TableOptionCharset:
			if o.UintValue == ast.TableOptionCharsetWithConvertTo {
				return "it converts the table's text columns to another character set"
			}
			if o.Default || o.StrValue == "" {
				return "it sets the table's character set to the database's"
			}
			cs = o.StrValue
		case ast.TableOptionCollate:
			coll = o.StrValue
		case ast.TableOptionAutoIncrement, ast.TableOptionComment, ast.TableOptionAvgRowLength, ast.TableOptionCheckSum,
			ast.TableOptionCompression, ast.TableOptionKeyBlockSize, ast.TableOptionMaxRows, ast.TableOptionMinRows,
			ast.TableOptionDelayKeyWrite, ast.TableOptionRowFormat, ast.TableOptionStatsPersistent,
			ast.TableOptionStatsAutoRecalc, ast.TableOptionPackKeys, ast.TableOptionStatsSamplePages,
			ast.TableOptionEncryption, ast.TableOptionTableCheckSum, ast.TableOptionInsertMethod,
			ast.TableOptionTablespace, ast.TableOptionDataDirectory, ast.TableOptionIndexDirectory,
			ast.TableOptionConnection, ast.TableOptionPassword, ast.TableOptionUnion, ast.TableOptionNodegroup,
			ast.TableOptionEngineAttribute, ast.TableOptionSecondaryEngine, ast.TableOptionSecondaryEngineNull:
		default:
			return "a table option the source does not follow"
		}
	}
	if cs == "" && coll == "" {
		return ""
	}
	f := b.r.facts
	collation := f.collation(coll)
	if coll == "" {
		collation = f.charsetDefault(cs)
	}
	if collation == "" {
		return "a character set or collation the server does not list"
	}
	t.collation = collation
	return ""
}

// applyRename applies RENAME TABLE: its renames in turn (a TO tmp, b TO
// a, tmp TO b swaps a and b). A table the source does not hold renamed
// into the captured tables is described.
func (b *binlogReader[T]) applyRename(e *ddlEdit, schema string, s *ast.RenameTableStmt) {
	type state struct {
		d     *draft
		known bool
	}
	now := map[string]state{}
	var order [][2]string
	get := func(db, name string) state {
		id := db + "." + name
		if st, ok := now[id]; ok {
			return st
		}
		order = append(order, [2]string{db, name})
		if t := b.r.tables[id]; t != nil {
			return state{d: draftOf(t, "", ""), known: true}
		}
		return state{}
	}
	for _, tt := range s.TableToTables {
		fromDB, fromName := nameOf(schema, tt.OldTable)
		toDB, toName := nameOf(schema, tt.NewTable)
		from := get(fromDB, fromName)
		get(toDB, toName)
		now[fromDB+"."+fromName] = state{known: true}
		if from.d != nil {
			from.d.t.db, from.d.t.name = toDB, toName
		}
		now[toDB+"."+toName] = from
	}
	for _, n := range order {
		st := now[n[0]+"."+n[1]]
		switch {
		case !b.r.cfg.captures(n[0], n[1]):
			e.set(n[0], n[1], nil)
		case st.known:
			e.set(n[0], n[1], st.d)
		}
	}
}

// applyCreate applies CREATE TABLE: the table is declared from the
// statement's columns and keys (or, for CREATE TABLE ... LIKE, as the
// table it copies, where the source holds it).
func (b *binlogReader[T]) applyCreate(conn *client.Conn, e *ddlEdit, schema string, s *ast.CreateTableStmt, st queryStatus, replace bool) string {
	db, name := nameOf(schema, s.Table)
	if !b.r.cfg.captures(db, name) {
		e.set(db, name, nil)
		return ""
	}
	if s.Select != nil || s.TemporaryKeyword != ast.TemporaryNone {
		return "a table created from a query, or a temporary one"
	}
	if before := b.r.tables[db+"."+name]; before != nil && !replace {
		if s.IfNotExists {
			e.set(db, name, draftOf(before, "", "")) // the table stays as it is
			return ""
		}
		return "it creates a table the source holds"
	}
	if s.ReferTable != nil {
		refDB, refName := nameOf(schema, s.ReferTable)
		src := b.r.tables[refDB+"."+refName]
		if src == nil {
			return "it copies a table the source does not hold"
		}
		e.set(db, name, draftOf(src, db, name))
		return ""
	}
	d := &draft{t: &tableInfo{db: db, name: name, chunkKey: -1}}
	if why := b.tableOptions(d.t, s.Options); why != "" {
		return why
	}
	if d.t.collation == "" {
		r, err := conn.Execute("SELECT DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = " + quoteString(db))
		if err != nil {
			return fmt.Sprintf("reading the default collation of database %s: %v", db, err)
		}
		if r.RowNumber() > 0 {
			d.t.collation = strings.ToLower(text(r, 0, 0))
		}
		r.Close()
	}
	for _, def := range s.Cols {
		if d.t.column(def.Name.Name.O) >= 0 {
			return fmt.Sprintf("column %s is declared twice", def.Name.Name.O)
		}
		c, why := b.r.facts.columnOf(def, d.t.collation, st)
		if why != "" {
			return why
		}
		d.t.cols = append(d.t.cols, c.col)
		if c.pk {
			if len(d.pk) > 0 {
				return "a second primary key"
			}
			d.pk = []string{c.col.name}
		}
	}
	for _, k := range s.Constraints {
		if why := d.addConstraint(k); why != "" {
			return why
		}
	}
	e.set(db, name, d)
	return ""
}
