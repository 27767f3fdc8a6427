package jdbc

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/testservers"
	"github.com/eddystream/eddy/pipeline"
	"github.com/eddystream/eddy/sql/types"
)

// TestPipelineKeyUpdate: an update that changes a row's primary key (-U
// under the old key, +U under the new) leaves the row under its new key
// only; an update of a table without a key is refused, as a delete is.
func TestPipelineKeyUpdate(t *testing.T) {
	id := pipeline.TableID{Schema: "db", Table: "k"}
	s := &pipeline.Schema{Columns: types.MustRowType(types.F("id", types.Int().NotNull()), types.F("name", types.String())), PrimaryKey: []string{"id"}, Version: 1}
	arena := types.NewArena(0)
	change := func(s *pipeline.Schema, kind changelog.Kind, vals ...types.Value) pipeline.Event {
		return pipeline.Event{Kind: pipeline.DataChange, Table: id, Schema: s, Change: changelog.Change[types.Row]{Kind: kind, Row: types.MustBuildRow(s.Columns, arena, vals...)}}
	}

	keyless := &pipeline.Schema{Columns: s.Columns, Version: 1}
	c := newPipelineCommitter(&config{}, "test", slog.Default())
	tx, _ := c.Begin()
	if err := c.Write(&tx, change(keyless, changelog.UpdateBefore, int64(1), "a")); err == nil || !strings.Contains(err.Error(), "has no primary key, and an update of it cannot be applied") {
		t.Errorf("an update of a table without a key: got %v", err)
	}

	p := testservers.StartPostgres(t)
	conn, err := pgx.Connect(context.Background(), p.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	u, _ := parseURL(fmt.Sprintf("jdbc:postgresql://%s:%d/postgres?sslmode=disable", p.Host, p.Port))
	c = newPipelineCommitter(&config{url: u, user: "postgres", connectTimeout: 30 * time.Second}, "test", slog.Default())
	defer c.Close()
	for _, events := range [][]pipeline.Event{
		{{Kind: pipeline.CreateTable, Table: id, Schema: s}, change(s, changelog.Insert, int64(1), "a"), change(s, changelog.Insert, int64(2), "b")},
		// In one transaction with the insert of key 3: 3 becomes 4, then 4 becomes 3 again.
		{change(s, changelog.UpdateBefore, int64(1), "a"), change(s, changelog.UpdateAfter, int64(5), "a"),
			change(s, changelog.Insert, int64(3), "c"),
			change(s, changelog.UpdateBefore, int64(3), "c"), change(s, changelog.UpdateAfter, int64(4), "c"),
			change(s, changelog.UpdateBefore, int64(4), "c"), change(s, changelog.UpdateAfter, int64(3), "d"),
			change(s, changelog.UpdateBefore, int64(2), "b"), change(s, changelog.UpdateAfter, int64(2), "e")},
	} {
		tx, _ := c.Begin()
		for _, e := range events {
			if err := c.Write(&tx, e); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Commit(tx); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := conn.Query(context.Background(), "SELECT id || '|' || name FROM db.k ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"2|e", "3|d", "5|a"}; !slices.Equal(got, want) {
		t.Errorf("the table holds %v, want %v", got, want)
	}
}
