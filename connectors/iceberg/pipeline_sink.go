package iceberg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strconv"

	icebergo "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/pipeline"
	"github.com/eddystream/eddy/sql/types"
	"github.com/eddystream/eddy/state"
)

// pipelineSpec is the 'sink' block of a pipeline of type iceberg, with
// Flink CDC's keys.
var pipelineSpec = connector.Spec{
	Name: "iceberg",
	Kind: connector.SinkKind,
	Description: "Writes a pipeline's tables into Apache Iceberg tables of one catalog, one snapshot per table and completed checkpoint: " +
		"each table is created when missing (the source table 'db.name' becomes table 'name' of namespace 'db', with the source's primary key as identifier fields) " +
		"and evolved as the pipeline's schema changes say (added, dropped, renamed and widened columns); rows are upserted and deleted by key through a key index " +
		"and position deletes, or, with 'write.upsert.delete-mode' = 'equality', by equality deletes of the key, as Flink CDC's Iceberg sink does. " +
		"With 'compaction-enabled' (or Flink CDC's 'sink.compaction.enabled'), small data files are compacted in the background while the job runs, their rows rewritten under each table's current schema.",
	Options: append([]connector.Option{
		{Key: "catalog.properties.type", Type: connector.Enum, Default: "sql", Values: []string{"sql", "jdbc", "rest"},
			Description: "'sql' (or 'jdbc'): Iceberg's JDBC catalog tables, in SQLite or PostgreSQL; 'rest': an Iceberg REST catalog."},
		{Key: "catalog.properties.uri", Type: connector.String, Required: true, Secret: true, Check: checkURI,
			Description: "The catalog: 'sqlite:///abs/path/catalog.db', 'postgres://user:password@host:port/db', or a REST catalog's http(s) address."},
		{Key: "catalog.properties.warehouse", Type: connector.String,
			Description: "Where new tables' files go: 'file:///abs/dir' or 's3://bucket/prefix'; required by a 'sql' catalog."},
		{Key: "catalog.properties.catalog-name", Type: connector.String, Default: "eddy",
			Description: "The catalog's name (the catalog_name column of a 'sql' catalog's tables)."},
		{Key: "catalog.properties.s3.#", Type: connector.String, Secret: true,
			Description: "Options of an 's3://' warehouse: 'catalog.properties.s3.endpoint', '...s3.region', '...s3.access-key-id', '...s3.secret-access-key', '...s3.path-style-access'."},
		{Key: "table.properties.#", Type: connector.String,
			Description: "Table properties of the tables the sink creates: 'table.properties.format-version' (2 or 3), 'table.properties.write.target-file-size-bytes', 'table.properties.write.parquet.compression-codec', ..."},
		{Key: "sink.compaction.enabled", Type: connector.Bool, Default: "false",
			Description: "Flink CDC's name of 'compaction-enabled': either turns compaction on."},
		{Key: deleteModeOption, Type: connector.Enum, Default: deleteModePosition, Values: []string{deleteModePosition, deleteModeEquality},
			Description: "How the rows an update or deletion replaces are deleted. 'position': by position, through a key index per table in keyed state (position-delete files or deletion vectors). " +
				"'equality': as Flink CDC's Iceberg sink does, an equality delete of the key on the table's identifier fields for every key changed in a checkpoint, plus a position delete of a row written and replaced within the checkpoint; " +
				"no key index, and rows other writers wrote are replaced too, but every reader joins the equality deletes against older data files. " +
				"A table's primary key must stay its identifier fields, and a partitioned table's partition columns must be key columns; TRUNCATE TABLE stops the pipeline. Not with compaction."},
	}, slices.Concat(restCatalogOptions("catalog.properties."), maintenanceOptions, compactionOptions)...),
}

// PipelineSink writes a pipeline's tables into Iceberg tables. Like the
// sink of a SQL table, it runs operators of its own: writers keyed by the
// sink table (each table's events in order on one subtask), each with the
// key index of its tables in keyed state (none in equality-delete mode),
// and one committer.
type PipelineSink struct {
	cfg *config
	// props are the properties of the tables the sink creates.
	props map[string]string
}

