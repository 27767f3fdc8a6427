package postgrescdc

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/jackc/pglogrepl"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc"
	"github.com/eddystream/eddy/pipeline"
	"github.com/eddystream/eddy/sql/types"
)

// pipelineSpec is the 'source' block of a pipeline of type postgres: the
// options of the postgres-cdc connector with Flink CDC's pipeline keys:
// 'tables' (database.schema.table patterns) in place of 'database-name',
// 'schema-name' and 'table-name', 'heartbeat.interval' in place of
// 'heartbeat.interval.ms', and no 'changelog-mode' (each table's changes
// carry their old rows when its replica identity is FULL).
var pipelineSpec = cdc.PipelineSpec(spec, "postgres",
	"Reads every table of a PostgreSQL database that 'tables' matches, for a pipeline: a lock-free, parallel "+
		"snapshot of their rows, then their changes and schema changes from a logical replication slot (pgoutput), exactly once "+
		"through checkpoints. The server needs wal_level = logical.",
	"The tables to capture: comma-separated 'database.schema.table' patterns, all of one database (a name), whose schema and table parts are regular expressions matched whole; '\\.' is a regular expression's '.' (app_db.public.\\.* is every table of schema public).",
	"columns added, dropped, renamed or retyped, new tables, TRUNCATE; with 'schema-change.capture' = 'event-trigger' also renamed and dropped tables",
	[]string{"database-name", "schema-name", "table-name", "heartbeat.interval.ms", "changelog-mode"},
	connector.Option{Key: "heartbeat.interval", Type: connector.Duration, Default: "30 s",
		Description: "How often the source reports its position to the server and asks for the server's: while the captured tables are idle, the position follows the WAL the server writes, so that the slot does not hold it back after the next checkpoint."},
)

// PipelineSource is a postgres source of pipeline events.
type PipelineSource struct{ cfg *config }

// NewPipelineSource returns a source of the pipeline events of the tables
// the validated options of a 'type: postgres' source block select.
func NewPipelineSource(o connector.Options) (*PipelineSource, error) {
	cfg, err := newConfigFor(o, true)
	if err != nil {
		return nil, err
	}
	return &PipelineSource{cfg: cfg}, nil
}

// NewEnumerator returns the source's enumerator.
func (s *PipelineSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return newEnumerator(ctx, s.cfg, nil, restored)
}

// NewReader returns the reader of one subtask.
func (s *PipelineSource) NewReader(ctx connector.ReaderContext) (connector.Reader[pipeline.Event], error) {
	r := newReader(ctx, s.cfg, nil, func(t *tableInfo, kind changelog.Kind, row types.Row) pipeline.Event {
		return cdc.DataChange(t.tableID(), t.schema, kind, row)
	})
	r.schemaEvent = func(e pipeline.Event) pipeline.Event { return e }
	return r, nil
}

type pipelineFactory struct{}

func (pipelineFactory) Spec() connector.Spec { return pipelineSpec }

func (pipelineFactory) NewSource(ctx connector.Context) (any, error) {
	return NewPipelineSource(ctx.Options)
}

func init() { pipeline.Sources.Register(pipelineFactory{}) }

// tableID is the table's id in a pipeline: its schema and name, as Flink
// CDC's postgres pipeline source names tables (the database is the
// source's one, left out).
func (t *tableInfo) tableID() pipeline.TableID {
	return pipeline.TableID{Schema: t.namespace, Table: t.name}
}

// pipelineTable gives a described table its row type and schema in a
// pipeline, from the server's column types.
func (c *config) pipelineTable(t *tableInfo, version int) error {
	fields := make([]types.Field, len(t.cols))
	t.toRow = make([]int, len(t.cols))
	for i := range t.cols {
		fields[i] = types.F(t.cols[i].name, pipelineType(&t.cols[i]))
		t.toRow[i] = i
	}
	schema, err := cdc.PipelineSchema(fields, t.pk, version)
	if err != nil {
		return fmt.Errorf("postgres-cdc: table %s: %w", t.id(), err)
	}
	t.schema, t.rt, t.w = schema, schema.Columns, types.NewRowWriter(schema.Columns, types.NewArena(64<<10))
	return nil
}

// plainTypes are the SQL types in a pipeline of the column types that take
// no parameters, by typname.
var plainTypes = map[string]types.Type{
	"int2": types.SmallInt(), "int4": types.Int(), "int8": types.BigInt(),
	"float4": types.Float(), "float8": types.Double(), "bool": types.Boolean(),
	"bytea": types.Bytes(), "date": types.DateType(),
}

