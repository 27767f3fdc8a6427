package postgrescdc

import (
	"fmt"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// Metadata keys the source offers (METADATA FROM '...'), with Flink CDC's
// names and types.
var metadataTypes = map[string]types.Type{
	"database_name": types.String(),
	"schema_name":   types.String(),
	"table_name":    types.String(),
	"op_ts":         types.TimestampLTZType(3),
	"row_kind":      types.String(),
}

var metadataKeys = []string{"database_name", "schema_name", "table_name", "op_ts", "row_kind"}

// Source is a postgres-cdc source of a SQL table's changelog.
type Source struct {
	cfg   *config
	table *connector.Table
}

// NewTableSource returns a source of the table t with the validated
// options of the "postgres-cdc" connector.
func NewTableSource(t *connector.Table, o connector.Options) (*Source, error) {
	cfg, err := newConfig(o)
	if err != nil {
		return nil, err
	}
	for _, k := range t.Metadata {
		if _, ok := metadataTypes[k]; !ok {
			return nil, connector.UnknownMetadata("postgres-cdc", k, metadataKeys...)
		}
	}
	if cfg.upsert && len(t.PrimaryKey) == 0 {
		return nil, fmt.Errorf("postgres-cdc: 'changelog-mode' = 'upsert' keys the changes by the table's primary key, and the table declares none: add PRIMARY KEY (...) NOT ENFORCED, or use 'changelog-mode' = 'all'")
	}
	return &Source{cfg: cfg, table: t}, nil
}

// ChangelogMode says which kinds of change the source emits: all four in
// 'changelog-mode' = 'all', upserts by the primary key in 'upsert', and
// only inserts for 'scan.startup.mode' = 'snapshot'.
func (s *Source) ChangelogMode() changelog.Mode {
	switch {
	case s.cfg.startup == "snapshot":
		return changelog.InsertOnly
	case s.cfg.upsert:
		return changelog.Upsert
	}
	return changelog.Retract
}

// NewEnumerator returns the source's enumerator.
func (s *Source) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	e := &enumerator{ctx: ctx, cfg: s.cfg, schema: s.table.Schema, finished: map[string]*chunk{}}
	if restored != nil {
		if err := e.restore(restored); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// NewReader returns the reader of one subtask.
func (s *Source) NewReader(ctx connector.ReaderContext) (connector.Reader[connector.TableRecord], error) {
	rt := s.table.RowType()
	r := &reader[connector.TableRecord]{ctx: ctx, cfg: s.cfg, schema: s.table.Schema, rt: rt, w: types.NewRowWriter(rt, types.NewArena(64<<10)),
		pending: map[string]*chunk{}, live: map[string]uint64{}, meta: metaColumns{-1, -1, -1, -1, -1},
		record: func(_ *tableInfo, kind changelog.Kind, row types.Row) connector.TableRecord {
			return connector.TableRecord{Kind: kind, Row: row}
		}}
	n := s.table.Schema.Len()
	for i, k := range s.table.Metadata {
		switch k {
		case "database_name":
			r.meta.database = n + i
		case "schema_name":
			r.meta.schema = n + i
		case "table_name":
			r.meta.table = n + i
		case "op_ts":
			r.meta.opTS = n + i
		case "row_kind":
			r.meta.rowKind = n + i
		}
	}
	return r, nil
}

type factory struct{}

func (factory) Spec() connector.Spec { return spec }

func (factory) NewSource(ctx connector.Context) (any, error) {
	if ctx.Table == nil {
		return nil, fmt.Errorf("postgres-cdc reads SQL tables (changelog.Change[types.Row] records), not %v records", ctx.RecordType)
	}
	return NewTableSource(ctx.Table, ctx.Options)
}

func init() { connector.Register(factory{}) }