func newPipelineSink(o connector.Options) (*PipelineSink, error) {
	c := &config{
		catalogName: o.String("catalog.properties.catalog-name"), catalogType: o.String("catalog.properties.type"),
		uri: o.String("catalog.properties.uri"), warehouse: o.String("catalog.properties.warehouse"),
		formatVersion: 2, targetFileSize: 128 << 20, props: map[string]string{}, maintenance: newMaintenanceConfig(o),
	}
	if c.catalogType == "jdbc" {
		c.catalogType = "sql"
	}
	if c.catalogType == "sql" && c.warehouse == "" {
		return nil, &connector.OptionError{Connector: "iceberg", Key: "catalog.properties.warehouse", Problem: "is required by a 'sql' catalog: give 'file:///abs/dir' or 's3://bucket/prefix'"}
	}
	for _, k := range o.Names("catalog.properties.s3.#") {
		if err := addS3Prop(c.props, k, o.String("catalog.properties.s3."+k)); err != nil {
			return nil, &connector.OptionError{Connector: "iceberg", Key: "catalog.properties.s3." + k, Problem: err.Error()}
		}
	}
	addRESTCatalogProps(c.props, o, "catalog.properties.")
	props := map[string]string{}
	for _, k := range o.Names("table.properties.#") {
		props[k] = o.String("table.properties." + k)
	}
	if v, ok := props["format-version"]; ok {
		if v != "2" && v != "3" {
			return nil, &connector.OptionError{Connector: "iceberg", Key: "table.properties.format-version", Problem: "must be 2 or 3: format version 1 has no row-level deletes"}
		}
		c.formatVersion = int(v[0] - '0')
		delete(props, "format-version")
	}
	if v, ok := props["write.target-file-size-bytes"]; ok {
		var n int64
		if _, err := fmt.Sscan(v, &n); err != nil || n <= 0 {
			return nil, &connector.OptionError{Connector: "iceberg", Key: "table.properties.write.target-file-size-bytes", Problem: "must be a positive number of bytes"}
		}
		c.targetFileSize = n
	}
	c.compaction = newCompactionConfig(o, c.targetFileSize)
	c.compaction.enabled = c.compaction.enabled || o.Bool("sink.compaction.enabled")
	c.equalityDeletes = o.String(deleteModeOption) == deleteModeEquality
	if c.equalityDeletes && c.compaction.enabled {
		return nil, &connector.OptionError{Connector: "iceberg", Key: deleteModeOption, Problem: "is 'equality', which compaction ('compaction-enabled' or 'sink.compaction.enabled' = 'true') does not support (compaction moves rows by position): turn compaction off, or use 'position'"}
	}
	return &PipelineSink{cfg: c, props: props}, nil
}

// NewWriter fails: the sink runs operators of its own (AddTo).
func (s *PipelineSink) NewWriter(connector.WriterContext) (connector.Writer[pipeline.Event], error) {
	return nil, errors.New("iceberg: the pipeline sink runs operators of its own; build the pipeline with pipeline.Build or pipeline.BuildWith")
}

// AddTo adds the sink's writers and committer to the job, reading events.
func (s *PipelineSink) AddTo(events *eddy.Stream[pipeline.Event], name string) *eddy.Sink {
	byTable := eddy.KeyBy(events, func(e pipeline.Event) string { return e.Table.String() })
	files := eddy.ProcessKeyed(byTable, func() eddy.KeyedProcessFunction[string, pipeline.Event, tableResult] {
		return &pipelineWriter{sink: s, tables: map[string]*pipelineTable{}}
	}).Name("IcebergWriter: " + name).UID("pipeline-iceberg-writer")
	return eddy.WriteTo(files, name, connector.TwoPhase(s.newCommitter)).Parallelism(1)
}

// tableSink returns the sink of one pipeline table of schema sc.
func (s *PipelineSink) tableSink(id pipeline.TableID, sc *pipeline.Schema) *Sink {
	cfg := *s.cfg
	cfg.namespace, cfg.table = icebergName(id)
	return &Sink{cfg: &cfg, table: &connector.Table{Schema: sc.Columns, PrimaryKey: sc.KeyIndexes()}}
}

// icebergName maps a pipeline table 'db.name' (or 'catalog.db.name') to
// its Iceberg namespace and table name; a table without a database goes
// to namespace 'default'.
func icebergName(id pipeline.TableID) (namespace, name string) {
	switch {
	case id.Namespace != "" && id.Schema != "":
		return id.Namespace + "." + id.Schema, id.Table
	case id.Schema != "":
		return id.Schema, id.Table
	case id.Namespace != "":
		return id.Namespace, id.Table
	}
	return "default", id.Table
}

// tableResult is a writer's files of one table for a checkpoint, with the
// table's UUID: files written for a table that has since been dropped and
// created again are not committed to the new one.
type tableResult struct {
	Table string
	UUID  string
	writeResult
}

// pipelineTable is a writer's open table.
type pipelineTable struct {
	fileWriter
	id     pipeline.TableID
	schema *pipeline.Schema
	key    *types.KeyEncoder
	uuid   string
	// eq writes the table's equality deletes, in equality-delete mode.
	eq *equalityDeletes
}