// pipelineType returns the SQL type of a column in a pipeline. Types the
// source reads as values map to their SQL types (the mapping the SQL
// source's compatibility check accepts); numeric without a precision (or
// with more than 38 digits) is STRING, holding the exact value as the
// server writes it, since no DECIMAL holds all of its values; every other
// type (interval, money, inet, bit, arrays, ranges, xml, ...) is STRING
// too, the server's text of the value.
func pipelineType(col *column) types.Type {
	ps := cdc.TypeParams(col.typeName)
	param := func(i, def int) int {
		if i < len(ps) {
			return ps[i]
		}
		return def
	}
	precision := func() int { return min(max(param(0, 6), 0), types.MaxTimePrecision) }
	t, ok := plainTypes[col.typname]
	switch {
	case ok:
	case col.typname == "numeric":
		t = types.String()
		if p, s := param(0, 0), param(1, 0); p >= 1 && p <= types.MaxDecimalPrecision && s >= 0 && s <= p {
			t = types.DecimalType(p, s)
		}
	case col.typname == "bpchar":
		t = types.Char(max(param(0, 1), 1))
	case col.typname == "varchar" && len(ps) == 1 && ps[0] >= 1:
		t = types.VarChar(ps[0])
	case col.typname == "time":
		t = types.TimeType(precision())
	case col.typname == "timestamp":
		t = types.TimestampType(precision())
	case col.typname == "timestamptz":
		t = types.TimestampLTZType(precision())
	default:
		t = types.String()
	}
	if col.notNull {
		t = t.NotNull()
	}
	return t
}

// sortedTables returns the tables sorted by id.
func sortedTables(m map[string]*tableInfo) []*tableInfo { return cdc.SortedValues(m) }

// announce emits, in a pipeline, the schema of every captured table when
// the stream starts to be read, so that the sink creates the tables that
// have no rows yet.
func (s *streamReader[T]) announce(split connector.SplitOutput[T]) {
	if s.r.schemaEvent == nil {
		return
	}
	for _, t := range sortedTables(s.r.tables) {
		split.Emit(s.r.schemaEvent(pipeline.Event{Kind: pipeline.CreateTable, Table: t.tableID(), Schema: t.schema}))
	}
}

// schemaChange emits a schema event of a pipeline, if the source is to.
// It counts as one change of the transaction, so that a restore within
// the transaction, which reads it again from its start, does not emit it
// again.
func (s *streamReader[T]) schemaChange(split connector.SplitOutput[T], e pipeline.Event) {
	s.rows++
	if s.rows <= s.skip {
		return
	}
	if s.r.cfg.schemaChanges {
		split.Emit(s.r.schemaEvent(e))
	}
}

// saveTxTables keeps the tables as they were when the transaction began,
// before a schema change in it changes them.
func (s *streamReader[T]) saveTxTables() {
	if s.inTx && s.txTables == nil {
		s.txTables = maps.Clone(s.r.tables)
	}
}

