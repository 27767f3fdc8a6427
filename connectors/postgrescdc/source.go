package postgrescdc

import (
	"fmt"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc"
)

// metadataKeys are the metadata keys the source offers (METADATA FROM
// '...').
var metadataKeys = []string{cdc.MetaDatabase, cdc.MetaSchema, cdc.MetaTable, cdc.MetaOpTS, cdc.MetaRowKind}

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
	if err := cdc.CheckMetadata("postgres-cdc", t, metadataKeys...); err != nil {
		return nil, err
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
	return newEnumerator(ctx, s.cfg, s.table.Schema, restored)
}

// NewReader returns the reader of one subtask.
func (s *Source) NewReader(ctx connector.ReaderContext) (connector.Reader[connector.TableRecord], error) {
	r := newReader(ctx, s.cfg, s.table, cdc.TableRecord[*tableInfo])
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