// flushTable hands the table's files written since the last checkpoint
// to the committer.
func (t *pipelineTable) flushTable(emit func(writeResult), id int64) error {
	if t.eq != nil {
		return t.eq.flush(&t.fileWriter, emit, id)
	}
	return t.flush(emit, id)
}

// closeTable removes the files being written.
func (t *pipelineTable) closeTable() error {
	if t.eq != nil {
		t.eq.abort()
	}
	return t.close()
}

// pipelineWriter writes the tables of its subtask. Its keyed state, under
// each table's name, is that table's key index: primary key to the data
// file and position of the key's row. In equality-delete mode it has no
// keyed state (index is nil).
type pipelineWriter struct {
	sink   *PipelineSink
	cat    catalog.Catalog
	index  state.Map[string, rowLocation]
	tables map[string]*pipelineTable
	log    *slog.Logger
}

// Open declares the key index (in position mode) and opens the catalog.
func (w *pipelineWriter) Open(ctx *eddy.KeyedContext[string, tableResult]) error {
	c := w.sink.cfg
	if !c.equalityDeletes {
		w.index = state.NewMap(ctx.Store(), state.MapDescriptor[string, rowLocation]{Name: "iceberg-key-index", ValueCodec: locationCodec{}})
	}
	cat, err := c.catalog(context.Background())
	if err != nil {
		return fmt.Errorf("iceberg pipeline sink: opening catalog %q: %w", c.catalogName, err)
	}
	w.cat = cat
	w.log = slog.Default()
	return nil
}

// ProcessElement applies one event of the current table.
func (w *pipelineWriter) ProcessElement(_ *eddy.KeyedContext[string, tableResult], e pipeline.Event) error {
	ctx := context.Background()
	name := e.Table.String()
	switch e.Kind {
	case pipeline.DropTable:
		return w.drop(ctx, name, e)
	case pipeline.AlterTable:
		return retryConflicts(func() error { return w.alter(ctx, e) })
	case pipeline.CreateTable:
		_, err := w.table(ctx, e, true)
		return err
	case pipeline.TruncateTable:
		t, err := w.table(ctx, e, false)
		if err != nil {
			return err
		}
		if t.eq != nil {
			return fmt.Errorf("%s: TRUNCATE TABLE cannot be applied with 'write.upsert.delete-mode' = 'equality', which keeps no index of the table's rows: truncate the Iceberg table yourself and restart the pipeline, or use 'position'", t.sink.cfg.where())
		}
		if w.index == nil {
			return nil // a table without a key in equality-delete mode: no index to truncate by
		}
		for _, loc := range w.index.Entries() {
			t.deletePartRow(loc.file, loc.pos, loc.part)
		}
		w.index.Clear()
		return nil
	}
	t, err := w.table(ctx, e, false)
	if err != nil {
		return err
	}
	c := e.Change
	if t.key == nil {
		if c.Kind != changelog.Insert {
			return fmt.Errorf("%s has no primary key, so the sink only appends its rows, but a %s change arrived: give the source table a key, or name one with a transform's 'primary-keys'", t.sink.cfg.where(), c.Kind)
		}
		_, _, err := t.append(c)
		return err
	}
	k := t.key.Key(c.Row)
	if t.eq != nil {
		return t.eq.apply(&t.fileWriter, k, c)
	}
	if old, ok := w.index.Get(k); ok {
		t.deletePartRow(old.file, old.pos, old.part)
	}
	if !c.Kind.IsAddition() {
		w.index.Delete(k)
		return nil
	}
	id, pos, part, err := t.appendPart(c)
	if err != nil {
		return err
	}
	w.index.Put(k, rowLocation{file: id, pos: pos, part: part})
	return nil
}

// Table properties in which the pipeline sink records the schema changes
// it applied to a table: the version of the pipeline's schema the table is
// at, and the columns renamed on the way. Rows of an older schema, which a
// restored job replays after the table has moved on, are written under
// their columns' new names, and the table is never brought back to an
// older schema.
const (
	propSchemaVersion = "eddy.pipeline.schema-version"
	propRenames       = "eddy.pipeline.renames"
)

// columnRename is a rename the sink applied to a table, at the schema
// version the rename made.
type columnRename struct {
	Version int    `json:"v"`
	From    string `json:"from"`
	To      string `json:"to"`
}

// schemaVersion returns the pipeline schema version tbl is at, 0 if the
// sink never recorded one.
func schemaVersion(tbl *table.Table) int {
	v, _ := strconv.Atoi(tbl.Properties().Get(propSchemaVersion, "0"))
	return v
}