// pipelineRelation follows, in a pipeline, a relation of the stream: the
// columns of a table at this point of the WAL, which pgoutput sends before
// the first change of the table in a session and again after its columns
// changed. The table's rows from here on are decoded with them; when they
// differ from the table's schema so far, an AlterTable event says how. A
// captured table the source did not know yet (created after the start, in
// a publication FOR ALL TABLES) gets a CreateTable event. A known table
// (by its oid) under a new name was renamed: it is dropped under its old
// name and created under the new one, as a DDL message says it (ddl.go).
func (s *streamReader[T]) pipelineRelation(split connector.SplitOutput[T], rel *pglogrepl.RelationMessage) error {
	r := s.r
	id := rel.Namespace + "." + rel.RelationName
	old := r.tables[id]
	byOID := r.tableByOID(rel.RelationID)
	if old != nil && old.oid != rel.RelationID && old.oid != 0 {
		// Another table has the name now: the one known by it was dropped
		// or renamed.
		s.saveTxTables()
		delete(r.tables, id)
		s.schemaChange(split, pipeline.Event{Kind: pipeline.DropTable, Table: old.tableID(), Schema: old.schema})
		old = nil
	}
	if byOID != nil && byOID.id() != id {
		s.saveTxTables()
		delete(r.tables, byOID.id())
		r.ctx.Log().Info("postgres-cdc: a captured table was renamed; it is dropped under its old name", "table", byOID.id(), "to", id, "lsn", pglogrepl.LSN(s.txLSN))
		s.schemaChange(split, pipeline.Event{Kind: pipeline.DropTable, Table: byOID.tableID(), Schema: byOID.schema})
	}
	if old == nil && !r.cfg.captures(rel.Namespace, rel.RelationName) {
		s.rels[rel.RelationID] = nil
		return nil
	}
	var t *tableInfo
	if r.cfg.ddlTrigger && old != nil && sameRelation(old, rel) {
		// The event triggers' messages keep the table as it is at this
		// point of the WAL, and the relation agrees: the catalog, which
		// may have changed since, has nothing to add.
		t = old.withIdentity(rel.ReplicaIdentity == 'f')
	} else {
		var err error
		if t, err = s.relationTable(old, rel); err != nil {
			return err
		}
	}
	s.rels[rel.RelationID] = t
	if old != nil && t.schema.Same(old.schema) {
		// The same columns: the rows keep their schema object.
		t.schema, t.rt, t.w = old.schema, old.rt, old.w
		if t != old && (t.full != old.full || !slices.Equal(attnums(t), attnums(old))) {
			s.saveTxTables()
			r.tables[id] = t
		}
		return nil
	}
	s.saveTxTables()
	r.tables[id] = t
	if old == nil {
		if byOID != nil {
			r.ctx.Log().Warn("postgres-cdc: a table was renamed into the captured tables; its rows from before are not read, only its changes from now on",
				"table", id, "lsn", pglogrepl.LSN(s.txLSN))
		} else {
			r.ctx.Log().Info("postgres-cdc: a new table joins the pipeline; its changes are read from here on", "table", id, "lsn", pglogrepl.LSN(s.txLSN))
		}
		s.schemaChange(split, pipeline.Event{Kind: pipeline.CreateTable, Table: t.tableID(), Schema: t.schema})
		return nil
	}
	changes := pipeline.Diff(old.schema, t.schema, renamesByAttnum(old, t))
	if t.guessed && dropsAndAdds(changes) {
		r.ctx.Log().Warn("postgres-cdc: a table's columns changed and its catalog has changed again since, so the source cannot tell a renamed column from a dropped and an added one: it reports them dropped and added (under 'evolve' the sink loses the values of a renamed column); 'schema-change.capture' = 'event-trigger' tells renames exactly",
			"table", id, "lsn", pglogrepl.LSN(s.txLSN), "changes", fmt.Sprint(changes))
	}
	s.schemaChange(split, pipeline.Event{Kind: pipeline.AlterTable, Table: t.tableID(), Schema: t.schema, Changes: changes})
	return nil
}

// sameRelation tells whether a relation has the columns of a known table,
// by name, type and type modifier, in its order, and its oid.
func sameRelation(t *tableInfo, rel *pglogrepl.RelationMessage) bool {
	if t.oid != rel.RelationID || len(t.cols) != len(rel.Columns) {
		return false
	}
	for i, rc := range rel.Columns {
		c := &t.cols[i]
		if c.name != rc.Name || c.typeOID != rc.DataType || c.typmod != rc.TypeModifier {
			return false
		}
	}
	return true
}

// withIdentity returns t, or a copy of it with the replica identity full
// set as given.
func (t *tableInfo) withIdentity(full bool) *tableInfo {
	if t.full == full {
		return t
	}
	c := *t
	c.full = full
	return &c
}

// dropsAndAdds tells whether changes drop a column and add one.
func dropsAndAdds(changes []pipeline.SchemaChange) bool {
	var drop, add bool
	for _, c := range changes {
		drop = drop || c.Kind == pipeline.DropColumn
		add = add || c.Kind == pipeline.AddColumn
	}
	return drop && add
}

// attnums returns the numbers of a table's columns.
func attnums(t *tableInfo) []int {
	out := make([]int, len(t.cols))
	for i := range t.cols {
		out[i] = t.cols[i].attnum
	}
	return out
}

