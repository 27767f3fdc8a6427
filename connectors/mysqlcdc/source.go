package mysqlcdc

import (
	"fmt"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc"
)

// metadataKeys are the metadata keys the source offers (METADATA FROM
// '...').
var metadataKeys = []string{cdc.MetaDatabase, cdc.MetaTable, cdc.MetaOpTS, cdc.MetaRowKind}

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
	if err := cdc.CheckMetadata("mysql-cdc", t, metadataKeys...); err != nil {
		return nil, err
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
	return newEnumerator(ctx, s.cfg, s.table.Schema, restored)
}

// NewReader returns the reader of one subtask.
func (s *Source) NewReader(ctx connector.ReaderContext) (connector.Reader[connector.TableRecord], error) {
	r := newReader(ctx, s.cfg, s.table, cdc.TableRecord[*tableInfo])
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
