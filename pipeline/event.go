package pipeline

import (
	"strings"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/types"
)

// TableID names a table: a namespace (a catalog), a schema (a MySQL
// database, a PostgreSQL schema) and a name, the first two possibly empty.
type TableID struct {
	Namespace, Schema, Table string
}

// ParseTableID reads a dotted name: "table", "schema.table" or
// "namespace.schema.table".
func ParseTableID(s string) TableID {
	parts := strings.Split(s, ".")
	switch len(parts) {
	case 1:
		return TableID{Table: parts[0]}
	case 2:
		return TableID{Schema: parts[0], Table: parts[1]}
	}
	return TableID{Namespace: parts[0], Schema: parts[1], Table: strings.Join(parts[2:], ".")}
}

// String writes the id dotted, without its empty parts.
func (t TableID) String() string {
	var parts []string
	for _, p := range []string{t.Namespace, t.Schema, t.Table} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ".")
}

// EventKind says what an Event is.
type EventKind uint8

const (
	// DataChange is a change of a row: an insert, an update (-U then +U)
	// or a delete.
	DataChange EventKind = iota
	// CreateTable announces a table and its schema.
	CreateTable
	// AlterTable says the table's schema changed (Event.Changes) and is
	// now Event.Schema.
	AlterTable
	// TruncateTable says every row of the table was deleted.
	TruncateTable
	// DropTable says the table is gone.
	DropTable
)

var eventKindNames = [...]string{"data change", "create table", "alter table", "truncate table", "drop table"}

// String names the kind.
func (k EventKind) String() string {
	if int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return "unknown event"
}

// Event is a change of one table.
type Event struct {
	Kind  EventKind
	Table TableID
	// Schema is the table's schema: the one Change.Row is encoded in, or
	// the one a schema event leaves the table with.
	Schema *Schema
	// Change is the row change of a DataChange.
	Change changelog.Change[types.Row]
	// Changes are the column changes of an AlterTable, in order.
	Changes []SchemaChange
	// DDL is the statement that made a schema event, for messages; empty if
	// unknown.
	DDL string
	// Tolerant marks a schema event the sink may refuse ('schema.change.
	// behavior' try_evolve): it then writes rows without the columns the
	// table lacks.
	Tolerant bool
}
