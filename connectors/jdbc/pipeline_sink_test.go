package jdbc_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/jackc/pgx/v5"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connectors/jdbc"
	"github.com/eddystream/eddy/internal/testservers"
	"github.com/eddystream/eddy/pipeline"
	"github.com/eddystream/eddy/sql/types"
)

// pipelineEvents is a pipeline's stream for the sink tests: a table
// created, filled, altered (a column added, one renamed, one widened),
// updated, altered again (a column dropped); a second table truncated and a
// third dropped.
func pipelineEvents(t *testing.T) []pipeline.Event {
	t.Helper()
	schema := func(version int, fields ...types.Field) *pipeline.Schema {
		return &pipeline.Schema{Columns: types.MustRowType(fields...), PrimaryKey: []string{"id"}, Version: version}
	}
	arena := types.NewArena(0)
	row := func(s *pipeline.Schema, kind changelog.Kind, id pipeline.TableID, vals ...types.Value) pipeline.Event {
		r, err := types.BuildRow(s.Columns, arena, vals...)
		if err != nil {
			t.Fatal(err)
		}
		return pipeline.Event{Kind: pipeline.DataChange, Table: id, Schema: s, Change: changelog.Change[types.Row]{Kind: kind, Row: r}}
	}
	tt, u, w := pipeline.TableID{Schema: "db", Table: "t"}, pipeline.TableID{Schema: "db", Table: "u"}, pipeline.TableID{Schema: "db", Table: "w"}
	id := types.F("id", types.Int().NotNull())
	v1 := schema(1, id, types.F("name", types.String()), types.F("n", types.Int()))
	v2 := schema(2, id, types.F("label", types.String()), types.F("n", types.BigInt()), types.F("note", types.String()))
	v3 := schema(3, id, types.F("label", types.String()), types.F("n", types.BigInt()))
	us := schema(1, id, types.F("x", types.VarChar(10)))
	us2 := schema(2, id, types.F("x", types.VarChar(10)), types.F("y", types.Int()))
	plain := pipeline.TableID{Table: "plain"} // in the database's default schema
	return []pipeline.Event{
		{Kind: pipeline.CreateTable, Table: tt, Schema: v1},
		row(v1, changelog.Insert, tt, int64(1), "a", int64(10)),
		row(v1, changelog.Insert, tt, int64(2), "b", int64(20)),
		row(v1, changelog.Insert, tt, int64(3), "c", int64(30)),
		{Kind: pipeline.AlterTable, Table: tt, Schema: v2, Changes: []pipeline.SchemaChange{
			{Kind: pipeline.RenameColumn, Column: "name", NewName: "label"},
			{Kind: pipeline.AlterColumnType, Column: "n", Type: types.BigInt()},
			{Kind: pipeline.AddColumn, Column: "note", Type: types.String(), Position: 3},
		}},
		row(v2, changelog.UpdateBefore, tt, int64(2), "b", int64(20), nil),
		row(v2, changelog.UpdateAfter, tt, int64(2), "B", int64(2000000000000), "x"),
		row(v2, changelog.Delete, tt, int64(3), "c", int64(30), nil),
		{Kind: pipeline.AlterTable, Table: tt, Schema: v3, Changes: []pipeline.SchemaChange{{Kind: pipeline.DropColumn, Column: "note"}}},
		row(v3, changelog.Insert, tt, int64(4), "d", int64(40)),
		{Kind: pipeline.CreateTable, Table: u, Schema: us},
		row(us, changelog.Insert, u, int64(1), "gone"),
		{Kind: pipeline.TruncateTable, Table: u, Schema: us},
		row(us, changelog.Insert, u, int64(2), "kept"),
		{Kind: pipeline.CreateTable, Table: plain, Schema: us},
		row(us, changelog.Insert, plain, int64(9), "plain"),
		{Kind: pipeline.AlterTable, Table: plain, Schema: us2, Changes: []pipeline.SchemaChange{{Kind: pipeline.AddColumn, Column: "y", Type: types.Int(), Position: 2}}},
		row(us2, changelog.Insert, plain, int64(10), "more", int64(1)),
		{Kind: pipeline.CreateTable, Table: w, Schema: us},
		row(us, changelog.Insert, w, int64(1), "w"),
		{Kind: pipeline.DropTable, Table: w, Schema: us},
	}
}

