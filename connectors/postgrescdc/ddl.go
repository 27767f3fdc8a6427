package postgrescdc

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pglogrepl"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/pipeline"
)

// ddlMessage is a message of eddy's event triggers (ddl_trigger.go): a
// table that a DDL statement created, altered or dropped.
type ddlMessage struct {
	V         int         `json:"v"`
	Op        string      `json:"op"` // create, alter or drop
	OID       uint32      `json:"oid"`
	Schema    string      `json:"schema"`
	Table     string      `json:"table"`
	ReplIdent string      `json:"replident"`
	Columns   []ddlColumn `json:"columns"`
	PK        []int       `json:"pk"` // attnums
	DDL       string      `json:"ddl"`
}

// ddlColumn is a column of a ddlMessage, as pg_attribute has it.
type ddlColumn struct {
	N         int    `json:"n"`
	Name      string `json:"name"`
	Type      uint32 `json:"type"`
	Typmod    int32  `json:"typmod"`
	Format    string `json:"format"`
	Typname   string `json:"typname"`
	Typtype   string `json:"typtype"`
	NotNull   bool   `json:"notnull"`
	Generated bool   `json:"generated"`
}

func (d *ddlMessage) id() string { return d.Schema + "." + d.Table }

// columnNames returns the names of the columns pgoutput sends: all but the
// generated ones.
func (d *ddlMessage) columnNames() []string {
	var names []string
	for _, c := range d.Columns {
		if !c.Generated {
			names = append(names, c.Name)
		}
	}
	return names
}

// logicalMessage handles a logical decoding message of the stream: those
// of eddy's event triggers say how the captured tables change; others are
// left alone.
func (s *streamReader[T]) logicalMessage(split connector.SplitOutput[T], data []byte) error {
	var m pglogrepl.LogicalDecodingMessage
	if err := m.Decode(data[1:]); err != nil {
		return fmt.Errorf("postgres-cdc: a logical decoding message at %s: %w", pglogrepl.LSN(s.txLSN), err)
	}
	if m.Prefix != ddlPrefix || !m.Transactional || s.skipTx || !s.inTx {
		return nil
	}
	var d ddlMessage
	if err := json.Unmarshal(m.Content, &d); err != nil {
		return fmt.Errorf("postgres-cdc: the event trigger's message at %s (commit %s) is not what eddy writes: %w", m.LSN, pglogrepl.LSN(s.txLSN), err)
	}
	if d.V != ddlMessageVersion {
		return fmt.Errorf("postgres-cdc: the event trigger's message at %s (commit %s) has version %d, and this eddy reads version %d: the database's event triggers were installed by another version of eddy; run this version once with 'schema-change.capture' = 'event-trigger' as a superuser (it installs its own), then restart the job",
			m.LSN, pglogrepl.LSN(s.txLSN), d.V, ddlMessageVersion)
	}
	if s.r.schemaEvent == nil {
		return s.sqlDDL(&d)
	}
	return s.pipelineDDL(split, &d)
}

// sqlDDL stops a SQL table's source when a DDL statement drops or renames
// one of its tables or changes its columns: a SQL table's columns are
// fixed when the job starts.
func (s *streamReader[T]) sqlDDL(d *ddlMessage) error {
	t := s.r.tableByOID(d.OID)
	if t == nil {
		return nil
	}
	at := pglogrepl.LSN(s.txLSN)
	switch {
	case d.Op == "drop":
		return fmt.Errorf("postgres-cdc: table %s was dropped (commit %s) by %q: its changes end there; start the job afresh for a table that replaces it (a new 'slot.name', without its checkpoints)",
			t.id(), at, d.DDL)
	case d.id() != t.id():
		return fmt.Errorf("postgres-cdc: table %s was renamed to %s (commit %s) by %q: a SQL table's source reads the tables it found at the start; make 'schema-name' and 'table-name' match the new name and start the job again from a savepoint",
			t.id(), d.id(), at, d.DDL)
	}
	names := d.columnNames()
	if slices.Equal(names, columnNamesOf(t)) {
		return nil
	}
	return fmt.Errorf("postgres-cdc: table %s has columns %v after %q (commit %s) and had (%s) when the job started: a SQL table's columns are fixed when the job starts; declare the new columns and start the job again from a savepoint",
		t.id(), names, d.DDL, at, t.columnNames())
}

func columnNamesOf(t *tableInfo) []string {
	names := make([]string, len(t.cols))
	for i := range t.cols {
		names[i] = t.cols[i].name
	}
	return names
}

