package sql_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql"
)

// upsertsFactory is the connector 'upserts': a sink that applies upserts
// by its table's primary key, recording the changes it receives.
type upsertsFactory struct{ c *collectSink }

func (f upsertsFactory) Spec() connector.Spec {
	return connector.Spec{Name: "upserts", Kind: connector.SinkKind, Description: "test upsert sink"}
}

func (f upsertsFactory) NewSink(ctx connector.Context) (any, error) {
	return upsertSink{eddySink{c: f.c, rt: ctx.Table.Schema}}, nil
}

type upsertSink struct{ eddySink }

func (upsertSink) ChangelogMode() changelog.Mode { return changelog.Upsert }

// upsertPlan plans script, whose INSERTs write to 'upserts' tables, and
// returns the job's plan and the changes the sink received running it.
func upsertPlan(t *testing.T, script string) (string, []string) {
	t.Helper()
	c := &collectSink{}
	reg := registry(c)
	reg.Register(upsertsFactory{c})
	s := sql.NewSession(sql.WithConnectors(reg))
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	plan, err := env.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Execute(context.Background(), "sql"); err != nil {
		t.Fatal(err)
	}
	return plan, c.lines
}

const upsertCounts = `
INSERT INTO out
SELECT k, COUNT(*) FROM (SELECT CAST(k AS STRING) AS k FROM (VALUES ('a'), ('b'), ('a'), ('c'), ('a')) AS t(k)) GROUP BY k;
`

func TestSinkUpsertMaterialize(t *testing.T) {
	byK := "CREATE TABLE out (k STRING, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'upserts');"
	byN := "CREATE TABLE out (k STRING, n BIGINT, PRIMARY KEY (n) NOT ENFORCED) WITH ('connector' = 'upserts');"
	// ints groups by a key column of type from and writes it into the
	// sink's key of type to; nullable makes the key column nullable.
	ints := func(from, to string, nullable bool) string {
		k := "k"
		if nullable {
			k = "CASE WHEN k > 0 THEN k END"
		}
		return "CREATE TABLE out (k " + to + ", n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'upserts');" +
			"INSERT INTO out SELECT k, COUNT(*) FROM (SELECT CAST(" + k + " AS " + from + ") AS k FROM (VALUES (1), (2), (1)) AS t(k)) GROUP BY k;"
	}
	for _, tc := range []struct {
		name, script string
		materializes bool
	}{
		// The key column is cast to the sink's type: a cast that keeps
		// distinct values distinct keeps the key.
		{"key cast to NOT NULL", ints("INT", "INT", true), false},
		{"key widened", ints("SMALLINT", "BIGINT", false), false},
		{"key narrowed", ints("BIGINT", "INT", false), true},
		{"auto, keyed by the sink key", byK, false},
		{"auto, keyed otherwise", byN, true},
		{"none", "SET 'table.exec.sink.upsert-materialize' = 'NONE';" + byN, false},
		{"force", "SET 'table.exec.sink.upsert-materialize' = 'force';" + byK, true},
		{"force with a state TTL", "SET 'table.exec.sink.upsert-materialize' = 'FORCE'; SET 'table.exec.state.ttl' = '1 h';" + byK, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := tc.script
			if !strings.Contains(script, "INSERT") {
				script += upsertCounts
			}
			plan, lines := upsertPlan(t, script)
			if got := strings.Contains(plan, "UpsertMaterialize"); got != tc.materializes {
				t.Errorf("materializer in the plan: %v, want %v; plan:\n%s", got, tc.materializes, plan)
			}
			if len(lines) == 0 {
				t.Error("the sink received nothing")
			}
			// EXPLAIN says so on the sink, as Flink's does.
			c := &collectSink{}
			reg := registry(c)
			reg.Register(upsertsFactory{c})
			rs, err := sql.NewSession(sql.WithConnectors(reg)).Execute(strings.Replace(script, "INSERT", "EXPLAIN INSERT", 1))
			if err != nil {
				t.Fatal(err)
			}
			explain := rs[len(rs)-1].Text
			if got := strings.Contains(explain, "upsertMaterialize=[true]"); got != tc.materializes {
				t.Errorf("EXPLAIN shows upsertMaterialize=[true]: %v, want %v:\n%s", got, tc.materializes, explain)
			}
		})
	}
	err := planError("SET 'table.exec.sink.upsert-materialize' = 'ALWAYS'; CREATE TABLE out (k STRING, n BIGINT) WITH ('connector' = 'collect');" + upsertCounts)
	if err != nil {
		t.Fatalf("a sink without a primary key does not read the setting: %v", err)
	}
}

func TestSinkUpsertMaterializeSettingError(t *testing.T) {
	c := &collectSink{}
	reg := registry(c)
	reg.Register(upsertsFactory{c})
	s := sql.NewSession(sql.WithConnectors(reg))
	_, err := s.Execute("SET 'table.exec.sink.upsert-materialize' = 'ALWAYS'; CREATE TABLE out (k STRING, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'upserts');" + upsertCounts)
	if err == nil || !strings.Contains(err.Error(), "'table.exec.sink.upsert-materialize' = 'ALWAYS'") || !strings.Contains(err.Error(), "AUTO") {
		t.Fatalf("err = %v, want the setting named with its values", err)
	}
}

// upsertSourcePlan runs script over the upsert table U (rows of id and v,
// keyed by id, whose deletion carries its key alone) and returns what the
// 'upserts' sink received and the error of planning or running it.
func upsertSourcePlan(t *testing.T, script string) ([]string, error) {
	t.Helper()
	c := &collectSink{}
	rows := newRowsFactory()
	rows.tables["U"] = rowsTable{lines: []string{"+I|1|a", "+I|2|b", "+U|2|c", "-D|1|null"}, mode: changelog.Upsert}
	reg := registry(c)
	reg.Register(upsertsFactory{c})
	reg.Register(rows)
	s := sql.NewSession(sql.WithConnectors(reg))
	if _, err := s.Execute("CREATE TABLE U (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'rows', 'id' = 'U');" + script); err != nil {
		return nil, err
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	err := env.Execute(context.Background(), "sql")
	return c.lines, err
}

// An upsert stream is written under its own key whatever the setting says,
// its deletions (which may carry the key alone) unchecked by the NOT NULL
// enforcer; keyed otherwise than the sink, it is refused when planned.
func TestSinkUpsertStream(t *testing.T) {
	for _, set := range []string{"", "SET 'table.exec.sink.upsert-materialize' = 'FORCE';"} {
		got, err := upsertSourcePlan(t, set+"CREATE TABLE out (id BIGINT, v STRING NOT NULL, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upserts'); INSERT INTO out SELECT id, v FROM U;")
		if err != nil {
			t.Fatalf("%q: %v", set, err)
		}
		slices.Sort(got)
		if want := []string{"+I[1, a]", "+I[2, b]", "+U[2, c]", "-D[1, null]"}; !slices.Equal(got, want) {
			t.Errorf("%q: got %v, want %v", set, got, want)
		}
	}
	_, err := upsertSourcePlan(t, "CREATE TABLE out (v STRING, id BIGINT, PRIMARY KEY (v) NOT ENFORCED) WITH ('connector' = 'upserts'); INSERT INTO out SELECT v, id FROM U;")
	if err == nil || !strings.Contains(err.Error(), "upsert stream") || !strings.Contains(err.Error(), "primary key (v)") {
		t.Fatalf("err = %v, want the upsert stream keyed otherwise refused", err)
	}
}
