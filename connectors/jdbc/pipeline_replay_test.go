package jdbc

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/jackc/pgx/v5"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/testservers"
	"github.com/eddystream/eddy/pipeline"
	"github.com/eddystream/eddy/sql/types"
)

// TestPipelineCommitTwice commits one transaction of the pipeline sink
// twice, as a restore does when it cannot know whether the commit before
// a failure went through: a table created, filled, a column renamed and
// one dropped, more rows. The second commit finds the table in its final
// shape — without the columns the first rows name — and leaves it as the
// first did.
func TestPipelineCommitTwice(t *testing.T) {
	id := pipeline.TableID{Schema: "db", Table: "t"}
	v1 := &pipeline.Schema{Columns: types.MustRowType(types.F("id", types.Int().NotNull()), types.F("name", types.String()), types.F("tmp", types.Int())), PrimaryKey: []string{"id"}, Version: 1}
	v2 := &pipeline.Schema{Columns: types.MustRowType(types.F("id", types.Int().NotNull()), types.F("label", types.String())), PrimaryKey: []string{"id"}, Version: 2}
	arena := types.NewArena(0)
	row := func(s *pipeline.Schema, vals ...types.Value) pipeline.Event {
		r := types.MustBuildRow(s.Columns, arena, vals...)
		return pipeline.Event{Kind: pipeline.DataChange, Table: id, Schema: s, Change: changelog.Change[types.Row]{Kind: changelog.Insert, Row: r}}
	}
	events := []pipeline.Event{
		{Kind: pipeline.CreateTable, Table: id, Schema: v1},
		row(v1, int64(1), "a", int64(7)),
		row(v1, int64(2), "b", int64(8)),
		{Kind: pipeline.AlterTable, Table: id, Schema: v2, Changes: []pipeline.SchemaChange{
			{Kind: pipeline.RenameColumn, Column: "name", NewName: "label"}, {Kind: pipeline.DropColumn, Column: "tmp"}}},
		row(v2, int64(3), "c"),
	}
	want := []string{"1|a", "2|b", "3|c"}
	commitTwice := func(t *testing.T, cfg *config, query func(string) []string) {
		c := newPipelineCommitter(cfg, "test", slog.Default())
		defer c.Close()
		tx, _ := c.Begin()
		for _, e := range events {
			if err := c.Write(&tx, e); err != nil {
				t.Fatal(err)
			}
		}
		for i := 1; i <= 2; i++ {
			if err := c.Commit(tx); err != nil {
				t.Fatalf("commit %d: %v", i, err)
			}
			if got := query("SELECT id, label FROM db.t ORDER BY id"); !slices.Equal(got, want) {
				t.Errorf("after commit %d the table holds %v, want %v", i, got, want)
			}
			if got := query("SELECT count(*) FROM information_schema.columns WHERE table_schema = 'db' AND table_name = 't'"); !slices.Equal(got, []string{"2"}) {
				t.Errorf("after commit %d the table has %v columns, want 2 (id, label)", i, got)
			}
		}
	}
	t.Run("postgres", func(t *testing.T) {
		p := testservers.StartPostgres(t)
		conn, err := pgx.Connect(context.Background(), p.DSN("postgres"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		u, _ := parseURL(fmt.Sprintf("jdbc:postgresql://%s:%d/postgres?sslmode=disable", p.Host, p.Port))
		commitTwice(t, &config{url: u, user: "postgres", connectTimeout: 30 * time.Second}, func(q string) []string {
			rows, err := conn.Query(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var out []string
			for rows.Next() {
				vals, _ := rows.Values()
				var s []string
				for _, v := range vals {
					s = append(s, fmt.Sprint(v))
				}
				out = append(out, strings.Join(s, "|"))
			}
			return out
		})
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
		u, _ := parseURL(fmt.Sprintf("jdbc:mysql://%s:%d/target", m.Host, m.Port))
		commitTwice(t, &config{url: u, user: "root", connectTimeout: 30 * time.Second}, func(q string) []string {
			r, err := conn.Execute(q)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var out []string
			for i := range r.Values {
				var s []string
				for j := range r.Values[i] {
					if b, ok := r.Values[i][j].Value().([]byte); ok {
						s = append(s, string(b))
					} else {
						s = append(s, fmt.Sprint(r.Values[i][j].Value()))
					}
				}
				out = append(out, strings.Join(s, "|"))
			}
			return out
		})
	})
}