// pipelineDDL follows, in a pipeline, a table that a DDL statement created,
// altered, renamed or dropped. Columns are matched by number: a column of
// the same number under a new name is a RENAME COLUMN. A renamed table (a
// known oid under a new name) is dropped under its old name and, if
// 'tables' captures the new one, created under it, as mysql-cdc does: the
// sink's new table has the rows changed from then on. The relations that
// follow agree with the tables the messages leave, so they say nothing
// more.
func (s *streamReader[T]) pipelineDDL(split connector.SplitOutput[T], d *ddlMessage) error {
	r := s.r
	old := r.tableByOID(d.OID)
	captured := d.Op != "drop" && r.cfg.captures(d.Schema, d.Table)
	if old == nil && !captured {
		return nil
	}
	emit := func(e pipeline.Event) {
		e.DDL = d.DDL
		s.schemaChange(split, e)
	}
	s.saveTxTables()
	if old != nil && (d.Op == "drop" || old.id() != d.id()) {
		delete(r.tables, old.id())
		s.rels[d.OID] = nil
		emit(pipeline.Event{Kind: pipeline.DropTable, Table: old.tableID(), Schema: old.schema})
		if d.Op == "drop" || !captured {
			return nil
		}
		old = nil
	}
	t, err := s.ddlTable(old, d)
	if err != nil {
		return err
	}
	r.tables[t.id()] = t
	if _, ok := s.rels[d.OID]; ok {
		s.rels[d.OID] = t
	}
	if old == nil {
		if d.Op != "create" {
			r.ctx.Log().Warn("postgres-cdc: a table was renamed into the captured tables; its rows from before are not read, only its changes from now on",
				"table", t.id(), "commit", pglogrepl.LSN(s.txLSN))
		}
		emit(pipeline.Event{Kind: pipeline.CreateTable, Table: t.tableID(), Schema: t.schema})
		return nil
	}
	if t.schema.Same(old.schema) {
		t.schema, t.rt, t.w = old.schema, old.rt, old.w
		return nil
	}
	emit(pipeline.Event{Kind: pipeline.AlterTable, Table: t.tableID(), Schema: t.schema,
		Changes: pipeline.Diff(old.schema, t.schema, renamesByAttnum(old, t))})
	return nil
}

// ddlTable makes the table a message describes, the next version of old
// (nil for a table new to the pipeline). The primary key is old's, less
// dropped columns, as for a relation; a new table's is the message's.
func (s *streamReader[T]) ddlTable(old *tableInfo, d *ddlMessage) (*tableInfo, error) {
	t := &tableInfo{namespace: d.Schema, name: d.Table, oid: d.OID, chunkKey: -1, full: d.ReplIdent == "f"}
	for _, c := range d.Columns {
		if c.Generated {
			continue // pgoutput leaves generated columns out
		}
		t.cols = append(t.cols, column{name: c.Name, typeName: c.Format, kind: kindOf(c.Typname, c.Typtype), typname: c.Typname,
			typeOID: c.Type, typmod: c.Typmod, notNull: c.NotNull, attnum: c.N})
	}
	version := 1
	if old != nil {
		version = old.schema.Version + 1
		t.pk, t.chunkKey = old.keysIn(t)
	} else {
		for _, n := range d.PK {
			if j := t.attnumColumn(n); j >= 0 {
				t.pk = append(t.pk, j)
			}
		}
	}
	if err := s.r.cfg.pipelineTable(t, version); err != nil {
		return nil, err
	}
	return t, nil
}

// renamesByAttnum returns the columns of old that t has under another
// name, old name to new.
func renamesByAttnum(old, t *tableInfo) map[string]string {
	renames := map[string]string{}
	for _, c := range old.cols {
		if c.attnum == 0 {
			continue
		}
		if j := t.attnumColumn(c.attnum); j >= 0 && t.cols[j].name != c.name {
			renames[c.name] = t.cols[j].name
		}
	}
	return renames
}

// attnumColumn returns the index of the column numbered attnum, or -1.
func (t *tableInfo) attnumColumn(attnum int) int {
	for i := range t.cols {
		if attnum != 0 && t.cols[i].attnum == attnum {
			return i
		}
	}
	return -1
}

// sameColumn returns the index in t of a column c of an earlier version
// of the table: the column of its number, or if its number is unknown, of
// its name; -1 if t has none.
func (t *tableInfo) sameColumn(c *column) int {
	if c.attnum != 0 {
		return t.attnumColumn(c.attnum)
	}
	return t.exactColumn(c.name)
}

// keysIn returns the primary key and chunk key of t, a later version of
// the table, as they are in the table: the same columns, less those t
// lacks.
func (old *tableInfo) keysIn(t *tableInfo) (pk []int, chunkKey int) {
	for _, k := range old.pk {
		if j := t.sameColumn(&old.cols[k]); j >= 0 {
			pk = append(pk, j)
		}
	}
	chunkKey = -1
	if old.chunkKey >= 0 {
		chunkKey = t.sameColumn(&old.cols[old.chunkKey])
	}
	return pk, chunkKey
}

// tableByOID returns the captured table of a relation id, or nil.
func (r *reader[T]) tableByOID(oid uint32) *tableInfo {
	for _, t := range r.tables {
		if t.oid == oid {
			return t
		}
	}
	return nil
}
