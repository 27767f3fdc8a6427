package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunSQLWithoutJob runs scripts that plan no job: one of EXPLAIN and
// SHOW prints what it asks for and succeeds, one of DDL alone fails with
// an error that names the script and says what to add.
func TestRunSQLWithoutJob(t *testing.T) {
	dir := t.TempDir()
	ddl := `CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE out (id BIGINT) WITH ('connector' = 'blackhole');
`
	for _, tc := range []struct {
		name, script string
		wantOut      []string
		wantErr      string
	}{
		{"explain", ddl + "EXPLAIN INSERT INTO out SELECT id FROM gen;\nSHOW TABLES;\n", []string{"Sink(table=[out]", "gen"}, ""},
		{"ddl", ddl, nil, "the script has no INSERT INTO or query to run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, tc.name+".sql")
			if err := os.WriteFile(file, []byte(tc.script), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := newRootCmd()
			cmd.SetArgs([]string{"run", file})
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			err := cmd.Execute()
			if tc.wantErr == "" && err != nil {
				t.Fatalf("error %v; output:\n%s", err, out.String())
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), file)) {
				t.Fatalf("error %v, want one naming %s and containing %q", err, file, tc.wantErr)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output does not contain %q:\n%s", w, out.String())
				}
			}
		})
	}
}
