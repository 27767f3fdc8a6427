package mysqlcdc

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
	"table_name":    types.String(),
	"op_ts":         types.TimestampLTZType(3),
	"row_kind":      types.String(),
}

var metadataKeys = []string{"database_name", "table_name", "op_ts", "row_kind"}

// Source is a mysql-cdc source of a SQL table's changelog.
type Source struct {
	cfg   *config
	table *connector.Table
}

// NewTableSource returns a source of the table t with the validated
// options of the "mysql-cdc" connector.
func NewTableSource(t *connector.Table, o connector.Options) (*Source, error) {
	cfg, err := newConfig(o)
	if err != nil {
		return nil, err
	}
	for _, k := range t.Metadata {
		if _, ok := metadataTypes[k]; !ok {
			return nil, connector.UnknownMetadata("mysql-cdc", k, metadataKeys...)
		}
	}
	return &Source{cfg: cfg, table: t}, nil
}

// ChangelogMode says the source emits all four kinds of change.
func (s *Source) ChangelogMode() changelog.Mode {
	if s.cfg.startup == "snapshot" {
		return changelog.InsertOnly
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
		pending: map[string]*chunk{}, meta: metaColumns{-1, -1, -1, -1},
		record: func(_ *tableInfo, kind changelog.Kind, row types.Row) connector.TableRecord {
			return connector.TableRecord{Kind: kind, Row: row}
		}}
	n := s.table.Schema.Len()
	for i, k := range s.table.Metadata {
		switch k {
		case "database_name":
			r.meta.database = n + i
		case "table_name":
			r.meta.table = n + i
		case "op_ts":
			r.meta.opTS = n + i
		case "row_kind":
			r.meta.rowKind = n + i
		}
	}
	if _, err := r.serverID(); err != nil {
		return nil, err
	}
	return r, nil
}

type factory struct{}

func (factory) Spec() connector.Spec { return spec }

func (factory) NewSource(ctx connector.Context) (any, error) {
	if ctx.Table == nil {
		return nil, fmt.Errorf("mysql-cdc reads SQL tables (changelog.Change[types.Row] records), not %v records", ctx.RecordType)
	}
	return NewTableSource(ctx.Table, ctx.Options)
}

func init() { connector.Register(factory{}) }
