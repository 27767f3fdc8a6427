package postgrescdc

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/eddystream/eddy/internal/cdc"
	"github.com/eddystream/eddy/pipeline"
	"github.com/eddystream/eddy/sql/types"
)

// valueKind is how the source reads a column's text.
type valueKind uint8

const (
	kindUnmapped    valueKind = iota
	kindInt                   // smallint, integer, bigint
	kindNumeric               // numeric(p, s)
	kindFloat                 // real, double precision
	kindBool                  // boolean
	kindText                  // char, varchar, text, json, jsonb, uuid, enums
	kindBytea                 // bytea
	kindDate                  // date
	kindTime                  // time without time zone
	kindTimestamp             // timestamp without time zone
	kindTimestampTZ           // timestamp with time zone
)

// kindOf maps a type (pg_type's typname and typtype) to how it is read.
func kindOf(typname, typtype string) valueKind {
	if typtype == "e" {
		return kindText
	}
	switch typname {
	case "int2", "int4", "int8":
		return kindInt
	case "numeric":
		return kindNumeric
	case "float4", "float8":
		return kindFloat
	case "bool":
		return kindBool
	case "bpchar", "varchar", "text", "json", "jsonb", "uuid":
		return kindText
	case "bytea":
		return kindBytea
	case "date":
		return kindDate
	case "time":
		return kindTime
	case "timestamp":
		return kindTimestamp
	case "timestamptz":
		return kindTimestampTZ
	}
	return kindUnmapped
}

// column is a column of a captured table, as the server declares it.
type column struct {
	name     string
	typeName string // format_type: integer, numeric(10,2), character varying(32), ...
	kind     valueKind
	// typname is pg_type's name of the type (int4, varchar, ...), typeOID
	// and typmod the type and its modifier as pg_attribute and pgoutput's
	// relations give them; notNull is pg_attribute's attnotnull.
	typname string
	typeOID uint32
	typmod  int32
	notNull bool
	// attnum is the column's number in pg_attribute, which a rename keeps
	// and no other column ever takes: schema changes match columns by it.
	// 0 if unknown.
	attnum int
}

// tableInfo is a captured table: its columns in the server's order, its
// primary key and chunk key, and where each column goes in the SQL table's
// rows.
type tableInfo struct {
	namespace, name string // its schema and name
	oid             uint32
	cols            []column
	pk              []int // indexes in cols
	// chunkKey is the index in cols of the integer column the snapshot is
	// split on, -1 if the table is read as one chunk.
	chunkKey int
	// full tells whether the table has REPLICA IDENTITY FULL: updates and
	// deletes then carry the whole old row.
	full bool
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
	// guessed is set on a table made from a relation whose columns the
	// catalog no longer had: they are matched with the table's earlier
	// columns by name, not by number.
	guessed bool
}

// id is the table's name as splits and messages name it: schema.table.
func (t *tableInfo) id() string { return t.namespace + "." + t.name }

// quoted is the table's name quoted for SQL.
func (t *tableInfo) quoted() string { return quoteIdent(t.namespace) + "." + quoteIdent(t.name) }

// column returns the index of the column called name (an exact match
// first, then without regard to case), or -1.
func (t *tableInfo) column(name string) int { return cdc.ColumnIndex(t.cols, columnName, name) }

func (t *tableInfo) columnNames() string { return cdc.ColumnNames(t.cols, columnName) }

func columnName(c *column) string { return c.name }

