package iceberg

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	icebergo "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy/internal/testservers"
)

// The tests in this file run the sink against a real object store and a
// real Iceberg REST catalog: a private SeaweedFS server (S3 API, and an
// Iceberg REST catalog over its table buckets).

// s3Options are the sink's 's3.*' options for server s.
func s3Options(s *testservers.SeaweedFS) map[string]string {
	return map[string]string{
		"s3.endpoint": s.S3Endpoint, "s3.region": "us-east-1",
		"s3.access-key-id": s.AccessKey, "s3.secret-access-key": s.SecretKey,
	}
}

// TestS3WarehouseReadByIcebergGo writes inserts, updates and deletes of an
// upsert table through the sink into a SQLite catalog whose warehouse is
// an S3 bucket, then opens iceberg-go's own SQL catalog on the same file,
// scans the table from S3 and compares it with the final state of the
// changes; every data and metadata file must be in the bucket.
func TestS3WarehouseReadByIcebergGo(t *testing.T) {
	ctx := context.Background()
	s := testservers.StartSeaweedFS(t)
	s.CreateBucket(t, "lake")
	uri := "sqlite://" + filepath.Join(t.TempDir(), "catalog.db")
	opts := map[string]string{
		"catalog-name": "eddy", "catalog-type": "sql", "uri": uri,
		"warehouse": "s3://lake/warehouse", "catalog-database": "db", "catalog-table": "s3_upserts",
	}
	for k, v := range s3Options(s) {
		opts[k] = v
	}
	want := writeUpsertPhases(t, opts, "s3-warehouse")

	props := icebergo.Properties{}
	for k, v := range s3Options(s) {
		props[k] = v
	}
	cat, err := openCatalog(ctx, "sql", "eddy", uri, "s3://lake/warehouse", props)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, table.Identifier{"db", "s3_upserts"})
	if err != nil {
		t.Fatal(err)
	}
	checkTableOnS3(t, tbl, "s3://lake/warehouse/", want)
}

// TestRESTCatalogReadByIcebergGo writes the same changes into a table of an
// Iceberg REST catalog (SeaweedFS's, over its table bucket), the table
// created by the sink through the catalog, then loads the table through
// iceberg-go's REST client and scans it.
func TestRESTCatalogReadByIcebergGo(t *testing.T) {
	ctx := context.Background()
	s := testservers.StartSeaweedFS(t)
	s.CreateTableBucket(t, "tables")
	opts := map[string]string{
		"catalog-name": "lake", "catalog-type": "rest", "uri": s.CatalogURI,
		"warehouse": "s3://tables", "catalog-database": "db", "catalog-table": "rest_upserts",
		"credential": s.AccessKey + ":" + s.SecretKey,
	}
	for k, v := range s3Options(s) {
		opts[k] = v
	}
	want := writeUpsertPhases(t, opts, "rest-catalog")

	props := icebergo.Properties{"type": "rest", "uri": s.CatalogURI, "warehouse": "s3://tables",
		"credential": s.AccessKey + ":" + s.SecretKey}
	for k, v := range s3Options(s) {
		props[k] = v
	}
	cat, err := catalog.Load(ctx, "lake", props)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, table.Identifier{"db", "rest_upserts"})
	if err != nil {
		t.Fatal(err)
	}
	checkTableOnS3(t, tbl, "s3://tables/", want)
}

// checkTableOnS3 compares tbl's rows with want and checks that the table,
// its snapshots' manifests and its data files are under location.
func checkTableOnS3(t *testing.T, tbl *table.Table, location string, want []string) {
	t.Helper()
	if got := scanRows(t, tbl); !slices.Equal(got, want) {
		t.Fatalf("the table holds %d rows, want %d:\n%s", len(got), len(want), rowDiff(got, want))
	}
	if !strings.HasPrefix(tbl.Location(), location) || !strings.HasPrefix(tbl.MetadataLocation(), location) {
		t.Errorf("table at %s (metadata %s), want it under %s", tbl.Location(), tbl.MetadataLocation(), location)
	}
	snaps := tbl.Metadata().Snapshots()
	if len(snaps) == 0 {
		t.Fatal("the table has no snapshot")
	}
	fs, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cur := tbl.CurrentSnapshot()
	manifests, err := cur.Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, m := range manifests {
		if !strings.HasPrefix(m.FilePath(), location) {
			t.Errorf("manifest %s is not under %s", m.FilePath(), location)
		}
		entries, err := m.FetchEntries(fs, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			files++
			if p := e.DataFile().FilePath(); !strings.HasPrefix(p, location) {
				t.Errorf("file %s is not under %s", p, location)
			}
		}
	}
	if files == 0 {
		t.Errorf("the current snapshot lists no file")
	}
	t.Logf("%d snapshots, %d rows, %d live files in the current snapshot", len(snaps), len(want), files)
}
