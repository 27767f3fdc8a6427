package iceberg

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// Sink writes a SQL table's changes into an Iceberg table. It runs as
// operators of its own (it is an eddy.TopologySink): writers, keyed by the
// primary key when the table has one, write data and delete files and hand
// them at every checkpoint to a single committer, which commits them as one
// Iceberg snapshot once the checkpoint completes.
type Sink struct {
	cfg   *config
	table *connector.Table
}

func newSink(cfg *config, t *connector.Table) *Sink { return &Sink{cfg: cfg, table: t} }

// ChangelogMode says what the sink applies: upserts and deletions by key
// when the table has a primary key, insertions otherwise.
func (s *Sink) ChangelogMode() changelog.Mode {
	if len(s.table.PrimaryKey) > 0 {
		return changelog.Upsert
	}
	return changelog.InsertOnly
}

// NewWriter fails: the sink's writers keep keyed state and need a
// committer, which eddy.WriteTo and SQL add through AddTo.
func (s *Sink) NewWriter(connector.WriterContext) (connector.Writer[connector.TableRecord], error) {
	return nil, errors.New("iceberg: the sink runs operators of its own; write to it with eddy.WriteTo, eddy.WriteUpserts or SQL's INSERT INTO, not through a connector.Writer")
}

// AddTo adds the sink's writers and its committer to the job, reading in.
func (s *Sink) AddTo(in *eddy.Stream[connector.TableRecord], name string) *eddy.Sink {
	var files *eddy.Stream[writeResult]
	if pk := s.table.PrimaryKey; len(pk) > 0 {
		enc := types.NewKeyEncoder(s.table.Schema, pk...)
		keyed := eddy.KeyBy(in, func(c connector.TableRecord) string { return enc.Key(c.Row) })
		files = eddy.ProcessKeyed(keyed, func() eddy.KeyedProcessFunction[string, connector.TableRecord, writeResult] {
			if s.cfg.equalityDeletes {
				return &equalityWriter{fileWriter: fileWriter{sink: s}}
			}
			return &keyedWriter{fileWriter: fileWriter{sink: s}}
		})
	} else {
		files = eddy.Process(in, func() eddy.ProcessFunction[connector.TableRecord, writeResult] {
			return &appendWriter{fileWriter: fileWriter{sink: s}}
		})
	}
	files.Name("IcebergWriter: " + name)
	return eddy.WriteTo(files, name, connector.TwoPhase(s.newCommitter)).Parallelism(1)
}

// sinkCatalogs holds the catalogs the sinks of this process opened, one per
// configuration, shared by their writers, committers and maintenance and
// open for the life of the process: a job restarted after a failure opens
// no new connection pool, and a commit always finds the catalog its table
// was loaded from open (see catalogOf).
var sinkCatalogs sync.Map // catalogKey -> catalog.Catalog

// catalog returns the shared catalog of c's catalog options.
func (c *config) catalog(ctx context.Context) (catalog.Catalog, error) {
	var b strings.Builder
	for _, v := range []string{c.catalogType, c.catalogName, c.uri, c.warehouse} {
		b.WriteString(v)
		b.WriteByte(0)
	}
	for _, k := range slices.Sorted(maps.Keys(c.props)) {
		b.WriteString(k + "=" + c.props[k])
		b.WriteByte(0)
	}
	key := b.String()
	if v, ok := sinkCatalogs.Load(key); ok {
		return v.(catalog.Catalog), nil
	}
	cat, err := openCatalog(ctx, c.catalogType, c.catalogName, c.uri, c.warehouse, c.props)
	if err != nil {
		return nil, err
	}
	v, loaded := sinkCatalogs.LoadOrStore(key, cat)
	if loaded {
		closeCatalog(cat)
	}
	return v.(catalog.Catalog), nil
}

// loadTable loads the table from the shared catalog, creating it (and its
// namespace) if it does not exist.
func (s *Sink) loadTable(ctx context.Context) (*table.Table, error) {
	c := s.cfg
	cat, err := c.catalog(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: opening the catalog: %w", c.where(), err)
	}
	tbl, err := loadOrCreatePartitionedTable(ctx, cat, c.namespace, c.table, s.table, c.formatVersion, nil, c.partitionKey)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.where(), err)
	}
	return tbl, nil
}
