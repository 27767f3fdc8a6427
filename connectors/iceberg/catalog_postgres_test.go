package iceberg

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	icebergo "github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"

	"github.com/eddystream/eddy/internal/testservers"
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

	want := writeUpsertPhases(t, opts, "postgres-catalog")

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
