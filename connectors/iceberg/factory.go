package iceberg

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/eddystream/eddy/connector"
)

var spec = connector.Spec{
	Name: "iceberg",
	Kind: connector.SourceKind | connector.SinkKind,
	Description: "Reads and writes Apache Iceberg tables. " +
		"Reading: a batch read reads one snapshot (the current one, or one chosen by 'snapshot-id' or 'as-of-timestamp'), " +
		"with position and equality deletes applied; 'streaming' = 'true' then follows the table, reading the rows each new snapshot appends, " +
		"and fails on a snapshot that deletes rows rather than lose the deletion. Each data file is a split whose position is checkpointed, so a restored job neither loses nor repeats rows. " +
		"Writing: one snapshot per completed checkpoint, exactly once. " +
		"With a primary key, changes apply by key: the sink keeps an index from each key to the data file and row " +
		"that hold it, in keyed state, and deletes the rows an update or deletion replaces by position (position-delete files in format " +
		"version 2, deletion vectors in 3), or, with 'write.upsert.delete-mode' = 'equality', by equality deletes of the key, as Flink's sink does. Without one, rows are appended. A table that does not exist is " +
		"created from the DDL, partitioned by its PARTITIONED BY columns or by 'partition.key'. " +
		"With 'compaction-enabled', the committer rewrites small data files into larger ones while the job runs.",
	Options: append([]connector.Option{
		{Key: "catalog-name", Type: connector.String, Required: true,
			Description: "The catalog's name: the catalog_name column of a 'sql' catalog's tables, or a label for a 'rest' one."},
		{Key: "catalog-type", Type: connector.Enum, Default: "sql", Values: []string{"sql", "jdbc", "rest"},
			Description: "'sql' (or 'jdbc'): Iceberg's JDBC catalog tables, in SQLite ('uri' = 'sqlite:///abs/path/catalog.db') or PostgreSQL ('uri' = 'postgres://user:password@host:5432/db'); 'rest': an Iceberg REST catalog at 'uri'."},
		{Key: "uri", Type: connector.String, Required: true, Secret: true,
			Description: "The catalog: 'sqlite:///abs/path/catalog.db', 'postgres://user:password@host:port/db', or the http(s) address of a REST catalog.",
			Check:       checkURI},
		{Key: "warehouse", Type: connector.String,
			Description: "Where new tables' files go: 'file:///abs/dir' or 's3://bucket/prefix'. Required by a 'sql' catalog; a 'rest' catalog may choose its own."},
		{Key: "catalog-database", Type: connector.String, Default: "default",
			Description: "The namespace of the table in the catalog; created when missing."},
		{Key: "catalog-table", Type: connector.String,
			Description: "The table's name in the catalog; by default the name of the SQL table."},
		{Key: "format-version", Type: connector.Int, Default: "2",
			Description: "The Iceberg format version of a table the sink creates: 2 (deletes are Parquet position-delete files) or 3 (deletes are deletion vectors).",
			Check: func(v string) error {
				if v != "2" && v != "3" {
					return fmt.Errorf("want 2 or 3: format version 1 has no row-level deletes")
				}
				return nil
			}},
		{Key: "write.upsert.enabled", Type: connector.Bool, Default: "true",
			Description: "With a primary key: whether an insertion of a key the table holds replaces its row (upsert). eddy's sink keeps keys unique either way; 'false' is accepted for Flink's DDL."},
		{Key: deleteModeOption, Type: connector.Enum, Default: deleteModePosition, Values: []string{deleteModePosition, deleteModeEquality},
			Description: "With a primary key: how the rows an update or deletion replaces are deleted. 'position': by position, through the sink's key index in keyed state (position-delete files or deletion vectors); cheap to read, but the index knows only the rows the sink wrote. " +
				"'equality': as Flink's Iceberg sink does, an equality delete of the key (a row of the key columns, in an equality-delete file) for every key changed in a checkpoint, plus a position delete of a row written and replaced within the checkpoint; no key index, and rows other writers wrote are replaced too, but every reader joins the equality deletes against older data files. " +
				"Use 'equality' for tables other writers update as well. Not with 'compaction-enabled'."},
		{Key: "write.target-file-size-bytes", Type: connector.MemorySize, Default: "128 mb",
			Description: "A data file is closed and a new one begun once it reaches this size; files are also closed at every checkpoint, when they become visible."},
		{Key: "write.format.default", Type: connector.Enum, Default: "parquet", Values: []string{"parquet"},
			Description: "The format of data files: Parquet."},
		{Key: "s3.#", Type: connector.String, Secret: true,
			Description: "Options of an 's3://' warehouse, passed to the file IO as Iceberg names them: 's3.endpoint', 's3.region', 's3.access-key-id', 's3.secret-access-key', 's3.path-style-access'."},
	}, slices.Concat(restCatalogKeys, partitionOptions, maintenanceOptions, compactionOptions, sourceOptions)...),
}