// renames returns the renames the sink applied to tbl, in order.
func renames(tbl *table.Table) ([]columnRename, error) {
	var out []columnRename
	if v := tbl.Properties().Get(propRenames, ""); v != "" {
		if err := json.Unmarshal([]byte(v), &out); err != nil {
			return nil, fmt.Errorf("table property %s is not eddy's: %w", propRenames, err)
		}
	}
	return out, nil
}

// table returns the open table of an event, opening it with the event's
// schema if it is not open with that schema. The table is created when
// missing; an existing one at an older schema version gains the columns
// of the event's schema it lacks and widens the types that widened; one
// at a newer version (a restored job replaying rows) is written as it is,
// the rows' columns renamed as the table's later schema changes renamed
// them.
func (w *pipelineWriter) table(ctx context.Context, e pipeline.Event, create bool) (*pipelineTable, error) {
	name := e.Table.String()
	t := w.tables[name]
	if t != nil && (e.Schema == nil || t.schema == e.Schema || t.schema.Same(e.Schema)) && !create {
		return t, nil
	}
	if e.Schema == nil {
		return nil, fmt.Errorf("iceberg pipeline sink: a %s event of table %s without its schema", e.Kind, name)
	}
	sink := w.sink.tableSink(e.Table, e.Schema)
	cfg := sink.cfg
	tbl, err := w.cat.LoadTable(ctx, tableIdentifier(cfg.namespace, cfg.table))
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable):
		props := maps.Clone(w.sink.props)
		if props == nil {
			props = map[string]string{}
		}
		props[propSchemaVersion] = strconv.Itoa(e.Schema.Version)
		tbl, err = loadOrCreateTable(ctx, w.cat, cfg.namespace, cfg.table, sink.table, cfg.formatVersion, props)
		if err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("%s: loading it: %w", cfg.where(), err)
	case schemaVersion(tbl) > e.Schema.Version:
		if sink, err = w.replaySink(e, tbl); err != nil {
			return nil, fmt.Errorf("%s: %w", cfg.where(), err)
		}
	default:
		want, err := icebergSchema(e.Schema.Columns, nil, tbl.Metadata().Version())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cfg.where(), err)
		}
		if len(schemaDifferences(want, tbl.Schema())) > 0 || schemaVersion(tbl) < e.Schema.Version {
			err = retryConflicts(func() (err error) {
				tbl, err = w.evolve(ctx, sink, e.Schema)
				return err
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return w.reopen(ctx, t, e, sink, tbl)
}

// replaySink returns the sink of rows of e's schema for a table at a later
// schema version: the rows' columns renamed as the later versions renamed
// them. Columns dropped since are not written.
func (w *pipelineWriter) replaySink(e pipeline.Event, tbl *table.Table) (*Sink, error) {
	rs, err := renames(tbl)
	if err != nil {
		return nil, err
	}
	fields := slices.Clone(e.Schema.Columns.Fields())
	key := slices.Clone(e.Schema.PrimaryKey)
	for _, r := range rs {
		if r.Version <= e.Schema.Version {
			continue
		}
		for i := range fields {
			if fields[i].Name == r.From {
				fields[i].Name = r.To
			}
		}
		for i := range key {
			if key[i] == r.From {
				key[i] = r.To
			}
		}
	}
	rt, err := types.NewRowType(fields...)
	if err != nil {
		return nil, fmt.Errorf("renaming the columns of schema version %d: %w", e.Schema.Version, err)
	}
	return w.sink.tableSink(e.Table, &pipeline.Schema{Columns: rt, PrimaryKey: key, Version: e.Schema.Version}), nil
}

// reopen makes t (nil for a table not open yet) write the table tbl with
// the schema of e; the data file being written with the old schema is
// closed first.
func (w *pipelineWriter) reopen(ctx context.Context, t *pipelineTable, e pipeline.Event, sink *Sink, tbl *table.Table) (*pipelineTable, error) {
	name := e.Table.String()
	if t == nil {
		t = &pipelineTable{id: e.Table}
		w.tables[name] = t
	}
	if err := t.closeData(); err != nil {
		return nil, err
	}
	if t.eq != nil {
		// The open equality-delete files hold keys of the old schema.
		if err := t.eq.closeFiles(&t.fileWriter); err != nil {
			return nil, err
		}
	}
	tf, err := newTableFiles(ctx, tbl)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sink.cfg.where(), err)
	}
	part, err := tf.newPartitioner(sink.table.Schema)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sink.cfg.where(), err)
	}
	t.sink, t.tf, t.schema, t.uuid = sink, tf, e.Schema, tbl.Metadata().TableUUID().String()
	t.part, t.parts = part, nil
	if part != nil {
		t.parts = map[partitionKey]*openFile{}
	}
	t.key = nil
	// The key's columns as the table names them (a replayed row's columns
	// are renamed as the table's later schemas renamed them).
	if keys := sink.table.PrimaryKey; len(keys) > 0 {
		t.key = types.NewKeyEncoder(sink.table.Schema, keys...)
	}
	if w.sink.cfg.equalityDeletes && t.key != nil {
		if err := equalityKey(sink, tbl, t.key.KeyType()); err != nil {
			return nil, err
		}
		if err := checkEqualityPartition(&t.fileWriter, sink.table.PrimaryKey, "the source table's primary key (or a transform's 'primary-keys')"); err != nil {
			return nil, err
		}
		if t.eq == nil {
			t.eq = &equalityDeletes{}
		}
		if err := t.eq.setKey(t.key); err != nil {
			return nil, fmt.Errorf("%s: %w", sink.cfg.where(), err)
		}
	}
	return t, nil
}

