package sql_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/sql"
)

// referenceScript returns the DDL and the query qN of the Nexmark
// reference's SQL files in dir, with the ${...} variables substituted as
// its runner does, and its blackhole sink replaced by connector.
func referenceScript(t *testing.T, dir, q string, events int, connector string) string {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	ddl := read("ddl_gen.sql")
	if _, err := os.Stat(filepath.Join(dir, "ddl_gen_v2.sql")); err == nil {
		ddl = read("ddl_gen_v2.sql")
	}
	script := ddl + ";\n" + read("ddl_views.sql") + ";\n" + read(q+".sql")
	vars := map[string]string{
		"TPS": "10000000", "EVENTS_NUM": itoa(events), "PERSON_PROPORTION": "1", "AUCTION_PROPORTION": "3",
		"BID_PROPORTION": "46", "NEXMARK_TABLE": "datagen", "KEEP_ALIVE": "false", "STOP_AT": "-1",
		"NEXMARK_DIR": t.TempDir(), "SUBMIT_TIME": "0", "FLINK_HOME": t.TempDir(),
	}
	for k, v := range vars {
		script = strings.ReplaceAll(script, "${"+k+"}", v)
	}
	return strings.ReplaceAll(script, "'connector' = 'blackhole'", "'connector' = '"+connector+"'")
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	if s == "" {
		return "0"
	}
	return s
}

// TestNexmarkReferenceSQL runs the reference's SQL files when
// EDDY_NEXMARK_SQL_DIR names a directory holding them (they are not part
// of eddy): each query must plan and run.
func TestNexmarkReferenceSQL(t *testing.T) {
	dir := os.Getenv("EDDY_NEXMARK_SQL_DIR")
	if dir == "" {
		t.Skip("EDDY_NEXMARK_SQL_DIR is not set")
	}
	for i := 0; i <= 22; i++ {
		q := "q" + itoa(i)
		t.Run(q, func(t *testing.T) {
			s := sql.NewSession()
			if _, err := s.Execute(referenceScript(t, dir, q, 10000, "blackhole")); err != nil {
				t.Fatal(err)
			}
			env := eddy.NewEnvironment(eddy.WithParallelism(2))
			if err := s.Build(env); err != nil {
				t.Fatal(err)
			}
			if err := env.Execute(context.Background(), q); err != nil {
				t.Fatal(err)
			}
		})
	}
}