// discover lists the tables the source captures, with their columns, and
// maps them onto the SQL table's schema. With identity, it checks their
// replica identity against 'changelog-mode', warning through log (if set)
// of tables an upsert stream reads without their old rows.
func (c *config) discover(ctx context.Context, conn *pgconn.PgConn, schema *types.RowType, log *slog.Logger, identity bool) ([]*tableInfo, error) {
	rows, err := query(ctx, conn, `SELECT c.oid, n.nspname, c.relname, c.relreplident FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_%'`)
	if err != nil {
		return nil, fmt.Errorf("postgres-cdc: listing tables: %w", err)
	}
	var tables []*tableInfo
	for _, r := range rows {
		s, name := string(r[1]), string(r[2])
		if !c.captures(s, name) {
			continue
		}
		oid, _ := strconv.ParseUint(string(r[0]), 10, 32)
		tables = append(tables, &tableInfo{namespace: s, name: name, oid: uint32(oid), chunkKey: -1, full: string(r[3]) == "f"})
	}
	if len(tables) == 0 && c.pipeline {
		return nil, fmt.Errorf("postgres-cdc: no table of database '%s' matches 'tables' = '%s' on %s (or the user may not see it: it needs USAGE on the schema and SELECT on the tables)",
			c.database, c.tableExpr, c.addr())
	}
	if len(tables) == 0 {
		return nil, fmt.Errorf("postgres-cdc: no table of database '%s' matches 'schema-name' = '%s' and 'table-name' = '%s' on %s (or the user may not see it: it needs USAGE on the schema and SELECT on the tables)",
			c.database, c.schemaExpr, c.tableExpr, c.addr())
	}
	sort.Slice(tables, func(i, j int) bool { return tables[i].id() < tables[j].id() })
	for _, t := range tables {
		if err := c.describe(ctx, conn, t, schema); err != nil {
			return nil, err
		}
		if !identity {
			continue
		}
		if !t.full && !c.upsert && !c.pipeline {
			return nil, fmt.Errorf("postgres-cdc: table %s does not have REPLICA IDENTITY FULL, so its updates and deletes do not carry the old row that 'changelog-mode' = 'all' emits: run ALTER TABLE %s REPLICA IDENTITY FULL, or set 'changelog-mode' = 'upsert'",
				t.id(), t.quoted())
		}
		if !t.full && log != nil && c.pipeline {
			log.Warn("postgres-cdc: table without REPLICA IDENTITY FULL: its updates go down the pipeline without their old rows (+U alone) and its deletes with the key alone; an update that leaves an out-of-line (TOAST) value unchanged will stop the job (ALTER TABLE ... REPLICA IDENTITY FULL prevents both)",
				"table", t.id())
		} else if !t.full && log != nil {
			log.Warn("postgres-cdc: table without REPLICA IDENTITY FULL: its updates carry no old row and its deletes only the key; an update that leaves an out-of-line (TOAST) value unchanged will stop the job (ALTER TABLE ... REPLICA IDENTITY FULL prevents both)",
				"table", t.id())
		}
	}
	return tables, nil
}

// generatedExpr returns the expression that tells, in a query of
// pg_attribute a, whether a column is generated: generated columns came
// with PostgreSQL 12.
func generatedExpr(ctx context.Context, conn *pgconn.PgConn) string {
	if v, err := query(ctx, conn, "SHOW server_version_num"); err == nil && len(v) == 1 {
		if n, _ := strconv.Atoi(string(v[0][0])); n >= 120000 {
			return "a.attgenerated <> ''"
		}
	}
	return "false"
}

// numbered tells whether the table's columns have their numbers.
func (t *tableInfo) numbered() bool { return len(t.cols) > 0 && t.cols[0].attnum != 0 }

