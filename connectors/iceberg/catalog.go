package iceberg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	icebergo "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/rest" // registers the "rest" catalog type
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // registers the s3:// file IO
	"github.com/apache/iceberg-go/table"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for Postgres catalogs
	_ "modernc.org/sqlite"             // database/sql driver "sqlite" (pure Go) for SQLite catalogs

	"github.com/eddystream/eddy/connector"
)

// Catalog types accepted by openCatalog.
const (
	catalogSQL  = "sql"
	catalogREST = "rest"
)

// openCatalog opens the Iceberg catalog called name.
//
// catalogType "sql" is a JDBC-style catalog kept in a database: uri
// sqlite:///abs/path/catalog.db (a SQLite file, created with its directory
// when missing) or postgres://... / postgresql://... (a Postgres
// database). The catalog's tables are created when missing. catalogType
// "rest" is an Iceberg REST catalog at uri (http:// or https://).
//
// warehouse is the root of new tables (file:///dir for a local directory,
// s3://bucket/prefix for object storage); props are further catalog and
// FileIO properties (credentials, s3.region, ...), passed through.
func openCatalog(ctx context.Context, catalogType, name, uri, warehouse string, props map[string]string) (catalog.Catalog, error) {
	p := icebergo.Properties{}
	for k, v := range props {
		p[k] = v
	}
	if warehouse != "" {
		p["warehouse"] = warehouse
	}
	switch strings.ToLower(catalogType) {
	case catalogSQL:
		switch {
		case strings.HasPrefix(uri, "sqlite://"):
			path := strings.TrimPrefix(uri, "sqlite://")
			if !filepath.IsAbs(path) {
				return nil, fmt.Errorf("iceberg catalog %q: 'uri' %q must name an absolute path, as in sqlite:///var/lib/eddy/catalog.db", name, uri)
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return nil, fmt.Errorf("iceberg catalog %q: creating the directory of the SQLite catalog %s: %w", name, path, err)
			}
			p["uri"] = "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"
			p[sqlcat.DriverKey] = "sqlite"
			p[sqlcat.DialectKey] = string(sqlcat.SQLite)
		case strings.HasPrefix(uri, "postgres://"), strings.HasPrefix(uri, "postgresql://"):
			p["uri"] = uri
			p[sqlcat.DriverKey] = "pgx"
			p[sqlcat.DialectKey] = string(sqlcat.Postgres)
		default:
			return nil, fmt.Errorf("iceberg catalog %q: 'uri' %q of a sql catalog must start with sqlite:// or postgres://", name, redactURI(uri))
		}
		p["init_catalog_tables"] = "true"
		p["type"] = catalogSQL
	case catalogREST:
		if !strings.HasPrefix(uri, "http://") && !strings.HasPrefix(uri, "https://") {
			return nil, fmt.Errorf("iceberg catalog %q: 'uri' %q of a rest catalog must start with http:// or https://", name, redactURI(uri))
		}
		p["uri"] = uri
		p["type"] = catalogREST
	default:
		return nil, fmt.Errorf("iceberg catalog %q: unknown 'catalog-type' %q: use 'sql' or 'rest'", name, catalogType)
	}
	cat, err := loadCatalog(ctx, name, p)
	if err != nil {
		return nil, fmt.Errorf("iceberg catalog %q: opening the %s catalog at %s: %w", name, catalogType, redactURI(uri), err)
	}
	return cat, nil
}

// sqliteOpenWait bounds how long opening a SQLite catalog waits for
// another connection that holds the file's lock.
const sqliteOpenWait = 10 * time.Second

