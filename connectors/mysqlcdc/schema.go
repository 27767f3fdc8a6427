package mysqlcdc

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/eddystream/eddy/internal/cdc"
	"github.com/eddystream/eddy/pipeline"
	"github.com/eddystream/eddy/sql/types"
)

// column is a column of a captured table, as the server declares it.
type column struct {
	name       string
	dataType   string // information_schema DATA_TYPE, lower case: int, varchar, ...
	columnType string // COLUMN_TYPE: int(10) unsigned, enum('a','b'), ...
	unsigned   bool
	notNull    bool
	// charset and collation are a string column's CHARACTER_SET_NAME and
	// COLLATION_NAME, "" for other columns.
	charset, collation string
	// values are the members of an ENUM or SET column.
	values []string
}

// tableInfo is a captured table: its columns in the server's order, its
// primary key and chunk key, and where each column goes in the SQL table's
// rows.
type tableInfo struct {
	db, name string
	cols     []column
	pk       []int // indexes in cols
	// chunkKey is the index in cols of the column the snapshot splits the
	// table on, -1 if it is read as one chunk; order is how the server
	// orders its values (orderNone for a table read as one chunk).
	chunkKey int
	order    keyOrder
	// engine is the table's storage engine, as the server names it
	// (InnoDB, MyISAM, ...).
	engine string
	// collation is the table's default collation, which a text column
	// added without one takes; "" where it is not known.
	collation string
	// toRow gives, for each column, the index of the SQL table's column it
	// fills, -1 if the table declares no such column.
	toRow []int
	// In a pipeline, rt is the type of the table's rows, w their writer and
	// schema the table's schema as the pipeline's events carry it.
	rt     *types.RowType
	w      *types.RowWriter
	schema *pipeline.Schema
	// version is the schema's version of a table decoded from a split,
	// before it is given its schema.
	version int
}

// id is the table's name as the source's splits name it.
func (t *tableInfo) id() string { return t.db + "." + t.name }

// isInteger tells whether a column holds integers.
func (c *column) isInteger() bool {
	switch c.dataType {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint":
		return true
	}
	return false
}

// discover lists the tables the source captures, with their columns, and
// maps them onto the SQL table's schema. None is an error unless held is
// set: the caller holds the tables from a checkpoint.
func (c *config) discover(conn *client.Conn, schema *types.RowType, held bool) ([]*tableInfo, error) {
	r, err := conn.Execute("SELECT TABLE_SCHEMA, TABLE_NAME, ENGINE, TABLE_COLLATION FROM information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE'")
	if err != nil {
		return nil, fmt.Errorf("mysql-cdc: listing tables: %w", err)
	}
	var tables []*tableInfo
	for i := 0; i < r.RowNumber(); i++ {
		db := text(r, i, 0)
		name := text(r, i, 1)
		if !c.captures(db, name) {
			continue
		}
		tables = append(tables, &tableInfo{db: db, name: name, chunkKey: -1, engine: text(r, i, 2), collation: strings.ToLower(text(r, i, 3))})
	}
	r.Close()
	if len(tables) == 0 && !held {
		if c.pipeline {
			return nil, fmt.Errorf("mysql-cdc: no table matches 'tables' = '%s' on %s (or the user may not see it: it needs SELECT on the tables)", c.tableExpr, c.addr())
		}
		return nil, fmt.Errorf("mysql-cdc: no table matches 'database-name' = '%s' and 'table-name' = '%s' on %s (or the user may not see it: it needs SELECT on the tables)",
			c.databaseExpr, c.tableExpr, c.addr())
	}
	sort.Slice(tables, func(i, j int) bool { return tables[i].id() < tables[j].id() })
	for _, t := range tables {
		if err := c.describe(conn, t, schema); err != nil {
			return nil, err
		}
	}
	return tables, nil
}

// captures tells whether the source captures table db.name.
func (c *config) captures(db, name string) bool {
	if c.pipeline {
		id := pipeline.TableID{Schema: db, Table: name}
		return c.tables.Matches(id) && (c.exclude == nil || !c.exclude.Matches(id))
	}
	return c.database.MatchString(db) && (c.table.MatchString(name) || c.table.MatchString(db+"."+name))
}