// describe reads a table's columns and keys. Its columns are those
// pgoutput sends: generated columns are left out of its relations and
// rows, so the snapshot leaves them out too.
func (c *config) describe(ctx context.Context, conn *pgconn.PgConn, t *tableInfo, schema *types.RowType) error {
	oid := strconv.FormatUint(uint64(t.oid), 10)
	rows, err := query(ctx, conn, `SELECT a.attname, format_type(a.atttypid, a.atttypmod), ty.typname, ty.typtype, `+generatedExpr(ctx, conn)+`,
		a.atttypid, a.atttypmod, a.attnotnull, a.attnum
		FROM pg_attribute a JOIN pg_type ty ON ty.oid = a.atttypid
		WHERE a.attrelid = `+oid+` AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`)
	if err != nil {
		return fmt.Errorf("postgres-cdc: reading the columns of %s: %w", t.id(), err)
	}
	var generated []string
	for _, r := range rows {
		if string(r[4]) == "t" {
			generated = append(generated, string(r[0]))
			continue
		}
		oid, _ := strconv.ParseUint(string(r[5]), 10, 32)
		typmod, _ := strconv.ParseInt(string(r[6]), 10, 32)
		attnum, _ := strconv.Atoi(string(r[8]))
		t.cols = append(t.cols, column{name: string(r[0]), typeName: string(r[1]), kind: kindOf(string(r[2]), string(r[3])),
			typname: string(r[2]), typeOID: uint32(oid), typmod: int32(typmod), notNull: string(r[7]) == "t", attnum: attnum})
	}
	keys, err := query(ctx, conn, `SELECT a.attname FROM pg_index i
		CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
		WHERE i.indrelid = `+oid+` AND i.indisprimary ORDER BY k.ord`)
	if err != nil {
		return fmt.Errorf("postgres-cdc: reading the primary key of %s: %w", t.id(), err)
	}
	for _, r := range keys {
		if j := t.column(string(r[0])); j >= 0 {
			t.pk = append(t.pk, j)
		}
	}
	switch {
	case c.chunkKey != "":
		if t.chunkKey = t.column(c.chunkKey); t.chunkKey < 0 {
			return fmt.Errorf("postgres-cdc: table %s has no column %q ('scan.incremental.snapshot.chunk.key-column'); it has %s",
				t.id(), c.chunkKey, t.columnNames())
		}
	case len(t.pk) > 0:
		t.chunkKey = t.pk[0]
	default:
		return fmt.Errorf("postgres-cdc: table %s has no primary key: give it one (ALTER TABLE %s ADD PRIMARY KEY (...)), or name a column to split its snapshot on with 'scan.incremental.snapshot.chunk.key-column'",
			t.id(), t.quoted())
	}
	if t.cols[t.chunkKey].kind != kindInt {
		// Other keys order by collations and operators the source does
		// not reproduce: the table is read as one chunk.
		t.chunkKey = -1
	}
	t.toRow = make([]int, len(t.cols))
	for i := range t.toRow {
		t.toRow[i] = -1
	}
	if c.pipeline {
		return c.pipelineTable(t, 1)
	}
	for i, f := range schema.Fields() {
		j := t.column(f.Name)
		if j < 0 {
			for _, g := range generated {
				if strings.EqualFold(g, f.Name) {
					return fmt.Errorf("postgres-cdc: column %q of table %s is a generated column, which logical replication does not carry (pgoutput leaves it out of every change): leave it out of the SQL table, or compute it there (a computed column AS ...)",
						f.Name, t.id())
				}
			}
			return fmt.Errorf("postgres-cdc: table %s has no column %q of the SQL table; it has %s", t.id(), f.Name, t.columnNames())
		}
		if err := compatible(&t.cols[j], f.Type); err != nil {
			return fmt.Errorf("postgres-cdc: column %q of table %s (%s) cannot be read as %s: %w", f.Name, t.id(), t.cols[j].typeName, f.Type, err)
		}
		t.toRow[j] = i
	}
	return nil
}

// compatible checks that a column of the server can be read into a SQL
// column of type t.
func compatible(c *column, t types.Type) error {
	k := t.Kind()
	switch c.kind {
	case kindInt, kindNumeric, kindFloat:
		if t.IsNumeric() || t.IsString() {
			return nil
		}
	case kindBool:
		if k == types.KindBoolean || t.IsString() {
			return nil
		}
	case kindText:
		if t.IsString() {
			return nil
		}
	case kindBytea:
		if t.IsBinary() {
			return nil
		}
	case kindDate:
		if k == types.KindDate || t.IsString() {
			return nil
		}
	case kindTime:
		if k == types.KindTime || t.IsString() {
			return nil
		}
	case kindTimestamp:
		if k == types.KindTimestamp || t.IsString() {
			return nil
		}
	case kindTimestampTZ:
		if k == types.KindTimestampLTZ || k == types.KindTimestamp || t.IsString() {
			return nil
		}
	default:
		return fmt.Errorf("the source does not read columns of type %s; leave the column out of the SQL table", c.typeName)
	}
	return fmt.Errorf("declare it as a type that holds %s values", c.typeName)
}
