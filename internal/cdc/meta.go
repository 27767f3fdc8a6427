package cdc

import (
	"slices"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// The metadata keys (METADATA FROM '...') the CDC sources offer, with
// Flink CDC's names: STRING but for op_ts, a TIMESTAMP_LTZ(3).
const (
	MetaDatabase = "database_name"
	MetaSchema   = "schema_name"
	MetaTable    = "table_name"
	MetaOpTS     = "op_ts"
	MetaRowKind  = "row_kind"
)

// CheckMetadata returns the error of a SQL table t that asks for a
// metadata key the source (a connector's name) does not offer.
func CheckMetadata(source string, t *connector.Table, offered ...string) error {
	for _, k := range t.Metadata {
		if !slices.Contains(offered, k) {
			return connector.UnknownMetadata(source, k, offered...)
		}
	}
	return nil
}

// MetaColumns are the indexes in the rows of the metadata columns a SQL
// table asks for, -1 for those it does not.
type MetaColumns struct{ Database, Schema, Table, OpTS, RowKind int }

// NoMetaColumns asks for no metadata column: that of a pipeline's rows.
var NoMetaColumns = MetaColumns{-1, -1, -1, -1, -1}

// MetaColumnsOf returns the indexes of the metadata columns of t, which
// follow its physical columns.
func MetaColumnsOf(t *connector.Table) MetaColumns {
	m := NoMetaColumns
	n := t.Schema.Len()
	for i, k := range t.Metadata {
		switch k {
		case MetaDatabase:
			m.Database = n + i
		case MetaSchema:
			m.Schema = n + i
		case MetaTable:
			m.Table = n + i
		case MetaOpTS:
			m.OpTS = n + i
		case MetaRowKind:
			m.RowKind = n + i
		}
	}
	return m
}

// Set sets the metadata columns of the row w writes: the names of the
// row's database, schema and table, the time of its change (Unix
// milliseconds, 0 for a snapshot's rows) and its kind.
func (m MetaColumns) Set(w *types.RowWriter, database, schema, table string, opTS int64, kind changelog.Kind) {
	if m.Database >= 0 {
		w.SetString(m.Database, database)
	}
	if m.Schema >= 0 {
		w.SetString(m.Schema, schema)
	}
	if m.Table >= 0 {
		w.SetString(m.Table, table)
	}
	if m.OpTS >= 0 {
		w.SetTimestampMillis(m.OpTS, opTS)
	}
	if m.RowKind >= 0 {
		w.SetString(m.RowKind, kind.String())
	}
}