// runPipelineSink writes events through the pipeline sink of dialect.
func runPipelineSink(t *testing.T, dialect, url, user string, events []pipeline.Event) {
	t.Helper()
	f, err := pipeline.Sinks.Connector(dialect)
	if err != nil {
		t.Fatal(err)
	}
	spec := f.Spec()
	opts, err := spec.Validate(map[string]string{"url": url, "username": user, "password": ""})
	if err != nil {
		t.Fatal(err)
	}
	sink, err := jdbc.NewPipelineSink(dialect, opts)
	if err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	eddy.WriteTo(eddy.FromSlice(env, events, eddy.NoWatermarks[pipeline.Event]()), "pipeline sink", sink)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := env.Execute(ctx, "pipeline sink"); err != nil {
		t.Fatal(err)
	}
}

// TestPipelineSink writes a pipeline's events into PostgreSQL and MariaDB:
// the tables are created, altered, truncated and dropped as the events
// say, and hold the rows.
func TestPipelineSink(t *testing.T) {
	want := map[string][]string{
		"t":       {"1|a|10", "2|B|2000000000000", "4|d|40"},
		"t.cols":  {"id", "label", "n"},
		"u":       {"2|kept"},
		"w.count": {"0"},
		"plain":   {"9|plain|<nil>", "10|more|1"},
	}
	t.Run("postgres", func(t *testing.T) {
		p := testservers.StartPostgres(t)
		conn, err := pgx.Connect(context.Background(), p.DSN("postgres"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		query := func(q string) []string {
			rows, err := conn.Query(context.Background(), q)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			defer rows.Close()
			var out []string
			for rows.Next() {
				vals, err := rows.Values()
				if err != nil {
					t.Fatal(err)
				}
				var s []string
				for _, v := range vals {
					s = append(s, fmt.Sprint(v))
				}
				out = append(out, strings.Join(s, "|"))
			}
			return out
		}
		url := fmt.Sprintf("jdbc:postgresql://%s:%d/postgres?sslmode=disable", p.Host, p.Port)
		for run := 1; run <= 1; run++ {
			runPipelineSink(t, "postgres", url, "postgres", pipelineEvents(t))
			got := map[string][]string{
				"t":       query("SELECT id, label, n FROM db.t ORDER BY id"),
				"t.cols":  query("SELECT column_name FROM information_schema.columns WHERE table_schema = 'db' AND table_name = 't' ORDER BY ordinal_position"),
				"u":       query("SELECT id, x FROM db.u ORDER BY id"),
				"w.count": query("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'db' AND table_name = 'w'"),
				"plain":   query("SELECT id, x, y FROM public.plain ORDER BY id"),
			}
			checkTables(t, run, got, want)
		}
		if got := query("SELECT data_type FROM information_schema.columns WHERE table_schema = 'db' AND table_name = 't' AND column_name = 'n'"); !slices.Equal(got, []string{"bigint"}) {
			t.Errorf("column n is %v, not widened to bigint", got)
		}
	})
	t.Run("mariadb", func(t *testing.T) {
		m := testservers.StartMariaDB(t)
		conn, err := client.Connect(m.Addr(), "root", "", "")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Execute("CREATE DATABASE target"); err != nil {
			t.Fatal(err)
		}
		query := func(q string) []string {
			r, err := conn.Execute(q)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			defer r.Close()
			var out []string
			for i := range r.Values {
				var s []string
				for j := range r.Values[i] {
					switch v := r.Values[i][j].Value().(type) {
					case []byte:
						s = append(s, string(v))
					default:
						s = append(s, fmt.Sprint(v))
					}
				}
				out = append(out, strings.Join(s, "|"))
			}
			return out
		}
		url := fmt.Sprintf("jdbc:mysql://%s:%d/target", m.Host, m.Port)
		for run := 1; run <= 1; run++ {
			runPipelineSink(t, "mysql", url, "root", pipelineEvents(t))
			got := map[string][]string{
				"t":       query("SELECT id, label, n FROM db.t ORDER BY id"),
				"t.cols":  query("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'db' AND TABLE_NAME = 't' ORDER BY ORDINAL_POSITION"),
				"u":       query("SELECT id, x FROM db.u ORDER BY id"),
				"w.count": query("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'db' AND TABLE_NAME = 'w'"),
				"plain":   query("SELECT id, x, y FROM target.plain ORDER BY id"),
			}
			checkTables(t, run, got, want)
		}
		if got := query("SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'db' AND TABLE_NAME = 't' AND COLUMN_NAME = 'n'"); !slices.Equal(got, []string{"bigint"}) {
			t.Errorf("column n is %v, not widened to bigint", got)
		}
	})
}

func checkTables(t *testing.T, run int, got, want map[string][]string) {
	t.Helper()
	for k, w := range want {
		if !slices.Equal(got[k], w) {
			t.Errorf("run %d: %s is %v, want %v", run, k, got[k], w)
		}
	}
}