// checkURI accepts the catalog addresses the sink can open.
func checkURI(v string) error {
	u, err := url.Parse(v)
	if err != nil {
		return fmt.Errorf("not a URI: %w", err)
	}
	switch u.Scheme {
	case "sqlite":
		if !strings.HasPrefix(u.Path, "/") || u.Host != "" {
			return fmt.Errorf("write a SQLite catalog as 'sqlite:///abs/path/catalog.db' (three slashes and an absolute path)")
		}
	case "postgres", "postgresql", "http", "https":
	default:
		return fmt.Errorf("scheme %q: want 'sqlite:///abs/path/catalog.db', 'postgres://user:password@host:port/db' or a REST catalog's http(s) address", u.Scheme)
	}
	return nil
}

// config is the sink's configuration, from its validated options.
type config struct {
	catalogName, catalogType, uri, warehouse string
	namespace, table                         string
	formatVersion                            int
	targetFileSize                           int64
	partitionKey                             string
	props                                    map[string]string
	maintenance                              maintenanceConfig
	compaction                               compactionConfig
	// equalityDeletes is set when 'write.upsert.delete-mode' is
	// 'equality'.
	equalityDeletes bool
}

// The option choosing how an upsert table's replaced rows are deleted, and
// its values.
const (
	deleteModeOption   = "write.upsert.delete-mode"
	deleteModePosition = "position"
	deleteModeEquality = "equality"
)

func newConfig(name string, o connector.Options) (*config, error) {
	c := &config{
		catalogName: o.String("catalog-name"), catalogType: o.String("catalog-type"),
		uri: o.String("uri"), warehouse: o.String("warehouse"),
		namespace: o.String("catalog-database"), table: o.String("catalog-table"),
		formatVersion: int(o.Int("format-version")), targetFileSize: o.MemorySize("write.target-file-size-bytes"),
		props: map[string]string{}, maintenance: newMaintenanceConfig(o),
	}
	c.compaction = newCompactionConfig(o, c.targetFileSize)
	c.equalityDeletes = o.String(deleteModeOption) == deleteModeEquality
	if c.equalityDeletes && c.compaction.enabled {
		return nil, &connector.OptionError{Connector: "iceberg", Key: deleteModeOption, Problem: "is 'equality', which 'compaction-enabled' = 'true' does not support (compaction moves rows by position): turn compaction off, or use 'position'"}
	}
	if o.IsSet(partitionKeyOption) {
		c.partitionKey = o.String(partitionKeyOption)
	}
	if c.catalogType == "jdbc" {
		c.catalogType = "sql"
	}
	if c.table == "" {
		c.table = name
	}
	if c.table == "" {
		return nil, &connector.OptionError{Connector: "iceberg", Key: "catalog-table", Problem: "is not set and the table has no name: name the Iceberg table"}
	}
	u, _ := url.Parse(c.uri)
	switch {
	case c.catalogType == "sql" && (u.Scheme == "http" || u.Scheme == "https"):
		return nil, &connector.OptionError{Connector: "iceberg", Key: "uri", Problem: "is an http address, which a 'sql' catalog cannot open: set 'catalog-type' = 'rest', or give 'sqlite:///abs/path/catalog.db' or 'postgres://...'"}
	case c.catalogType == "rest" && u.Scheme != "http" && u.Scheme != "https":
		return nil, &connector.OptionError{Connector: "iceberg", Key: "uri", Problem: "a 'rest' catalog is an http(s) address"}
	case c.catalogType == "sql" && c.warehouse == "":
		return nil, &connector.OptionError{Connector: "iceberg", Key: "warehouse", Problem: "is required by a 'sql' catalog: give 'file:///abs/dir' or 's3://bucket/prefix'"}
	}
	for _, k := range o.Names("s3.#") {
		if err := addS3Prop(c.props, k, o.String("s3."+k)); err != nil {
			return nil, &connector.OptionError{Connector: "iceberg", Key: "s3." + k, Problem: err.Error()}
		}
	}
	addRESTCatalogProps(c.props, o, "")
	return c, nil
}

// where names the table for errors, without credentials.
func (c *config) where() string {
	return fmt.Sprintf("Iceberg table %s.%s of catalog %q", c.namespace, c.table, c.catalogName)
}

type factory struct{}

func (factory) Spec() connector.Spec { return spec }

// NewSink returns the sink of a SQL table.
func (factory) NewSink(ctx connector.Context) (any, error) {
	if ctx.Table == nil {
		return nil, fmt.Errorf("connector 'iceberg' writes SQL tables (rows of a declared schema); declare the table in SQL or a pipeline")
	}
	cfg, err := newConfig(ctx.Table.Name, ctx.Options)
	if err != nil {
		return nil, err
	}
	return newSink(cfg, ctx.Table), nil
}

// NewSource returns the source of a SQL table.
func (factory) NewSource(ctx connector.Context) (any, error) {
	if ctx.Table == nil {
		return nil, fmt.Errorf("connector 'iceberg' reads SQL tables (rows of a declared schema); declare the table in SQL or a pipeline")
	}
	cfg, err := newSourceConfig(ctx.Table.Name, ctx.Options)
	if err != nil {
		return nil, err
	}
	return newSource(cfg, ctx.Table)
}

func init() { connector.Register(factory{}) }
