package sql_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/eddystream/eddy"
)

// TestFilesystemLookupJoin joins a stream with a filesystem table at
// processing time (JOIN dim FOR SYSTEM_TIME AS OF s.p ON ...), declared
// with Flink's legacy options as Nexmark's q13 declares its side input
// and with today's options, INNER and LEFT, on a BIGINT and on an INT
// column, and compares the rows with brute force at parallelism 1 and 2.
func TestFilesystemLookupJoin(t *testing.T) {
	dir := t.TempDir()
	var orders []string
	for i := 0; i < 300; i++ {
		orders = append(orders, fmt.Sprintf(`{"id": %d, "k": %d}`, i, i*7%23))
	}
	orders = append(orders, `{"id": 300, "k": null}`)
	writeFile(t, filepath.Join(dir, "orders", "orders.jsonl"), orders...)
	// Keys 0 to 19 once, 5 twice; 20 to 22 have no row (nor has NULL).
	var dim []string
	for k := 0; k < 20; k++ {
		dim = append(dim, fmt.Sprintf("%d,v%d", k, k))
	}
	dim = append(dim, "5,five")
	writeFile(t, filepath.Join(dir, "dim", "side_input.txt"), dim...)

	var inner, left []string
	for i := 0; i < 300; i++ {
		k := i * 7 % 23
		switch {
		case k >= 20:
			left = append(left, fmt.Sprintf("+I[%d, %d, null]", i, k))
		case k == 5:
			inner = append(inner, fmt.Sprintf("+I[%d, %d, v5]", i, k), fmt.Sprintf("+I[%d, %d, five]", i, k))
		default:
			inner = append(inner, fmt.Sprintf("+I[%d, %d, v%d]", i, k, k))
		}
	}
	left = append(append(left, inner...), "+I[300, null, null]")

	script := fmt.Sprintf(`
CREATE TABLE orders (id BIGINT, k BIGINT, p AS PROCTIME())
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE side_input (key BIGINT, `+"`value`"+` VARCHAR)
  WITH ('connector.type' = 'filesystem', 'connector.path' = 'file://%s', 'format.type' = 'csv');
CREATE TABLE dim (key BIGINT, v VARCHAR)
  WITH ('connector' = 'filesystem', 'path' = '%[3]s', 'format' = 'csv', 'lookup.cache' = 'FULL');
CREATE TABLE dim_int (key INT, v VARCHAR)
  WITH ('connector' = 'filesystem', 'path' = '%[3]s', 'format' = 'csv');
CREATE TABLE out_inner (id BIGINT, k BIGINT, v VARCHAR) WITH ('connector' = 'collect');
CREATE TABLE out_left (id BIGINT, k BIGINT, v VARCHAR) WITH ('connector' = 'collect');
CREATE TABLE out_left_int (id BIGINT, k BIGINT, v VARCHAR) WITH ('connector' = 'collect');
INSERT INTO out_inner SELECT O.id, O.k, S.`+"`value`"+`
  FROM orders AS O JOIN side_input FOR SYSTEM_TIME AS OF O.p AS S ON MOD(O.k, 10000) = S.key;
INSERT INTO out_left SELECT O.id, O.k, D.v
  FROM orders AS O LEFT JOIN dim FOR SYSTEM_TIME AS OF O.p AS D ON O.k = D.key;
INSERT INTO out_left_int SELECT O.id, O.k, D.v
  FROM orders AS O LEFT JOIN dim_int FOR SYSTEM_TIME AS OF O.p AS D ON CAST(O.k AS INT) = D.key;
`, filepath.Join(dir, "orders"), filepath.Join(dir, "dim", "side_input.txt"), filepath.Join(dir, "dim"))
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			got, _ := runWith(t, script, eddy.WithParallelism(p))
			// Both sinks collect into one list; the inner join's rows
			// all have a value and the left join's are a superset.
			all := sorted(got)
			want := sorted(append(append(append([]string{}, inner...), left...), left...))
			if d := diffLines(all, want); d != "" {
				t.Fatal(d)
			}
		})
	}
}

// TestFilesystemLookupJoinColumns joins a filesystem table whose rows the
// join reads as the source holds them, picking its columns in another
// order, with a condition on them in the ON clause of a LEFT join (a row
// none of whose rows it takes is padded with NULLs, once), and a table
// with a computed column, whose rows the join projects first; it compares
// the rows with brute force.
func TestFilesystemLookupJoinColumns(t *testing.T) {
	dir := t.TempDir()
	var orders []string
	for i := 0; i < 200; i++ {
		orders = append(orders, fmt.Sprintf(`{"id": %d, "k": %d}`, i, i*7%23))
	}
	orders = append(orders, `{"id": 200, "k": null}`)
	writeFile(t, filepath.Join(dir, "orders", "orders.jsonl"), orders...)
	// Two rows per key, of which the ON condition (b > 6) takes one at
	// most: the LEFT join pads a row once, when neither is taken.
	var dim []string
	for k := 0; k < 10; k++ {
		dim = append(dim, fmt.Sprintf("%d,a%d,%d", k, k, 2*k), fmt.Sprintf("%d,z%d,1", k, k))
	}
	writeFile(t, filepath.Join(dir, "dim", "dim.csv"), dim...)

	var want []string
	for i := 0; i < 200; i++ {
		k := i * 7 % 23
		if k < 10 && 2*k > 6 {
			want = append(want, fmt.Sprintf("+I[%d, %d, a%d]", i, 2*k, k))
		} else {
			want = append(want, fmt.Sprintf("+I[%d, null, null]", i))
		}
		if k < 10 {
			want = append(want, fmt.Sprintf("+I[%d, A%d]", i, k), fmt.Sprintf("+I[%d, Z%d]", i, k))
		}
	}
	want = append(want, "+I[200, null, null]")

	script := fmt.Sprintf(`
CREATE TABLE orders (id BIGINT, k BIGINT, p AS PROCTIME())
  WITH ('connector' = 'filesystem', 'path' = '%[1]s', 'format' = 'json');
CREATE TABLE dim (key BIGINT, a VARCHAR, b BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '%[2]s', 'format' = 'csv');
CREATE TABLE dim_upper (key BIGINT, a VARCHAR, b BIGINT, up AS UPPER(a))
  WITH ('connector' = 'filesystem', 'path' = '%[2]s', 'format' = 'csv');
CREATE TABLE out_picked (id BIGINT, b BIGINT, a VARCHAR) WITH ('connector' = 'collect');
CREATE TABLE out_computed (id BIGINT, up VARCHAR) WITH ('connector' = 'collect');
INSERT INTO out_picked SELECT O.id, D.b, D.a
  FROM orders AS O LEFT JOIN dim FOR SYSTEM_TIME AS OF O.p AS D ON O.k = D.key AND D.b > 6;
INSERT INTO out_computed SELECT O.id, D.up
  FROM orders AS O JOIN dim_upper FOR SYSTEM_TIME AS OF O.p AS D ON O.k = D.key;
`, filepath.Join(dir, "orders"), filepath.Join(dir, "dim"))
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			got, _ := runWith(t, script, eddy.WithParallelism(p))
			if d := diffLines(sorted(got), sorted(want)); d != "" {
				t.Fatal(d)
			}
		})
	}
}
