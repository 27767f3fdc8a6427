package mysqlcdc

import (
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// The rows of the binary log carry no column names (unless the server
// logs full metadata), only values in the order of the table's columns
// when they were written: the source decodes them by the table it holds.
// Before it decodes a table's rows it checks, once per table map event,
// that the event's columns are those of that table: their number, the
// type each is logged as and, where the server logs them
// (binlog_row_metadata = FULL), their names. A table the source described
// from the server after a statement it did not apply, and which changed
// again after it, fails the check where its columns differ in any of
// these, rather than being decoded with the wrong columns.

// mappedTable is a table map event checked against a table the source
// holds.
type mappedTable struct {
	tm *replication.TableMapEvent
	t  *tableInfo
}

// checkTableMap checks a rows event's table map against the table the
// source holds, once per table map event and table.
func (b *binlogReader[T]) checkTableMap(t *tableInfo, e *replication.RowsEvent, start position) error {
	tm := e.Table
	id := t.id()
	if m, ok := b.mapped[id]; ok && m.tm == tm && m.t == t {
		return nil
	}
	if !tableMapFits(t, tm) {
		logged, held := tableMapColumns(tm), heldColumns(t)
		if b.r.schemaEvent != nil {
			return fmt.Errorf("mysql-cdc: at binlog %s table %s has the columns (%s), and the source holds it with the columns (%s): the table changed in a way the source did not follow through the binary log (it described the table from the server, after a statement it does not apply or when it started at an earlier place of the binary log, and the server had changed the table again since); its rows are not read with the wrong columns. Start the pipeline again without its checkpoints, to snapshot the table anew, or exclude the table with 'tables.exclude'",
				start, id, logged, held)
		}
		return fmt.Errorf("mysql-cdc: at binlog %s table %s has the columns (%s), and the job read them as (%s) when it started: the table's schema changed between this place of the binary log and the job's start; start the job from a place after the change, or declare the SQL table as the table is here",
			start, id, logged, held)
	}
	if b.mapped == nil {
		b.mapped = map[string]mappedTable{}
	}
	b.mapped[id] = mappedTable{tm: tm, t: t}
	return nil
}

// tableMapFits tells whether a table map's columns are those of table t:
// as many, each logged as its type is, and of its name where the server
// logs names.
func tableMapFits(t *tableInfo, tm *replication.TableMapEvent) bool {
	if int(tm.ColumnCount) != len(t.cols) || len(tm.ColumnType) != len(t.cols) {
		return false
	}
	names := len(tm.ColumnName) == len(t.cols)
	for i := range t.cols {
		var meta uint16
		if i < len(tm.ColumnMeta) {
			meta = tm.ColumnMeta[i]
		}
		if !loggedAs(&t.cols[i], tm.ColumnType[i], meta) {
			return false
		}
		if names && !strings.EqualFold(string(tm.ColumnName[i]), t.cols[i].name) {
			return false
		}
	}
	return true
}

// The types MariaDB logs its compressed columns as.
const (
	mariadbVarcharCompressed = 140
	mariadbBlobCompressed    = 141
)

// realType returns the type a column of a table map is: a STRING column
// is a CHAR or BINARY, an ENUM or a SET, as the first byte of its
// metadata says (less the bits of a long column's length it holds).
func realType(typ byte, meta uint16) byte {
	if typ != mysql.MYSQL_TYPE_STRING || meta == 0 {
		return typ
	}
	rt := byte(meta >> 8)
	if rt&0x30 != 0x30 {
		rt |= 0x30
	}
	return rt
}

// loggedAs tells whether a column of the type the source holds for c can
// be logged as typ. The servers log some types in more than one way
// (temporal types in their old and new formats, JSON as MySQL's own or as
// MariaDB's LONGTEXT); a column of a type the source does not read is
// not checked.
func loggedAs(c *column, typ byte, meta uint16) bool {
	rt := realType(typ, meta)
	in := func(types ...byte) bool {
		for _, x := range types {
			if rt == x {
				return true
			}
		}
		return false
	}
	switch c.dataType {
	case "tinyint":
		return in(mysql.MYSQL_TYPE_TINY)
	case "smallint":
		return in(mysql.MYSQL_TYPE_SHORT)
	case "mediumint":
		return in(mysql.MYSQL_TYPE_INT24)
	case "int", "integer":
		return in(mysql.MYSQL_TYPE_LONG)
	case "bigint":
		return in(mysql.MYSQL_TYPE_LONGLONG)
	case "year":
		return in(mysql.MYSQL_TYPE_YEAR)
	case "bit":
		return in(mysql.MYSQL_TYPE_BIT)
	case "decimal", "numeric":
		return in(mysql.MYSQL_TYPE_NEWDECIMAL, mysql.MYSQL_TYPE_DECIMAL)
	case "float":
		return in(mysql.MYSQL_TYPE_FLOAT)
	case "double", "real":
		return in(mysql.MYSQL_TYPE_DOUBLE)
	case "char", "binary":
		return in(mysql.MYSQL_TYPE_STRING)
	case "varchar", "varbinary":
		return in(mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING, mariadbVarcharCompressed)
	case "enum":
		return in(mysql.MYSQL_TYPE_ENUM)
	case "set":
		return in(mysql.MYSQL_TYPE_SET)
	case "tinytext", "text", "mediumtext", "longtext", "tinyblob", "blob", "mediumblob", "longblob":
		return in(mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB, mariadbBlobCompressed)
	case "json":
		return in(mysql.MYSQL_TYPE_JSON, mysql.MYSQL_TYPE_BLOB)
	case "date":
		return in(mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE)
	case "time":
		return in(mysql.MYSQL_TYPE_TIME2, mysql.MYSQL_TYPE_TIME)
	case "datetime":
		return in(mysql.MYSQL_TYPE_DATETIME2, mysql.MYSQL_TYPE_DATETIME)
	case "timestamp":
		return in(mysql.MYSQL_TYPE_TIMESTAMP2, mysql.MYSQL_TYPE_TIMESTAMP)
	}
	return true
}

// loggedTypeNames names the types of the binary log.
var loggedTypeNames = map[byte]string{
	mysql.MYSQL_TYPE_DECIMAL: "decimal", mysql.MYSQL_TYPE_TINY: "tinyint", mysql.MYSQL_TYPE_SHORT: "smallint",
	mysql.MYSQL_TYPE_LONG: "int", mysql.MYSQL_TYPE_FLOAT: "float", mysql.MYSQL_TYPE_DOUBLE: "double",
	mysql.MYSQL_TYPE_NULL: "null", mysql.MYSQL_TYPE_TIMESTAMP: "timestamp", mysql.MYSQL_TYPE_LONGLONG: "bigint",
	mysql.MYSQL_TYPE_INT24: "mediumint", mysql.MYSQL_TYPE_DATE: "date", mysql.MYSQL_TYPE_TIME: "time",
	mysql.MYSQL_TYPE_DATETIME: "datetime", mysql.MYSQL_TYPE_YEAR: "year", mysql.MYSQL_TYPE_NEWDATE: "date",
	mysql.MYSQL_TYPE_VARCHAR: "varchar", mysql.MYSQL_TYPE_BIT: "bit", mysql.MYSQL_TYPE_TIMESTAMP2: "timestamp",
	mysql.MYSQL_TYPE_DATETIME2: "datetime", mysql.MYSQL_TYPE_TIME2: "time", mysql.MYSQL_TYPE_JSON: "json",
	mysql.MYSQL_TYPE_NEWDECIMAL: "decimal", mysql.MYSQL_TYPE_ENUM: "enum", mysql.MYSQL_TYPE_SET: "set",
	mysql.MYSQL_TYPE_TINY_BLOB: "blob", mysql.MYSQL_TYPE_MEDIUM_BLOB: "blob", mysql.MYSQL_TYPE_LONG_BLOB: "blob",
	mysql.MYSQL_TYPE_BLOB: "blob or text", mysql.MYSQL_TYPE_VAR_STRING: "varchar", mysql.MYSQL_TYPE_STRING: "char",
	mysql.MYSQL_TYPE_GEOMETRY: "geometry", mariadbVarcharCompressed: "compressed varchar", mariadbBlobCompressed: "compressed blob or text",
}

// tableMapColumns lists a table map's columns: each one's type as the
// binary log says it, after its name where the server logs names.
func tableMapColumns(tm *replication.TableMapEvent) string {
	parts := make([]string, len(tm.ColumnType))
	for i, typ := range tm.ColumnType {
		var meta uint16
		if i < len(tm.ColumnMeta) {
			meta = tm.ColumnMeta[i]
		}
		name, ok := loggedTypeNames[realType(typ, meta)]
		if !ok {
			name = fmt.Sprintf("type %d", realType(typ, meta))
		}
		if i < len(tm.ColumnName) {
			name = string(tm.ColumnName[i]) + " " + name
		}
		parts[i] = name
	}
	return strings.Join(parts, ", ")
}

// heldColumns lists the columns of a table the source holds, with their
// types.
func heldColumns(t *tableInfo) string {
	parts := make([]string, len(t.cols))
	for i, c := range t.cols {
		parts[i] = c.name + " " + c.columnType
	}
	return strings.Join(parts, ", ")
}