// equalityKey checks that the key columns kt of a pipeline table are the
// identifier fields of its Iceberg table's current schema, the fields of
// the table's equality deletes in equality-delete mode: a table whose
// primary key changed after the sink created it, or that another writer
// created with other identifier fields, is refused.
func equalityKey(sink *Sink, tbl *table.Table, kt *types.RowType) error {
	sc := tbl.Schema()
	all := make([]int, kt.Len())
	for i := range all {
		all[i] = i
	}
	ids, err := keyFieldIDs(sc, kt, all)
	if err != nil {
		return fmt.Errorf("%s: %w", sink.cfg.where(), err)
	}
	want := slices.Sorted(slices.Values(sc.IdentifierFieldIDs))
	if slices.Equal(slices.Sorted(slices.Values(ids)), want) {
		return nil
	}
	var idents []string
	for _, id := range want {
		if f, ok := sc.FindFieldByID(id); ok {
			idents = append(idents, f.Name)
		}
	}
	return fmt.Errorf("%s: with 'write.upsert.delete-mode' = 'equality' the equality deletes are on the table's identifier fields, which are %q, but the pipeline table's primary key is %q: "+
		"make the table's identifier fields the primary key (Spark: ALTER TABLE ... SET IDENTIFIER FIELDS), keep the primary key the table was created with, or use 'position'",
		sink.cfg.where(), idents, kt.Names())
}

// evolve adds to the Iceberg table of sink the columns of sc it lacks and
// widens the types of the columns sc widened.
func (w *pipelineWriter) evolve(ctx context.Context, sink *Sink, sc *pipeline.Schema) (*table.Table, error) {
	tbl, err := w.cat.LoadTable(ctx, tableIdentifier(sink.cfg.namespace, sink.cfg.table))
	if err != nil {
		return nil, fmt.Errorf("%s: loading it: %w", sink.cfg.where(), err)
	}
	want, err := icebergSchema(sc.Columns, nil, tbl.Metadata().Version())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sink.cfg.where(), err)
	}
	tx := tbl.NewTransaction()
	if err := tx.UpdateSchema(true, false).UnionByNameWith(want).Commit(); err != nil {
		return nil, fmt.Errorf("%s: bringing the table to the schema %s: %w", sink.cfg.where(), sc, err)
	}
	if err := tx.SetProperties(icebergo.Properties{propSchemaVersion: strconv.Itoa(sc.Version)}); err != nil {
		return nil, fmt.Errorf("%s: %w", sink.cfg.where(), err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("%s: committing the schema %s: %w", sink.cfg.where(), sc, err)
	}
	return tbl, nil
}

