package jdbc_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

var dimSchema = types.MustRowType(
	types.F("k", types.Int().NotNull()),
	types.F("region", types.String()),
	types.F("v", types.String()),
)

// openLookup returns the lookup of the dim table by the columns keys.
func openLookup(t *testing.T, db database, keys []int, opts ...string) connector.LookupFunc {
	t.Helper()
	src, err := openSource(t, db, "dim", &connector.Table{Schema: dimSchema, PrimaryKey: []int{0}}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ls, ok := connector.TableLookup(src)
	if !ok {
		t.Fatal("the jdbc source does not look rows up")
	}
	f, err := ls.NewLookup(keys)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// look looks key up and renders the rows found, sorted.
func look(t *testing.T, f connector.LookupFunc, kt *types.RowType, key ...types.Value) []string {
	t.Helper()
	k, err := types.BuildRow(kt, types.NewArena(64), key...)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := f(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprint(types.RowValues(dimSchema, r)))
	}
	slices.Sort(out)
	return out
}

func createDim(t *testing.T, db database) {
	db.exec(t, "CREATE TABLE dim (k INT PRIMARY KEY, region VARCHAR(10), v VARCHAR(20))")
	db.exec(t, "INSERT INTO dim VALUES (1, 'eu', 'one'), (2, 'eu', 'two'), (3, 'us', 'three'), (4, NULL, 'four')")
}

// TestLookup looks rows up by the primary key and by another column,
// with and without a cache: a change of the table is seen at once without
// a cache and not within the expiry time with one; a key that finds
// nothing is cached as such unless told otherwise; a NULL key finds
// nothing.
func TestLookup(t *testing.T) {
	for _, db := range []database{postgresDB(t), mariaDB(t)} {
		t.Run(db.name, func(t *testing.T) {
			createDim(t, db)
			byK := types.MustRowType(types.F("k", types.Int()))
			byRegion := types.MustRowType(types.F("region", types.String()))

			none := openLookup(t, db, []int{0})
			if got := look(t, none, byK, int32(1)); !slices.Equal(got, []string{"[1 eu one]"}) {
				t.Errorf("key 1: got %v", got)
			}
			if got := look(t, none, byK, int32(9)); got != nil {
				t.Errorf("key 9: got %v, want nothing", got)
			}
			if got := look(t, none, byK, nil); got != nil {
				t.Errorf("a NULL key found %v", got)
			}
			region := openLookup(t, db, []int{1})
			if got := look(t, region, byRegion, "eu"); !slices.Equal(got, []string{"[1 eu one]", "[2 eu two]"}) {
				t.Errorf("region eu: got %v", got)
			}
			if got := look(t, region, byRegion, nil); got != nil {
				t.Errorf("a NULL region found %v (SQL's = finds no NULL)", got)
			}

			partial := openLookup(t, db, []int{0}, "lookup.cache", "PARTIAL", "lookup.partial-cache.expire-after-write", "1 h", "lookup.partial-cache.max-rows", "100")
			legacy := openLookup(t, db, []int{0}, "lookup.cache.max-rows", "100", "lookup.cache.ttl", "1 h")
			noMissing := openLookup(t, db, []int{0}, "lookup.cache", "PARTIAL", "lookup.partial-cache.max-rows", "100", "lookup.partial-cache.cache-missing-key", "false")
			for _, f := range []connector.LookupFunc{partial, legacy, noMissing} {
				look(t, f, byK, int32(1))
				look(t, f, byK, int32(5))
			}
			db.exec(t, "UPDATE dim SET v = 'uno' WHERE k = 1")
			db.exec(t, "INSERT INTO dim VALUES (5, 'us', 'five')")
			if got := look(t, none, byK, int32(1)); !slices.Equal(got, []string{"[1 eu uno]"}) {
				t.Errorf("without a cache, key 1 after the update: got %v", got)
			}
			for name, f := range map[string]connector.LookupFunc{"partial": partial, "legacy": legacy} {
				if got := look(t, f, byK, int32(1)); !slices.Equal(got, []string{"[1 eu one]"}) {
					t.Errorf("%s cache, key 1 within the expiry: got %v, want the cached row", name, got)
				}
				if got := look(t, f, byK, int32(5)); got != nil {
					t.Errorf("%s cache, key 5 (missing when cached): got %v, want nothing", name, got)
				}
			}
			if got := look(t, noMissing, byK, int32(5)); !slices.Equal(got, []string{"[5 us five]"}) {
				t.Errorf("with 'cache-missing-key' = 'false', key 5 once inserted: got %v", got)
			}
		})
	}
}

// TestLookupReconnects kills the lookup's connections between lookups:
// the next lookup retries on a new connection; with no retries allowed it
// fails with an error that names the table and the key.
func TestLookupReconnects(t *testing.T) {
	db := postgresDB(t)
	createDim(t, db)
	byK := types.MustRowType(types.F("k", types.Int()))
	kill := func() {
		db.exec(t, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend' AND datname = 'postgres'")
	}
	f := openLookup(t, db, []int{0})
	look(t, f, byK, int32(1))
	kill()
	if got := look(t, f, byK, int32(2)); !slices.Equal(got, []string{"[2 eu two]"}) {
		t.Errorf("after the connection was killed: got %v", got)
	}
	g := openLookup(t, db, []int{0}, "lookup.max-retries", "0")
	look(t, g, byK, int32(1))
	kill()
	k, _ := types.BuildRow(byK, types.NewArena(64), int32(2))
	_, err := g(context.Background(), k)
	if err == nil || !strings.Contains(err.Error(), "table dim") || !strings.Contains(err.Error(), "[2]") {
		t.Errorf("a lookup on a killed connection without retries: got %v, want an error naming the table and key", err)
	}
}

// TestLookupJoinSQL joins a stream of orders read from a file with a jdbc
// dimension table at processing time, INNER and LEFT, into jdbc tables.
func TestLookupJoinSQL(t *testing.T) {
	for _, db := range []database{postgresDB(t), mariaDB(t)} {
		t.Run(db.name, func(t *testing.T) {
			createDim(t, db)
			db.exec(t, "CREATE TABLE joined (id INT, k INT, v VARCHAR(20))")
			db.exec(t, "CREATE TABLE joined_left (id INT, k INT, v VARCHAR(20))")
			dir := t.TempDir()
			var orders []string
			for i := 0; i < 60; i++ {
				orders = append(orders, fmt.Sprintf(`{"id": %d, "k": %d}`, i, i%7))
			}
			orders = append(orders, `{"id": 60, "k": null}`)
			writeLines(t, filepath.Join(dir, "orders", "o.jsonl"), orders)
			script := fmt.Sprintf(`
CREATE TABLE orders (id INT, k INT, p AS PROCTIME()) WITH ('connector' = 'filesystem', 'path' = '%[2]s', 'format' = 'json');
CREATE TABLE dim (k INT, region STRING, v STRING, PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector' = 'jdbc', 'url' = '%[1]s', 'table-name' = 'dim', 'username' = '%[3]s',
        'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '3', 'lookup.partial-cache.expire-after-access' = '10 min');
CREATE TABLE joined (id INT, k INT, v STRING) WITH ('connector' = 'jdbc', 'url' = '%[1]s', 'table-name' = 'joined', 'username' = '%[3]s', 'sink.delivery-guarantee' = 'at-least-once');
CREATE TABLE joined_left (id INT, k INT, v STRING) WITH ('connector' = 'jdbc', 'url' = '%[1]s', 'table-name' = 'joined_left', 'username' = '%[3]s', 'sink.delivery-guarantee' = 'at-least-once');
INSERT INTO joined SELECT o.id, o.k, d.v FROM orders AS o JOIN dim FOR SYSTEM_TIME AS OF o.p AS d ON o.k = d.k;
INSERT INTO joined_left SELECT o.id, o.k, d.v FROM orders AS o LEFT JOIN dim FOR SYSTEM_TIME AS OF o.p AS d ON o.k = d.k;
`, db.url, filepath.Join(dir, "orders"), db.user)
			runSQL(t, script, 2)
			names := map[int]string{1: "one", 2: "two", 3: "three", 4: "four"}
			var inner, left []string
			for i := 0; i < 60; i++ {
				k := i % 7
				if v, ok := names[k]; ok {
					inner = append(inner, fmt.Sprintf("%d|%d|%s", i, k, v))
					left = append(left, fmt.Sprintf("%d|%d|%s", i, k, v))
				} else {
					left = append(left, fmt.Sprintf("%d|%d|NULL", i, k))
				}
			}
			left = append(left, "60|NULL|NULL")
			src := func(table string) []string {
				s, err := openSource(t, db, table, &connector.Table{Schema: types.MustRowType(
					types.F("id", types.Int()), types.F("k", types.Int()), types.F("v", types.String()))})
				if err != nil {
					t.Fatal(err)
				}
				rs, err := readAll(t, s, 1)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, r := range rs {
					out = append(out, rowText(r))
				}
				slices.Sort(out)
				return out
			}
			slices.Sort(inner)
			slices.Sort(left)
			if got := src("joined"); !slices.Equal(got, inner) {
				t.Errorf("the inner join wrote %d rows %v, want %d", len(got), got, len(inner))
			}
			if got := src("joined_left"); !slices.Equal(got, left) {
				t.Errorf("the left join wrote %d rows %v, want %d", len(got), got, len(left))
			}
		})
	}
}

// rowText renders a row of (id INT, k INT, v STRING) as id|k|v.
func rowText(r connector.TableRecord) string {
	rt := types.MustRowType(types.F("id", types.Int()), types.F("k", types.Int()), types.F("v", types.String()))
	var f []string
	for i := 0; i < 3; i++ {
		if r.Row.IsNull(i) {
			f = append(f, "NULL")
		} else {
			f = append(f, string(types.AppendText(nil, rt, r.Row, i, nil)))
		}
	}
	return strings.Join(f, "|")
}