// relationTable makes the table a relation describes. A relation names
// columns without their numbers: when the catalog's columns (read now, by
// the relation's id) have the relation's names in its order, they are the
// relation's, and give each its number, so that a column of a known
// number under a new name is a renamed one; otherwise (the table has
// changed again since) columns are matched by name, and the table is
// marked guessed. Its columns' types come from the relation (each type's
// name from the catalog, for a column that is new or has a new type); a
// column stays NOT NULL while the catalog says so, and a new one is as the
// catalog has it now (a relation does not say). The primary key is the
// one known so far, less dropped columns, or for a new table the
// catalog's.
func (s *streamReader[T]) relationTable(old *tableInfo, rel *pglogrepl.RelationMessage) (*tableInfo, error) {
	r := s.r
	conn, err := r.connection()
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	t := &tableInfo{namespace: rel.Namespace, name: rel.RelationName, oid: rel.RelationID, chunkKey: -1, full: rel.ReplicaIdentity == 'f'}
	oid := strconv.FormatUint(uint64(rel.RelationID), 10)
	rows, err := query(ctx, conn, "SELECT attname, attnotnull, attnum, "+generatedExpr(ctx, conn)+
		" FROM pg_attribute a WHERE attrelid = "+oid+" AND attnum > 0 AND NOT attisdropped ORDER BY attnum")
	if err != nil {
		return nil, fmt.Errorf("postgres-cdc: reading the columns of %s: %w", t.id(), err)
	}
	notNull := map[string]bool{}
	var catalog []string
	var numbers []int
	for _, row := range rows {
		notNull[string(row[0])] = string(row[1]) == "t"
		if string(row[3]) != "t" {
			n, _ := strconv.Atoi(string(row[2]))
			catalog, numbers = append(catalog, string(row[0])), append(numbers, n)
		}
	}
	names := make([]string, len(rel.Columns))
	for i, rc := range rel.Columns {
		names[i] = rc.Name
	}
	exact := slices.Equal(names, catalog)
	t.guessed = !exact
	for i, rc := range rel.Columns {
		nn, inCatalog := notNull[rc.Name]
		attnum := 0
		if exact {
			attnum = numbers[i]
		}
		j := -1
		if old != nil {
			if exact {
				j = old.attnumColumn(attnum)
			}
			if j < 0 && (!exact || !old.numbered()) {
				j = old.exactColumn(rc.Name)
			}
		}
		if j >= 0 && old.cols[j].typeOID == rc.DataType && old.cols[j].typmod == rc.TypeModifier {
			c := old.cols[j]
			c.name = rc.Name
			c.notNull = c.notNull && (nn || !inCatalog)
			if exact {
				c.attnum = attnum
			}
			t.cols = append(t.cols, c)
			continue
		}
		if j >= 0 && !exact {
			attnum = old.cols[j].attnum // the same name: taken for the same column
		}
		c := column{name: rc.Name, typeOID: rc.DataType, typmod: rc.TypeModifier, notNull: nn, attnum: attnum}
		ty, err := query(ctx, conn, fmt.Sprintf("SELECT format_type(oid, %d), typname, typtype FROM pg_type WHERE oid = %d", rc.TypeModifier, rc.DataType))
		if err != nil {
			return nil, fmt.Errorf("postgres-cdc: reading the type of column %s of %s: %w", rc.Name, t.id(), err)
		}
		if len(ty) == 1 {
			c.typeName, c.typname, c.kind = string(ty[0][0]), string(ty[0][1]), kindOf(string(ty[0][1]), string(ty[0][2]))
		} else {
			// A type dropped since: its values are read as text.
			c.typeName = "type " + strconv.FormatUint(uint64(rc.DataType), 10)
		}
		t.cols = append(t.cols, c)
	}
	version := 1
	if old != nil {
		version = old.schema.Version + 1
		t.pk, t.chunkKey = old.keysIn(t)
	} else {
		keys, err := query(ctx, conn, `SELECT a.attname FROM pg_index i
			CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
			JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
			WHERE i.indrelid = `+oid+` AND i.indisprimary ORDER BY k.ord`)
		if err != nil {
			return nil, fmt.Errorf("postgres-cdc: reading the primary key of %s: %w", t.id(), err)
		}
		for _, k := range keys {
			if j := t.exactColumn(string(k[0])); j >= 0 {
				t.pk = append(t.pk, j)
			}
		}
	}
	if err := r.cfg.pipelineTable(t, version); err != nil {
		return nil, err
	}
	return t, nil
}

// exactColumn returns the index of the column called name, or -1.
func (t *tableInfo) exactColumn(name string) int {
	for i := range t.cols {
		if t.cols[i].name == name {
			return i
		}
	}
	return -1
}
