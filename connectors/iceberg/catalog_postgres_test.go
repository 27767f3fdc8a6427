package iceberg

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	icebergo "github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/testservers"
	"github.com/eddystream/eddy/sql/types"
)

// TestPostgresCatalogReadByIcebergGo writes inserts, updates and deletes
// of an upsert table through the sink into a PostgreSQL catalog (a user
// with a password, as in 'uri' = 'postgres://user:password@host:port/db')
// and a local warehouse, in a job that checkpoints as it runs. It then
// opens iceberg-go's own SQL catalog on the same database, scans the table
// and compares it with the final state of the changes, and checks the
// table's row in the catalog's iceberg_tables with a plain query.
func TestPostgresCatalogReadByIcebergGo(t *testing.T) {
	ctx := context.Background()
	p := testservers.StartPostgres(t)
	admin, err := pgx.Connect(ctx, p.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for _, q := range []string{
		"CREATE USER lake_writer PASSWORD 'lake-Secret-1'",
		"CREATE DATABASE lake OWNER lake_writer",
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	uri := fmt.Sprintf("postgres://lake_writer:lake-Secret-1@%s/lake?sslmode=disable", p.Addr())
	dir := t.TempDir()
	warehouse := "file://" + filepath.Join(dir, "warehouse")
	opts := map[string]string{
		"catalog-name": "eddy", "catalog-type": "sql",
		"uri": uri, "warehouse": warehouse,
		"catalog-database": "db", "catalog-table": "pg_upserts",
	}

	// The model of the table: key -> rendered row, as scanRows renders it.
	state := map[int64]string{}
	row := func(k, seq int64) types.Row {
		return types.MustBuildRow(upsertType, nil, k, seq, fmt.Sprintf("v%d", seq))
	}
	// Phase 1 inserts keys 0..59; phase 2 deletes every third key and
	// updates the others; phase 3 deletes keys k%5 == 1 (some already gone)
	// and upserts keys 0..79 else, re-inserting deleted keys and adding new
	// ones.
	phases := []struct {
		n      int64
		change func(i int64) changelog.Change[types.Row]
	}{
		{60, func(i int64) changelog.Change[types.Row] { return changelog.Of(changelog.Insert, row(i, 1000+i)) }},
		{60, func(i int64) changelog.Change[types.Row] {
			if i%3 == 0 {
				return changelog.Of(changelog.Delete, types.MustBuildRow(upsertType, nil, i, nil, nil))
			}
			return changelog.Of(changelog.UpdateAfter, row(i, 2000+i))
		}},
		{80, func(i int64) changelog.Change[types.Row] {
			if i%5 == 1 {
				return changelog.Of(changelog.Delete, types.MustBuildRow(upsertType, nil, i, nil, nil))
			}
			return changelog.Of(changelog.UpdateAfter, row(i, 3000+i))
		}},
	}
	// One job runs the three phases one after the other, checkpointing as
	// it goes: the sink's key index (keyed state) carries over from one
	// checkpoint to the next, so updates and deletes replace rows committed
	// in earlier snapshots.
	var total int64
	for _, ph := range phases {
		total += ph.n
	}
	change := func(i int64) changelog.Change[types.Row] {
		for _, ph := range phases {
			if i < ph.n {
				return ph.change(i)
			}
			i -= ph.n
		}
		panic(fmt.Sprintf("change %d is past the %d changes", i, total))
	}
	for i := int64(0); i < total; i++ {
		c := change(i)
		k := c.Row.Int64(0)
		if c.Kind == changelog.Delete {
			delete(state, k)
		} else {
			seq := c.Row.Int64(1)
			state[k] = fmt.Sprintf("%d | %d | v%d", k, seq, seq)
		}
	}
	sink, err := connector.OpenTableSink(connector.Default, "iceberg", opts, &connector.Table{Schema: upsertType, PrimaryKey: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2),
		eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: total, RatePerSecond: 1000},
		change, eddy.NoWatermarks[changelog.Change[types.Row]]()).Parallelism(1)
	key := types.NewKeyEncoder(upsertType, 0)
	eddy.WriteUpserts(eddy.AsChangelog(src, changelog.Upsert), "kv", key.Key, sink, eddy.KeyedBySinkKey())
	if err := env.Execute(ctx, "postgres-catalog"); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range state {
		want = append(want, r)
	}
	slices.Sort(want)

	// iceberg-go's own SQL catalog on the same database, not eddy's.
	db, err := sql.Open("pgx", uri)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := sqlcat.NewCatalog("eddy", db, sqlcat.Postgres, icebergo.Properties{"warehouse": warehouse})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	tbl, err := cat.LoadTable(ctx, table.Identifier{"db", "pg_upserts"})
	if err != nil {
		t.Fatal(err)
	}
	if got := scanRows(t, tbl); !slices.Equal(got, want) {
		t.Fatalf("the table holds %d rows, want %d:\n%s", len(got), len(want), rowDiff(got, want))
	}
	if len(tbl.Metadata().Snapshots()) == 0 {
		t.Errorf("the table has no snapshot")
	}
	t.Logf("%d snapshots, %d rows", len(tbl.Metadata().Snapshots()), len(want))
	if !strings.HasPrefix(tbl.Location(), warehouse+"/") {
		t.Errorf("table location %s is not under the warehouse %s", tbl.Location(), warehouse)
	}
	sc := tbl.Schema()
	if ids := sc.IdentifierFieldIDs; len(ids) != 1 || ids[0] != 1 {
		t.Errorf("identifier fields %v, want [1] (id)", ids)
	}

	// The catalog's table row, read with a plain query as the writer.
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := testservers.PostgresRows(ctx, conn,
		"SELECT catalog_name, table_namespace, table_name, metadata_location FROM iceberg_tables ORDER BY 1, 2, 3")
	if err != nil {
		t.Fatal(err)
	}
	if wantRow := "eddy|db|pg_upserts|" + tbl.MetadataLocation(); !slices.Equal(rows, []string{wantRow}) {
		t.Errorf("iceberg_tables holds %q, want [%q]", rows, wantRow)
	}
}
