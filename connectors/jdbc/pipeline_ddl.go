package jdbc

import (
	"fmt"
	"slices"
	"strings"

	"github.com/eddystream/eddy/pipeline"
	"github.com/eddystream/eddy/sql/types"
)

// The DDL a pipeline's sink runs to create and evolve its tables. Every
// statement is safe to run again (IF [NOT] EXISTS, or preceded by a look at
// the table's columns), because a transaction of the exactly-once sink may
// be written again after a failure.

// tableName returns the name of a sink table in the dialect, quoted: its
// schema (a PostgreSQL schema, a MySQL database) and its name.
func tableName(dialect string, id pipeline.TableID) string {
	quote := quotePGIdent
	if dialect == "mysql" {
		quote = quoteMySQLIdent
	}
	if id.Schema == "" {
		return quote(id.Table)
	}
	return quote(id.Schema) + "." + quote(id.Table)
}

// columnType returns the dialect's type of a column; key columns of MySQL
// get types an index can hold.
func columnType(dialect string, t types.Type, key bool) string {
	var s string
	if dialect == "postgres" {
		s = pgType(t)
	} else {
		s = mysqlType(t, key)
	}
	if !t.IsNullable() || key {
		s += " NOT NULL"
	}
	return s
}

func pgType(t types.Type) string {
	switch t.Kind() {
	case types.KindBoolean:
		return "boolean"
	case types.KindTinyInt, types.KindSmallInt:
		return "smallint"
	case types.KindInt:
		return "integer"
	case types.KindBigInt:
		return "bigint"
	case types.KindFloat:
		return "real"
	case types.KindDouble:
		return "double precision"
	case types.KindDecimal:
		return fmt.Sprintf("numeric(%d, %d)", t.Precision(), t.Scale())
	case types.KindChar:
		return fmt.Sprintf("char(%d)", t.Length())
	case types.KindVarChar:
		if t.Length() >= 10485760 {
			return "text"
		}
		return fmt.Sprintf("varchar(%d)", t.Length())
	case types.KindBinary, types.KindVarBinary:
		return "bytea"
	case types.KindDate:
		return "date"
	case types.KindTime:
		return fmt.Sprintf("time(%d)", min(t.Precision(), 6))
	case types.KindTimestamp:
		return fmt.Sprintf("timestamp(%d)", min(t.Precision(), 6))
	case types.KindTimestampLTZ:
		return fmt.Sprintf("timestamptz(%d)", min(t.Precision(), 6))
	}
	return "text"
}

func mysqlType(t types.Type, key bool) string {
	switch t.Kind() {
	case types.KindBoolean:
		return "boolean"
	case types.KindTinyInt:
		return "tinyint"
	case types.KindSmallInt:
		return "smallint"
	case types.KindInt:
		return "int"
	case types.KindBigInt:
		return "bigint"
	case types.KindFloat:
		return "float"
	case types.KindDouble:
		return "double"
	case types.KindDecimal:
		return fmt.Sprintf("decimal(%d, %d)", t.Precision(), t.Scale())
	case types.KindChar:
		if t.Length() <= 255 {
			return fmt.Sprintf("char(%d)", t.Length())
		}
		return mysqlType(types.VarChar(t.Length()), key)
	case types.KindVarChar:
		switch {
		case key && t.Length() > 768:
			// An index holds 3072 bytes: 768 characters of utf8mb4.
			return "varchar(768)"
		case t.Length() <= 16383:
			return fmt.Sprintf("varchar(%d)", t.Length())
		}
		return "longtext"
	case types.KindBinary:
		if t.Length() <= 255 {
			return fmt.Sprintf("binary(%d)", t.Length())
		}
		return mysqlType(types.VarBinary(t.Length()), key)
	case types.KindVarBinary:
		switch {
		case key && t.Length() > 3072:
			return "varbinary(3072)"
		case t.Length() <= 65535:
			return fmt.Sprintf("varbinary(%d)", t.Length())
		}
		return "longblob"
	case types.KindDate:
		return "date"
	case types.KindTime:
		return fmt.Sprintf("time(%d)", min(t.Precision(), 6))
	case types.KindTimestamp, types.KindTimestampLTZ:
		// TIMESTAMP_LTZ values are written as their UTC wall clock.
		return fmt.Sprintf("datetime(%d)", min(t.Precision(), 6))
	}
	return "longtext"
}

// createStatements returns the statements that create a table (and its
// schema or database) when it is missing.
func createStatements(dialect string, id pipeline.TableID, s *pipeline.Schema) []string {
	var out []string
	quote := quotePGIdent
	if dialect == "mysql" {
		quote = quoteMySQLIdent
		if id.Schema != "" {
			out = append(out, "CREATE DATABASE IF NOT EXISTS "+quote(id.Schema))
		}
	} else if id.Schema != "" {
		out = append(out, "CREATE SCHEMA IF NOT EXISTS "+quote(id.Schema))
	}
	var cols []string
	for _, f := range s.Columns.Fields() {
		cols = append(cols, quote(f.Name)+" "+columnType(dialect, f.Type, slices.Contains(s.PrimaryKey, f.Name)))
	}
	if len(s.PrimaryKey) > 0 {
		keys := make([]string, len(s.PrimaryKey))
		for i, k := range s.PrimaryKey {
			keys[i] = quote(k)
		}
		cols = append(cols, "PRIMARY KEY ("+strings.Join(keys, ", ")+")")
	}
	return append(out, "CREATE TABLE IF NOT EXISTS "+tableName(dialect, id)+" ("+strings.Join(cols, ", ")+")")
}

// alterStatement returns the statement of a column change, given the
// columns the table has now; "" when the table already has the change.
func alterStatement(dialect string, id pipeline.TableID, s *pipeline.Schema, c pipeline.SchemaChange, has map[string]bool) string {
	quote := quotePGIdent
	if dialect == "mysql" {
		quote = quoteMySQLIdent
	}
	table := "ALTER TABLE " + tableName(dialect, id) + " "
	switch c.Kind {
	case pipeline.AddColumn:
		if has[c.Column] {
			return ""
		}
		return table + "ADD COLUMN " + quote(c.Column) + " " + columnType(dialect, c.Type, false)
	case pipeline.DropColumn:
		if !has[c.Column] {
			return ""
		}
		return table + "DROP COLUMN " + quote(c.Column)
	case pipeline.RenameColumn:
		if !has[c.Column] || has[c.NewName] {
			return ""
		}
		return table + "RENAME COLUMN " + quote(c.Column) + " TO " + quote(c.NewName)
	}
	if !has[c.Column] {
		return ""
	}
	key := slices.Contains(s.PrimaryKey, c.Column)
	if dialect == "mysql" {
		return table + "MODIFY COLUMN " + quote(c.Column) + " " + columnType(dialect, c.Type, key)
	}
	t := pgType(c.Type)
	q := table + "ALTER COLUMN " + quote(c.Column) + " TYPE " + t + " USING " + quote(c.Column) + "::" + t
	if !c.Type.IsNullable() || key {
		q += ", ALTER COLUMN " + quote(c.Column) + " SET NOT NULL"
	} else {
		q += ", ALTER COLUMN " + quote(c.Column) + " DROP NOT NULL"
	}
	return q
}