// describe reads a table's columns and keys and maps them onto the SQL
// table's schema, or, in a pipeline (schema nil), gives the table its own.
func (c *config) describe(conn *client.Conn, t *tableInfo, schema *types.RowType) error {
	if err := c.readColumns(conn, t); err != nil {
		return err
	}
	if len(t.cols) == 0 && schema == nil {
		return nil // a pipeline's table that is gone
	}
	if err := c.readPrimaryKey(conn, t); err != nil {
		return err
	}
	if t.collation == "" {
		if err := readTableCollation(conn, t); err != nil {
			return err
		}
	}
	return c.finish(t, schema, 1)
}

// readColumns reads a table's columns as information_schema declares
// them: none for a table that does not exist.
func (c *config) readColumns(conn *client.Conn, t *tableInfo) error {
	r, err := conn.Execute("SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, CHARACTER_SET_NAME, COLLATION_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = " +
		quoteString(t.db) + " AND TABLE_NAME = " + quoteString(t.name) + " ORDER BY ORDINAL_POSITION")
	if err != nil {
		return fmt.Errorf("mysql-cdc: reading the columns of %s: %w", t.id(), err)
	}
	defer r.Close()
	for i := 0; i < r.RowNumber(); i++ {
		name := text(r, i, 0)
		dt := text(r, i, 1)
		ct := text(r, i, 2)
		col := column{name: name, dataType: strings.ToLower(dt), columnType: strings.ToLower(ct), notNull: text(r, i, 3) == "NO",
			charset: strings.ToLower(text(r, i, 4)), collation: strings.ToLower(text(r, i, 5))}
		col.unsigned = strings.Contains(col.columnType, "unsigned")
		if col.dataType == "enum" || col.dataType == "set" {
			// The members keep their case: a checkpoint holds them as
			// COLUMN_TYPE gives them.
			if strings.HasPrefix(col.columnType, col.dataType+"(") {
				col.columnType = col.dataType + ct[len(col.dataType):]
			}
			col.values = enumValues(ct)
		}
		t.cols = append(t.cols, col)
	}
	return nil
}

// readPrimaryKey reads the columns of a table's primary key.
func (c *config) readPrimaryKey(conn *client.Conn, t *tableInfo) error {
	k, err := conn.Execute("SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE CONSTRAINT_NAME = 'PRIMARY' AND TABLE_SCHEMA = " +
		quoteString(t.db) + " AND TABLE_NAME = " + quoteString(t.name) + " ORDER BY ORDINAL_POSITION")
	if err != nil {
		return fmt.Errorf("mysql-cdc: reading the primary key of %s: %w", t.id(), err)
	}
	defer k.Close()
	for i := 0; i < k.RowNumber(); i++ {
		name := text(k, i, 0)
		if j := t.column(name); j >= 0 {
			t.pk = append(t.pk, j)
		}
	}
	return nil
}

// readTableCollation reads a table's default collation, which its new
// text columns take.
func readTableCollation(conn *client.Conn, t *tableInfo) error {
	r, err := conn.Execute("SELECT TABLE_COLLATION FROM information_schema.TABLES WHERE TABLE_SCHEMA = " +
		quoteString(t.db) + " AND TABLE_NAME = " + quoteString(t.name))
	if err != nil {
		return fmt.Errorf("mysql-cdc: reading the default collation of %s: %w", t.id(), err)
	}
	defer r.Close()
	if r.RowNumber() > 0 {
		t.collation = strings.ToLower(text(r, 0, 0))
	}
	return nil
}