// alter applies an AlterTable event's column changes to the Iceberg table,
// each only if the table does not show it already (a change replayed
// after a failure), then reopens the table with the new schema. A change
// the table refuses fails the job, unless the event is tolerant
// ('schema.change.behavior' try_evolve): rows are then written without
// the columns the table lacks.
func (w *pipelineWriter) alter(ctx context.Context, e pipeline.Event) error {
	if e.Schema == nil {
		return fmt.Errorf("iceberg pipeline sink: an alter table event of table %s without its schema", e.Table)
	}
	sink := w.sink.tableSink(e.Table, e.Schema)
	cfg := sink.cfg
	tbl, err := w.cat.LoadTable(ctx, tableIdentifier(cfg.namespace, cfg.table))
	if errors.Is(err, catalog.ErrNoSuchTable) {
		// Created by no event the sink saw: create it as it is now.
		_, err := w.table(ctx, e, true)
		return err
	}
	if err != nil {
		return fmt.Errorf("%s: loading it: %w", cfg.where(), err)
	}
	if schemaVersion(tbl) >= e.Schema.Version {
		// Applied before a failure; the rows that follow are replayed.
		_, err := w.table(ctx, e, true)
		return err
	}
	rs, err := renames(tbl)
	if err != nil {
		return fmt.Errorf("%s: %w", cfg.where(), err)
	}
	has := func(col string) bool { _, ok := tbl.Schema().FindFieldByName(col); return ok }
	tx := tbl.NewTransaction()
	u := tx.UpdateSchema(true, false)
	changed := false
	for _, ch := range e.Changes {
		switch ch.Kind {
		case pipeline.AddColumn, pipeline.AlterColumnType:
			next := 1000
			it, err := icebergType(ch.Type, tbl.Metadata().Version(), &next)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", cfg.where(), ch, err)
			}
			if !has(ch.Column) {
				u.AddColumn([]string{ch.Column}, it, "", false, nil)
				changed = true
			} else if f, _ := tbl.Schema().FindFieldByName(ch.Column); !sameIcebergType(f.Type, it) {
				u.UpdateColumn([]string{ch.Column}, table.ColumnUpdate{FieldType: icebergo.Optional[icebergo.Type]{Valid: true, Val: it}})
				changed = true
			}
		case pipeline.DropColumn:
			if has(ch.Column) {
				u.DeleteColumn([]string{ch.Column})
				changed = true
			}
		case pipeline.RenameColumn:
			if has(ch.Column) && !has(ch.NewName) {
				u.RenameColumn([]string{ch.Column}, ch.NewName)
				rs = append(rs, columnRename{Version: e.Schema.Version, From: ch.Column, To: ch.NewName})
				changed = true
			}
		}
	}
	{
		var err error
		if changed {
			err = u.Commit()
		}
		if err == nil {
			props := icebergo.Properties{propSchemaVersion: strconv.Itoa(e.Schema.Version)}
			if len(rs) > 0 {
				b, _ := json.Marshal(rs)
				props[propRenames] = string(b)
			}
			err = tx.SetProperties(props)
		}
		if err == nil {
			tbl, err = tx.Commit(ctx)
		}
		if err != nil {
			if commitConflict(err) {
				return err // a race with a commit: retryConflicts runs it again
			}
			if !e.Tolerant {
				return fmt.Errorf("%s: applying %s: %w; the pipeline stops so that no row is written to a table that lacks its columns (with 'schema.change.behavior: try_evolve' it would go on without them)", cfg.where(), describeDDL(e), err)
			}
			w.log.Warn("iceberg table refused a schema change; rows are written without the columns it lacks", "table", cfg.where(), "change", describeDDL(e), "error", err)
			if tbl, err = w.cat.LoadTable(ctx, tableIdentifier(cfg.namespace, cfg.table)); err != nil {
				return fmt.Errorf("%s: loading it: %w", cfg.where(), err)
			}
			// The table is at this version, without the refused change.
			tx := tbl.NewTransaction()
			if err := tx.SetProperties(icebergo.Properties{propSchemaVersion: strconv.Itoa(e.Schema.Version)}); err != nil {
				return fmt.Errorf("%s: %w", cfg.where(), err)
			}
			if tbl, err = tx.Commit(ctx); err != nil {
				return fmt.Errorf("%s: recording schema version %d: %w", cfg.where(), e.Schema.Version, err)
			}
		}
	}
	_, err = w.reopen(ctx, w.tables[e.Table.String()], e, sink, tbl)
	return err
}

// retryConflicts runs a schema change again, on the table as it is then,
// when it lost a race with a commit of the committer (optimistic
// concurrency): the change looks at the table before it changes it, so a
// second run does what the first did not.
func retryConflicts(change func() error) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if err = change(); !commitConflict(err) {
			return err
		}
	}
	return err
}

// describeDDL names a schema event for messages.
func describeDDL(e pipeline.Event) string {
	if e.DDL != "" {
		return fmt.Sprintf("%q", e.DDL)
	}
	var s string
	for i, ch := range e.Changes {
		if i > 0 {
			s += ", "
		}
		s += ch.String()
	}
	return s
}

// drop drops the Iceberg table of a DropTable event, with the files the
// writer holds for it and its key index.
func (w *pipelineWriter) drop(ctx context.Context, name string, e pipeline.Event) error {
	if t := w.tables[name]; t != nil {
		t.done, t.dels = nil, nil
		if err := t.closeTable(); err != nil {
			return err
		}
		delete(w.tables, name)
	}
	if w.index != nil {
		w.index.Clear()
	}
	ns, tn := icebergName(e.Table)
	if err := w.cat.DropTable(ctx, tableIdentifier(ns, tn)); err != nil && !errors.Is(err, catalog.ErrNoSuchTable) {
		return fmt.Errorf("iceberg table %s.%s: dropping it: %w", ns, tn, err)
	}
	return nil
}

