package iceberg

import (
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/testservers"
	"github.com/eddystream/eddy/sql/types"
)

// testCatalog opens a SQLite catalog with a local warehouse in a temporary
// directory.
func testCatalog(t testing.TB) catalog.Catalog {
	t.Helper()
	dir := t.TempDir()
	cat, err := openCatalog(context.Background(), "sql", "eddy", "sqlite://"+filepath.Join(dir, "meta", "catalog.db"), "file://"+filepath.Join(dir, "warehouse"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, ok := cat.(catalog.Closer); ok {
			_ = c.Close()
		}
	})
	return cat
}

// testTable creates the table db.<name> of the columns rt with the primary
// key key.
func testTable(t testing.TB, cat catalog.Catalog, name string, rt *types.RowType, key []int, formatVersion int) *table.Table {
	t.Helper()
	tbl, err := loadOrCreateTable(context.Background(), cat, "db", name, &connector.Table{Schema: rt, PrimaryKey: key}, formatVersion, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// scanRows reads the table with iceberg-go's scan and returns its rows as
// the Arrow text of their values, joined by " | ", sorted.
func scanRows(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	return scanRowsOf(t, tbl.Scan())
}

// roundTrip passes file descriptions through JSON, as checkpoints do.
func roundTrip(t *testing.T, ms []fileMeta) []fileMeta {
	t.Helper()
	b, err := json.Marshal(ms)
	if err != nil {
		t.Fatal(err)
	}
	var out []fileMeta
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOpenCatalogErrors(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ typ, uri, want string }{
		{"sql", "sqlite://relative/catalog.db", "absolute path"},
		{"sql", "mysql://host/db", "must start with sqlite:// or postgres://"},
		{"rest", "ftp://x", "must start with http://"},
		{"hive", "thrift://x", "unknown 'catalog-type'"},
	} {
		_, err := openCatalog(ctx, c.typ, "c", c.uri, "file:///tmp/w", nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("openCatalog(%s, %s) = %v, want an error containing %q", c.typ, c.uri, err, c.want)
		}
	}
}

// TestPostgresCatalog writes through the sink into a table of a catalog
// kept in a private PostgreSQL server, and reads it back.
func TestPostgresCatalog(t *testing.T) {
	p := testservers.StartPostgres(t)
	dir := t.TempDir()
	opts := sinkOptions(dir, "pg_kv")
	opts["uri"] = p.DSN("postgres")
	sink, err := connector.OpenTableSink(connector.Default, "iceberg", opts, &connector.Table{Schema: upsertType, PrimaryKey: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	const n, keys = 300, 40
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: n},
		func(i int64) changelog.Change[types.Row] { return kvChange(i, keys) }, eddy.NoWatermarks[changelog.Change[types.Row]]()).Parallelism(1)
	key := types.NewKeyEncoder(upsertType, 0)
	eddy.WriteUpserts(eddy.AsChangelog(src, changelog.Upsert), "kv", key.Key, sink, eddy.KeyedBySinkKey())
	if err := env.Execute(context.Background(), "postgres-catalog"); err != nil {
		t.Fatal(err)
	}
	cat, err := openCatalog(context.Background(), "sql", "eddy", p.DSN("postgres"), "file://"+filepath.Join(dir, "warehouse"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeCatalog(cat)
	tbl, err := cat.LoadTable(context.Background(), table.Identifier{"db", "pg_kv"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := scanRows(t, tbl), kvState(n, keys); !slices.Equal(got, want) {
		t.Fatalf("the table holds %d rows, want %d:\n%s", len(got), len(want), rowDiff(got, want))
	}
}

func TestLoadOrCreateTable(t *testing.T) {
	cat := testCatalog(t)
	rt := types.MustRowType(
		types.F("id", types.BigInt().NotNull()),
		types.F("name", types.String()),
		types.F("amount", types.DecimalType(10, 2)),
	)
	tbl := testTable(t, cat, "orders", rt, []int{0}, 2)
	sc := tbl.Schema()
	if got := sc.IdentifierFieldIDs; len(got) != 1 || got[0] != 1 {
		t.Errorf("identifier fields = %v, want [1]", got)
	}
	if f, _ := sc.FindFieldByName("id"); !f.Required {
		t.Errorf("key column id is optional")
	}
	if tbl.Metadata().Version() != 2 {
		t.Errorf("format version = %d, want 2", tbl.Metadata().Version())
	}

	// The same DDL loads the table.
	testTable(t, cat, "orders", rt, []int{0}, 2)

	// Another DDL lists the differences.
	other := types.MustRowType(
		types.F("id", types.Int().NotNull()),
		types.F("name", types.String()),
		types.F("extra", types.Double()),
	)
	_, err := loadOrCreateTable(context.Background(), cat, "db", "orders", &connector.Table{Schema: other, PrimaryKey: []int{0}}, 2, nil)
	if err == nil {
		t.Fatal("no error for a DDL that does not match the table")
	}
	for _, want := range []string{`column "id" is int in the DDL but long`, `column "extra" (double) is not in the Iceberg table`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}

	// A subset of the columns is fine: the others are optional.
	sub := types.MustRowType(types.F("id", types.BigInt().NotNull()), types.F("name", types.String()))
	testTable(t, cat, "orders", sub, []int{0}, 2)
}

func TestIcebergSchemaTypes(t *testing.T) {
	rt := types.MustRowType(
		types.F("b", types.Boolean()),
		types.F("ti", types.TinyInt()),
		types.F("si", types.SmallInt()),
		types.F("i", types.Int()),
		types.F("l", types.BigInt()),
		types.F("f", types.Float()),
		types.F("d", types.Double()),
		types.F("dec", types.DecimalType(12, 3)),
		types.F("c", types.Char(4)),
		types.F("s", types.String()),
		types.F("bin", types.Binary(2)),
		types.F("vb", types.Bytes()),
		types.F("dt", types.DateType()),
		types.F("tm", types.TimeType(3)),
		types.F("ts", types.TimestampType(6)),
		types.F("ltz", types.TimestampLTZType(3)),
		types.F("r", types.RowOf(types.F("x", types.Int().NotNull()), types.F("y", types.String()))),
		types.F("a", types.ArrayOf(types.BigInt())),
		types.F("m", types.MapOf(types.String().NotNull(), types.Double())),
	)
	sc, err := icebergSchema(rt, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"boolean", "int", "int", "int", "long", "float", "double", "decimal(12, 3)", "string", "string", "binary", "binary",
		"date", "time", "timestamp", "timestamptz", "struct<20: x: required int, 21: y: optional string>", "list<long>", "map<string, double>"}
	for i, f := range sc.Fields() {
		if got := f.Type.String(); got != want[i] {
			t.Errorf("column %s: %s, want %s", f.Name, got, want[i])
		}
	}

	ns := types.MustRowType(types.F("ts", types.TimestampType(9)), types.F("ltz", types.TimestampLTZType(7)))
	if _, err := icebergSchema(ns, nil, 2); err == nil || !strings.Contains(err.Error(), "use TIMESTAMP(6) or set 'format-version' = '3'") {
		t.Errorf("TIMESTAMP(9) in format version 2: %v", err)
	}
	sc, err = icebergSchema(ns, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := sc.Field(0).Type.String(), sc.Field(1).Type.String(); a != "timestamp_ns" || b != "timestamptz_ns" {
		t.Errorf("nanosecond timestamps in format version 3: %s, %s", a, b)
	}

	for _, bad := range []types.Type{types.IntervalDayTime(), types.IntervalYearMonth(), types.MultisetOf(types.Int())} {
		_, err := icebergSchema(types.MustRowType(types.F("x", bad)), nil, 2)
		if err == nil || !strings.Contains(err.Error(), "column `x`") {
			t.Errorf("%s: %v, want an error naming the column", bad, err)
		}
	}
}

func TestMain(m *testing.M) { testservers.Main(m) }

// TestS3AndRESTOptions checks how the 's3.*' options and the REST
// catalog's sign-in options become the catalog's properties.
func TestS3AndRESTOptions(t *testing.T) {
	base := map[string]string{"catalog-name": "c", "catalog-type": "rest", "uri": "http://127.0.0.1:8181", "catalog-table": "t"}
	with := func(kv ...string) map[string]string {
		m := maps.Clone(base)
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	sink := func(opts map[string]string) (*config, error) {
		o, err := spec.Validate(opts)
		if err != nil {
			return nil, err
		}
		return newConfig("t", o)
	}
	c, err := sink(with("s3.endpoint", "http://s3:9000", "s3.path-style-access", "true",
		"credential", "id:secret", "scope", "catalog", "rest.sigv4-enabled", "false"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"s3.endpoint": "http://s3:9000", "s3.force-virtual-addressing": "false",
		"credential": "id:secret", "scope": "catalog", "rest.sigv4-enabled": "false"}
	if !maps.Equal(c.props, want) {
		t.Errorf("props %v, want %v", c.props, want)
	}
	if c, err = sink(with("s3.path-style-access", "false")); err != nil || c.props["s3.force-virtual-addressing"] != "true" {
		t.Errorf("'s3.path-style-access' = 'false' gives %v, %v; want s3.force-virtual-addressing = true", c, err)
	}
	if _, err := sink(with("s3.path-style-access", "maybe")); err == nil || !strings.Contains(err.Error(), "s3.path-style-access") {
		t.Errorf("'s3.path-style-access' = 'maybe': %v, want an error naming the option", err)
	}
}

// TestPipelineS3AndRESTOptions checks the same options as the pipeline
// sink's 'catalog.properties.' keys.
func TestPipelineS3AndRESTOptions(t *testing.T) {
	o, err := pipelineSpec.Validate(map[string]string{
		"catalog.properties.type": "rest", "catalog.properties.uri": "http://127.0.0.1:8181",
		"catalog.properties.s3.path-style-access": "true", "catalog.properties.credential": "id:secret",
		"catalog.properties.rest.sigv4-enabled": "true", "catalog.properties.rest.signing-name": "s3tables",
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := newPipelineSink(o)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"s3.force-virtual-addressing": "false", "credential": "id:secret",
		"rest.sigv4-enabled": "true", "rest.signing-name": "s3tables"}
	if !maps.Equal(s.cfg.props, want) {
		t.Errorf("props %v, want %v", s.cfg.props, want)
	}
}