// finish completes a table whose columns and primary key are known, read
// from the server or followed through the binary log's statements: its
// chunk key, the character sets it decodes, and its mapping onto the SQL
// table's schema, or, in a pipeline (schema nil), its own schema of the
// version.
func (c *config) finish(t *tableInfo, schema *types.RowType, version int) error {
	t.chunkKey, t.order = -1, orderNone
	switch {
	case c.chunkKey != "":
		if t.chunkKey = t.column(c.chunkKey); t.chunkKey < 0 {
			return fmt.Errorf("mysql-cdc: table %s has no column %q ('scan.incremental.snapshot.chunk.key-column'); it has %s",
				t.id(), c.chunkKey, t.columnNames())
		}
	case len(t.pk) > 0:
		t.chunkKey = t.pk[0]
	default:
		return fmt.Errorf("mysql-cdc: table %s has no primary key: give it one, or name a column to split its snapshot on with 'scan.incremental.snapshot.chunk.key-column' (an updated or deleted row is then matched by all its columns)", t.id())
	}
	if t.order = t.cols[t.chunkKey].keyOrder(); t.order == orderNone {
		// Other keys are compared by the server's collation, which the
		// source cannot reproduce: the table is read as one chunk.
		t.chunkKey = -1
	}
	t.toRow = make([]int, len(t.cols))
	for i := range t.toRow {
		t.toRow[i] = -1
	}
	if schema == nil {
		for j := range t.cols {
			if err := checkCharset(t, &t.cols[j]); err != nil {
				return err
			}
		}
		return c.pipelineTable(t, version)
	}
	for i, f := range schema.Fields() {
		j := t.column(f.Name)
		if j < 0 {
			return fmt.Errorf("mysql-cdc: table %s has no column %q of the SQL table; it has %s", t.id(), f.Name, t.columnNames())
		}
		if err := checkCharset(t, &t.cols[j]); err != nil {
			return err
		}
		if err := compatible(&t.cols[j], f.Type); err != nil {
			return fmt.Errorf("mysql-cdc: column %q of table %s (%s) cannot be read as %s: %w", f.Name, t.id(), t.cols[j].columnType, f.Type, err)
		}
		t.toRow[j] = i
	}
	return nil
}

// column returns the index of the column called name (without regard to
// case, as MySQL compares column names), or -1.
func (t *tableInfo) column(name string) int { return cdc.ColumnIndex(t.cols, columnName, name) }

func (t *tableInfo) columnNames() string { return cdc.ColumnNames(t.cols, columnName) }

func columnName(c *column) string { return c.name }

// enumEscapes maps the letter of an escape of COLUMN_TYPE's members to
// the character it stands for; any other character stands for itself.
var enumEscapes = strings.NewReplacer("0", "\x00", "n", "\n", "r", "\r", "Z", "\x1a")

// enumValues parses the members of enum('a','b') or set('a','b').
func enumValues(columnType string) []string {
	open, close := strings.IndexByte(columnType, '('), strings.LastIndexByte(columnType, ')')
	if open < 0 || close < open {
		return nil
	}
	s := columnType[open+1 : close]
	var out []string
	for len(s) > 0 {
		if s[0] != '\'' {
			s = s[1:]
			continue
		}
		var b strings.Builder
		i := 1
		for i < len(s) {
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					b.WriteByte('\'')
					i += 2
					continue
				}
				break
			}
			if s[i] == '\\' && i+1 < len(s) {
				// The server escapes NUL, line breaks and carriage
				// returns, and backslashes (append_unescaped).
				i++
				b.WriteString(enumEscapes.Replace(s[i : i+1]))
				i++
				continue
			}
			b.WriteByte(s[i])
			i++
		}
		out = append(out, b.String())
		s = s[min(i+1, len(s)):]
	}
	return out
}

// compatible checks that a column of the server can be read into a SQL
// column of type t.
func compatible(c *column, t types.Type) error {
	k := t.Kind()
	switch c.dataType {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year", "bit":
		if t.IsNumeric() || k == types.KindBoolean || t.IsString() {
			return nil
		}
	case "decimal", "numeric", "float", "double", "real":
		if t.IsNumeric() || t.IsString() {
			return nil
		}
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set", "json":
		if t.IsString() {
			return nil
		}
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		if t.IsBinary() || t.IsString() {
			return nil
		}
	case "date":
		if k == types.KindDate || t.IsString() {
			return nil
		}
	case "time":
		if k == types.KindTime || t.IsString() {
			return nil
		}
	case "datetime", "timestamp":
		if k == types.KindTimestamp || k == types.KindTimestampLTZ || t.IsString() {
			return nil
		}
	default:
		return fmt.Errorf("the source does not read columns of type %s; leave the column out of the SQL table", c.dataType)
	}
	return fmt.Errorf("declare it as a type that holds %s values", c.dataType)
}