// loadCatalog loads the catalog of properties p. Opening a SQLite catalog
// creates its tables and switches the file to WAL, which SQLite refuses at
// once, without waiting out its busy timeout, while another connection
// (a source and a sink of one job, opening the same catalog) does the
// same: that is tried again, for up to sqliteOpenWait.
func loadCatalog(ctx context.Context, name string, p icebergo.Properties) (catalog.Catalog, error) {
	deadline := time.Now().Add(sqliteOpenWait)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		cat, err := catalog.Load(ctx, name, p)
		if err == nil || p[sqlcat.DialectKey] != string(sqlcat.SQLite) || !sqliteBusy(err) || time.Now().After(deadline) {
			return cat, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (while waiting for the SQLite catalog's lock: %w)", err, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// sqliteBusy tells whether err is SQLite's "database is locked".
func sqliteBusy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked")
}

// addS3Prop sets the file IO property s3.<key> of an 's3.*' option: as
// given, except 's3.path-style-access', the name Iceberg's Java file IO
// (and so Flink's users) know, which becomes its opposite,
// 's3.force-virtual-addressing'.
func addS3Prop(props map[string]string, key, value string) error {
	if key != "path-style-access" {
		props["s3."+key] = value
		return nil
	}
	b, err := strconv.ParseBool(value)
	if err != nil {
		return fmt.Errorf("is %q: want 'true' or 'false'", value)
	}
	props["s3.force-virtual-addressing"] = strconv.FormatBool(!b)
	return nil
}

// redactURI hides the password of a URI's user information, for error
// messages.
func redactURI(uri string) string {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return uri
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return uri
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass {
		return uri
	}
	return scheme + "://" + user + ":xxxxx" + rest[at:]
}

// tableCatalogs holds the catalog each table (by UUID) was last loaded
// from by loadOrCreateTable, for the commits iceberg-go's transactions
// cannot make (commitUnchecked).
var tableCatalogs sync.Map // string -> catalog.Catalog

// rememberCatalog notes that tbl was loaded from cat.
func rememberCatalog(tbl *table.Table, cat catalog.Catalog) {
	tableCatalogs.Store(tbl.Metadata().TableUUID().String(), cat)
}

// catalogOf returns the catalog tbl was loaded from by loadOrCreateTable.
func catalogOf(tbl *table.Table) (catalog.Catalog, bool) {
	c, ok := tableCatalogs.Load(tbl.Metadata().TableUUID().String())
	if !ok {
		return nil, false
	}
	return c.(catalog.Catalog), true
}

// tableIdentifier returns the identifier of table tableName in namespace
// (dotted for a nested namespace: "a.b").
func tableIdentifier(namespace, tableName string) table.Identifier {
	return append(strings.Split(namespace, "."), tableName)
}

// loadOrCreateTable loads the Iceberg table namespace.tableName, creating
// the namespace and the table when missing. A new table gets the columns
// of t (see icebergSchema), the primary key as its identifier fields,
// identity partitions of t's PARTITIONED BY columns, the format version
// formatVersion and the table properties props. An existing table must
// have t's columns with the same types (optional columns t lacks are
// allowed); the error lists every difference. It keeps its own
// partitioning.
func loadOrCreateTable(ctx context.Context, cat catalog.Catalog, namespace, tableName string, t *connector.Table, formatVersion int, props map[string]string) (*table.Table, error) {
	return loadOrCreatePartitionedTable(ctx, cat, namespace, tableName, t, formatVersion, props, "")
}

// loadOrCreatePartitionedTable is loadOrCreateTable partitioning a new
// table by partitionKey, a 'partition.key' value (transforms of columns,
// see parsePartitionKey), when it is not empty.
func loadOrCreatePartitionedTable(ctx context.Context, cat catalog.Catalog, namespace, tableName string, t *connector.Table, formatVersion int, props map[string]string, partitionKey string) (*table.Table, error) {
	if formatVersion < 1 || formatVersion > 3 {
		return nil, fmt.Errorf("iceberg table %s.%s: 'format-version' %d is not supported: use 2 (or 1 or 3)", namespace, tableName, formatVersion)
	}
	ident := tableIdentifier(namespace, tableName)
	ns := catalog.NamespaceFromIdent(ident)
	exists, err := cat.CheckNamespaceExists(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("iceberg namespace %s: checking that it exists: %w", namespace, err)
	}
	if !exists {
		if err := cat.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
			return nil, fmt.Errorf("iceberg namespace %s: creating it: %w", namespace, err)
		}
	}

	tbl, err := cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		sc, serr := icebergSchema(t.Schema, t.PrimaryKey, formatVersion)
		if serr != nil {
			return nil, fmt.Errorf("iceberg table %s.%s: %w", namespace, tableName, serr)
		}
		tp := icebergo.Properties{}
		for k, v := range props {
			tp[k] = v
		}
		tp["format-version"] = strconv.Itoa(formatVersion)
		terms, perr := partitionTermsOf(t, partitionKey)
		if perr != nil {
			return nil, fmt.Errorf("iceberg table %s.%s: %w", namespace, tableName, perr)
		}
		spec, perr := partitionSpecOf(sc, terms)
		if perr != nil {
			return nil, fmt.Errorf("iceberg table %s.%s: %w", namespace, tableName, perr)
		}
		tbl, err = cat.CreateTable(ctx, ident, sc, catalog.WithProperties(tp), catalog.WithPartitionSpec(&spec))
		if errors.Is(err, catalog.ErrTableAlreadyExists) {
			tbl, err = cat.LoadTable(ctx, ident) // created concurrently
		}
		if err != nil {
			return nil, fmt.Errorf("iceberg table %s.%s: creating it: %w", namespace, tableName, err)
		}
		rememberCatalog(tbl, cat)
		return tbl, nil
	}
	if err != nil {
		return nil, fmt.Errorf("iceberg table %s.%s: loading it: %w", namespace, tableName, err)
	}

	want, err := icebergSchema(t.Schema, t.PrimaryKey, tbl.Metadata().Version())
	if err != nil {
		return nil, fmt.Errorf("iceberg table %s.%s (format version %d): %w", namespace, tableName, tbl.Metadata().Version(), err)
	}
	if diffs := schemaDifferences(want, tbl.Schema()); len(diffs) > 0 {
		return nil, fmt.Errorf("iceberg table %s.%s exists with other columns than the DDL: %s; change the DDL's columns to match the table (or write to a new table)",
			namespace, tableName, formatDifferences(diffs))
	}
	rememberCatalog(tbl, cat)
	return tbl, nil
}
