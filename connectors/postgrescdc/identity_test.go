package postgrescdc

import (
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc/cdctest"
)

// bigValue is a value of 32000 characters that the server stores out of
// line (TOAST).
const bigValue = "(SELECT string_agg(md5(g::text), '') FROM generate_series(1, 1000) g)"

// TestToastUnderFullIdentity updates a column of rows whose other column
// is stored out of line: pgoutput marks that column unchanged, and the
// source takes its value from the old row that REPLICA IDENTITY FULL
// gives, in the update's -U and +U.
func TestToastUnderFullIdentity(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	schema, slot := s.newSchema(c)
	run(t, c, "CREATE TABLE "+schema+".accounts (id INT PRIMARY KEY, balance BIGINT, note TEXT)",
		"ALTER TABLE "+schema+".accounts ALTER COLUMN note SET STORAGE EXTERNAL",
		"ALTER TABLE "+schema+".accounts REPLICA IDENTITY FULL",
		"INSERT INTO "+schema+".accounts VALUES (1, 10, "+bigValue+")")
	big := rows(t, c, "SELECT note FROM "+schema+".accounts")[0]
	if len(big) <= 8192 {
		t.Fatalf("the value has %d characters", len(big))
	}
	got := startupRun(t, s.options(schema, "accounts", slot), nil, func() {
		run(t, c, "UPDATE "+schema+".accounts SET balance = 11 WHERE id = 1", "DELETE FROM "+schema+".accounts WHERE id = 1")
	}, 4)
	want := []string{"+I|1|10|" + big, "+U|1|11|" + big, "-D|1|11|" + big, "-U|1|10|" + big}
	if !slices.Equal(got, want) {
		t.Errorf("got %d records %.60q, want %.60q", len(got), got, want)
	}
}

// TestUpsertMode reads a table without REPLICA IDENTITY FULL as an upsert
// stream: a warning at the start, updates as +U of the new row, deletes as
// -D of the key, a key change as -D and +I; and an update that leaves an
// out-of-line value unchanged stops the job, naming the column and the
// fix.
func TestUpsertMode(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	schema, slot := s.newSchema(c)
	run(t, c, "CREATE TABLE "+schema+".accounts (id INT PRIMARY KEY, balance BIGINT, note TEXT)",
		"ALTER TABLE "+schema+".accounts ALTER COLUMN note SET STORAGE EXTERNAL",
		"INSERT INTO "+schema+".accounts VALUES (1, 10, 'a'), (2, 20, 'b')")
	var logs cdctest.SyncBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer slog.SetDefault(prev)
	o := s.options(schema, "accounts", slot, "changelog-mode", "upsert")
	src := openSource(t, o, accountsTable)
	if m := src.(connector.ChangelogSource).ChangelogMode(); m != changelog.Upsert {
		t.Errorf("changelog mode %v, want upsert", m)
	}
	got := startupRun(t, o, nil, func() {
		run(t, c, "UPDATE "+schema+".accounts SET balance = 11 WHERE id = 1", "DELETE FROM "+schema+".accounts WHERE id = 2",
			"UPDATE "+schema+".accounts SET id = 3 WHERE id = 1")
	}, 6)
	cdctest.WantKeys(t, got, "+I|1|10|a", "+I|2|20|b", "+I|3|11|a", "+U|1|11|a", "-D|1|NULL|NULL", "-D|2|NULL|NULL")
	if l := logs.String(); !strings.Contains(l, "REPLICA IDENTITY FULL") || !strings.Contains(l, schema+".accounts") || !strings.Contains(l, "TOAST") {
		t.Errorf("no warning of the table without REPLICA IDENTITY FULL in the log:\n%s", l)
	}

	run(t, c, "UPDATE "+schema+".accounts SET note = "+bigValue)
	src = openSource(t, s.options(schema, "accounts", slot, "changelog-mode", "upsert", "scan.startup.mode", "committed-offset"), accountsTable)
	r := job(src).Start(t)
	time.Sleep(500 * time.Millisecond)
	run(t, c, "UPDATE "+schema+".accounts SET balance = 12")
	err := r.Wait()
	if r.Ctx.Err() != nil {
		t.Fatal("the job did not stop")
	}
	cdctest.WantError(t, err, schema+".accounts", `column "note"`, "TOAST", "REPLICA IDENTITY FULL")
}
