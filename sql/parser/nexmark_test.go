package parser

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// nexmarkVars are the values the Nexmark runner substitutes for the ${...}
// variables of its SQL files (the runner replaces the text as is).
var nexmarkVars = map[string]string{
	"TPS":                "10000000",
	"EVENTS_NUM":         "100000000",
	"PERSON_PROPORTION":  "1",
	"AUCTION_PROPORTION": "3",
	"BID_PROPORTION":     "46",
	"NEXMARK_TABLE":      "datagen",
	"BOOTSTRAP_SERVERS":  "localhost:9092",
	"NEXMARK_DIR":        "/opt/nexmark",
	"SUBMIT_TIME":        "1700000000000",
	"FLINK_HOME":         "/opt/flink",
	"KEEP_ALIVE":         "false",
	"STOP_AT":            "-1",
}

// TestNexmarkSQL parses the SQL files of the Nexmark benchmark (its
// nexmark-flink/src/main/resources/queries directory) when
// EDDY_NEXMARK_SQL_DIR names a directory holding them. Their text is not
// part of eddy, so the test does not run without it.
func TestNexmarkSQL(t *testing.T) {
	dir := os.Getenv("EDDY_NEXMARK_SQL_DIR")
	if dir == "" {
		t.Skip("EDDY_NEXMARK_SQL_DIR is not set")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no .sql files in %s (EDDY_NEXMARK_SQL_DIR)", dir)
	}
	sort.Strings(files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			src := string(b)
			for k, v := range nexmarkVars {
				src = strings.ReplaceAll(src, "${"+k+"}", v)
			}
			stmts, err := Parse(src)
			if err != nil {
				t.Fatalf("%s:\n%v", f, err)
			}
			checkRoundTrip(t, src, stmts)
			kinds := make([]string, len(stmts))
			for i, s := range stmts {
				kinds[i] = strings.TrimPrefix(typeName(s), "*parser.")
			}
			t.Logf("%d statements: %s", len(stmts), strings.Join(kinds, ", "))
		})
	}
}
