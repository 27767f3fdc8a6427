package reference

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestQuerySubstitutesAndPrefersV2(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"ddl_gen.sql":    "-- v1 ${TPS}",
		"ddl_gen_v2.sql": "CREATE TABLE nexmark WITH ('events.num' = '${EVENTS_NUM}', 'first-event.rate' = '${TPS}');",
		"ddl_views.sql":  "CREATE VIEW bid AS SELECT * FROM ${NEXMARK_TABLE};",
		"q10.sql":        "CREATE TABLE s WITH ('connector' = 'blackhole');\nINSERT INTO '${NEXMARK_DIR}/data/output/${SUBMIT_TIME}/' ${UNKNOWN};",
	})
	submitted := time.Date(2026, 12, 3, 14, 5, 6, 7, time.UTC)
	got, err := Query(dir, "q10", Vars(Workload{Events: 2000, TPS: 100, NexmarkDir: "/n", FlinkHome: "/f", Submitted: submitted}))
	if err != nil {
		t.Fatal(err)
	}
	want := "CREATE TABLE nexmark WITH ('events.num' = '2000', 'first-event.rate' = '100');\n" +
		"CREATE VIEW bid AS SELECT * FROM datagen;\n" +
		"CREATE TABLE s WITH ('connector' = 'blackhole');\nINSERT INTO '/n/data/output/2026-12-03T14:05:06/' ${UNKNOWN};\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	sunk := ReplaceSink(got, "'connector' = 'print'")
	if strings.Contains(sunk, "blackhole") || !strings.Contains(sunk, "WITH ('connector' = 'print')") {
		t.Fatalf("sink not replaced: %s", sunk)
	}
}

func TestQueryFallsBackToV1AndNamesMissingFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{"ddl_gen.sql": "v1 ${TPS};", "ddl_views.sql": "", "q0.sql": "q0"})
	got, err := Query(dir, "q0", Vars(Workload{TPS: 7}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "v1 7;\n") {
		t.Fatalf("got %q, want the v1 DDL first", got)
	}
	_, err = Query(dir, "q1", Vars(Workload{}))
	if err == nil || !strings.Contains(err.Error(), "q1.sql") || !strings.Contains(err.Error(), "nexmark-flink/src/main/resources/queries") {
		t.Fatalf("got %v, want an error naming q1.sql and the folder to copy", err)
	}
}