// PrepareSnapshot hands each table's files to the committer.
func (w *pipelineWriter) PrepareSnapshot(ctx *eddy.KeyedContext[string, tableResult], id int64) error {
	return w.flush(ctx, id)
}

// EndInput hands the last files to the committer.
func (w *pipelineWriter) EndInput(ctx *eddy.KeyedContext[string, tableResult]) error {
	return w.flush(ctx, 0)
}

func (w *pipelineWriter) flush(ctx *eddy.KeyedContext[string, tableResult], id int64) error {
	names := make([]string, 0, len(w.tables))
	for n := range w.tables {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t := w.tables[n]
		err := t.flushTable(func(r writeResult) { ctx.Emit(tableResult{Table: n, UUID: t.uuid, writeResult: r}) }, id)
		if err != nil {
			return err
		}
	}
	return nil
}

// Close removes the files being written.
func (w *pipelineWriter) Close() error {
	for _, t := range w.tables {
		_ = t.closeTable()
	}
	return nil // the catalog is shared (config.catalog)
}

// pipelineTx is a transaction of the pipeline's committer: each table's
// files of one checkpoint.
type pipelineTx struct {
	Job        string                   `json:"job"`
	Checkpoint int64                    `json:"checkpoint"`
	Tables     map[string]*tableChanges `json:"tables"`
}

// tableChanges are the files of one table in a transaction.
type tableChanges struct {
	UUID    string     `json:"uuid"`
	Data    []fileMeta `json:"data,omitempty"`
	Deletes []fileMeta `json:"deletes,omitempty"`
}

// pipelineCommitter commits, per completed checkpoint, one snapshot of
// each table the checkpoint wrote to. It runs in a single subtask.
type pipelineCommitter struct {
	sink *PipelineSink
	wc   connector.WriterContext // counts the bytes of the files written
	cat  catalog.Catalog
	log  *slog.Logger
	job  string
	last int64
	// final is the checkpoint id of the transaction of the end of the
	// input, 0 before it is pre-committed.
	final int64
	maint map[string]*maintainer
	// compact holds each table's compactor, with compaction on.
	compact map[string]*tableCompactor
}

// tableCompactor is the compactor of one table of the pipeline, of the
// table's UUID: a table dropped and created again gets a new one.
type tableCompactor struct {
	uuid string
	*compactor
}

func (s *PipelineSink) newCommitter(wc connector.WriterContext) (connector.TwoPhaseCommitter[tableResult, pipelineTx], error) {
	c := s.cfg
	cat, err := c.catalog(context.Background())
	if err != nil {
		return nil, fmt.Errorf("iceberg pipeline sink: opening catalog %q: %w", c.catalogName, err)
	}
	job, err := newJobID()
	if err != nil {
		return nil, err
	}
	return &pipelineCommitter{sink: s, wc: wc, cat: cat, log: wc.Log(), job: job, maint: map[string]*maintainer{}, compact: map[string]*tableCompactor{}}, nil
}

// Begin starts the transaction of the next checkpoint.
func (c *pipelineCommitter) Begin() (pipelineTx, error) {
	return pipelineTx{Job: c.job, Tables: map[string]*tableChanges{}}, nil
}

// Write adds a writer's files of one table.
func (c *pipelineCommitter) Write(tx *pipelineTx, r tableResult) error {
	connector.CountBytesOut(c.wc, r.writtenBytes())
	t := tx.Tables[r.Table]
	if t == nil || t.UUID != r.UUID {
		// Files of a table dropped and created again in the same
		// checkpoint: only the newest table's count.
		t = &tableChanges{UUID: r.UUID}
		tx.Tables[r.Table] = t
	}
	t.Data = append(t.Data, r.Data...)
	t.Deletes = append(t.Deletes, r.Deletes...)
	tx.Checkpoint = max(tx.Checkpoint, r.Checkpoint)
	return nil
}

// PreCommit fixes the transaction's checkpoint id (see committer).
func (c *pipelineCommitter) PreCommit(tx *pipelineTx) error {
	endOfInput := tx.Checkpoint == 0
	tx.Checkpoint = nextCheckpoint(tx.Checkpoint, &c.last)
	if endOfInput {
		c.final = tx.Checkpoint
	}
	return nil
}

// Commit commits each table's files as one snapshot of that table. A
// table that was dropped since, or dropped and created again, gets none.
func (c *pipelineCommitter) Commit(tx pipelineTx) error {
	ctx := context.Background()
	for _, name := range sortedKeys(tx.Tables) {
		t := tx.Tables[name]
		tbl, ok, err := c.load(ctx, name, t.UUID)
		if err != nil {
			return err
		}
		if !ok {
			continue // dropped since: its rows are gone with it
		}
		comp := c.compactor(name, t.UUID)
		var out *table.Table
		if comp != nil {
			out, err = commitTranslated(ctx, tbl, comp.compactor, icebergTx{Job: tx.Job, Checkpoint: tx.Checkpoint, Data: t.Data, Deletes: t.Deletes})
		} else {
			out, err = commitOnce(ctx, tbl, tx.Job, tx.Checkpoint, t.Data, t.Deletes)
		}
		if err != nil {
			return fmt.Errorf("iceberg table of pipeline table %s: %w", name, err)
		}
		if out != nil {
			tbl = out
			c.maintainer(name).afterCommit()
		}
		if comp != nil {
			comp.afterCommit(ctx, tbl, tx.Job, tx.Checkpoint, tx.Checkpoint == c.final)
		}
	}
	return nil
}

// compactor returns the compactor of the pipeline table name, of the
// table of UUID uuid; nil with compaction off.
func (c *pipelineCommitter) compactor(name, uuid string) *tableCompactor {
	cfg := c.sink.cfg.compaction
	if !cfg.enabled {
		return nil
	}
	tc := c.compact[name]
	if tc != nil && tc.uuid != uuid {
		tc.close()
		tc = nil
	}
	if tc == nil {
		ns, tn := icebergName(pipeline.ParseTableID(name))
		where := fmt.Sprintf("Iceberg table %s.%s of catalog %q", ns, tn, c.sink.cfg.catalogName)
		// No row type: the table's schema evolves, and compaction
		// rewrites rows by field id under its current schema.
		tc = &tableCompactor{uuid: uuid, compactor: &compactor{cfg: cfg, where: where, log: c.log}}
		c.compact[name] = tc
	}
	return tc
}

// load loads the table of a pipeline table, if it is still the one of
// UUID uuid.
func (c *pipelineCommitter) load(ctx context.Context, name, uuid string) (*table.Table, bool, error) {
	ns, tn := icebergName(pipeline.ParseTableID(name))
	tbl, err := c.cat.LoadTable(ctx, tableIdentifier(ns, tn))
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("iceberg table %s.%s: loading it: %w", ns, tn, err)
	}
	if tbl.Metadata().TableUUID().String() != uuid {
		return nil, false, nil
	}
	return tbl, true, nil
}

func (c *pipelineCommitter) maintainer(name string) *maintainer {
	m := c.maint[name]
	if m == nil {
		ns, tn := icebergName(pipeline.ParseTableID(name))
		where := fmt.Sprintf("Iceberg table %s.%s of catalog %q", ns, tn, c.sink.cfg.catalogName)
		m = newMaintainer(where, c.sink.cfg.maintenance, c.log, func(ctx context.Context) (*table.Table, error) {
			return c.cat.LoadTable(ctx, tableIdentifier(ns, tn))
		})
		c.maint[name] = m
	}
	return m
}

// Abort removes the files of a transaction that will never commit.
func (c *pipelineCommitter) Abort(tx pipelineTx) error {
	ctx := context.Background()
	for _, name := range sortedKeys(tx.Tables) {
		t := tx.Tables[name]
		tbl, ok, err := c.load(ctx, name, t.UUID)
		if err != nil || !ok {
			continue // the table is gone, and its files with it
		}
		if err := abortFiles(tbl, t.Data, t.Deletes); err != nil {
			return fmt.Errorf("iceberg table of pipeline table %s: removing the files of an aborted checkpoint: %w", name, err)
		}
	}
	return nil
}

// Recover has nothing to do (see committer.Recover).
func (c *pipelineCommitter) Recover(pending, current []pipelineTx) error { return nil }

// Close stops the maintenance runs and the compactions in progress.
func (c *pipelineCommitter) Close() error {
	for _, m := range c.maint {
		m.close()
	}
	for _, tc := range c.compact {
		tc.close()
	}
	return nil // the catalog is shared (config.catalog)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

type pipelineFactory struct{}

func (pipelineFactory) Spec() connector.Spec { return pipelineSpec }

// NewSink returns the sink of a pipeline's 'sink' block.
func (pipelineFactory) NewSink(ctx connector.Context) (any, error) {
	return newPipelineSink(ctx.Options)
}

func init() { pipeline.Sinks.Register(pipelineFactory{}) }
