package eddy_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
)

type reading struct {
	Sensor string  `json:"sensor"`
	Value  float64 `json:"value"`
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestJSONLinesBadLineFailsWithFileAndLine(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.jsonl", "{\"sensor\":\"s1\",\"value\":1}\n\n{\"sensor\":\"s2\",\"value\":oops}\n")
	env := eddy.NewEnvironment()
	eddy.Discard(eddy.ReadJSONLines(env, eddy.FileOptions[reading]{}, filepath.Join(dir, "*.jsonl")))
	err := env.Execute(context.Background(), "bad")
	if err == nil {
		t.Fatal("job with a malformed line succeeded")
	}
	if !strings.Contains(err.Error(), "a.jsonl:3") || !strings.Contains(err.Error(), "DeadLetterBadRecords") {
		t.Fatalf("error does not name file:line and the fix: %v", err)
	}
}

func TestJSONLinesDeadLetters(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.jsonl", "{\"sensor\":\"s1\",\"value\":1}\nnot json\n{\"sensor\":\"s2\",\"value\":2}\n")
	writeFile(t, dir, "b.jsonl", "{\"sensor\":\"s3\",\"value\":3}\r\n{\"sensor\":\"s4\"")
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	src := eddy.ReadJSONLines(env, eddy.FileOptions[reading]{OnBadRecord: eddy.DeadLetterBadRecords}, filepath.Join(dir, "*.jsonl"))
	good := eddy.Collect(src)
	dead := eddy.Collect(eddy.DeadLetters(src))
	if err := env.Execute(context.Background(), "dlq"); err != nil {
		t.Fatal(err)
	}
	var sensors []string
	for _, r := range good.Values() {
		sensors = append(sensors, r.Sensor)
	}
	slices.Sort(sensors)
	if strings.Join(sensors, ",") != "s1,s2,s3" {
		t.Fatalf("good records: %v", sensors)
	}
	d := dead.Values()
	slices.SortFunc(d, func(a, b connector.DeadLetter) int { return strings.Compare(a.Location, b.Location) })
	if len(d) != 2 || !strings.HasSuffix(d[0].Location, "a.jsonl:2") || d[0].Raw != "not json" || !strings.HasSuffix(d[1].Location, "b.jsonl:2") {
		t.Fatalf("dead letters: %+v", d)
	}
	var counted int64
	for _, m := range env.Metrics() {
		counted += m.DeadLetters
	}
	if counted != 2 {
		t.Fatalf("dead letters counted %d, want 2", counted)
	}
}

func TestCSVWithHeader(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "1.csv", "sensor,value\ns1,1.5\n# a \"comment\n\"s,2\",2.5\n")
	writeFile(t, dir, "2.csv", "sensor,value\ns3,x\n")
	env := eddy.NewEnvironment()
	parse := func(f []string) (reading, error) {
		v, err := strconv.ParseFloat(f[1], 64)
		return reading{Sensor: f[0], Value: v}, err
	}
	src := eddy.ReadCSV(env, parse, eddy.CSVOptions[reading]{Header: true, Comment: '#', FileOptions: eddy.FileOptions[reading]{OnBadRecord: eddy.DeadLetterBadRecords}}, filepath.Join(dir, "*.csv"))
	good := eddy.Collect(src)
	dead := eddy.Collect(eddy.DeadLetters(src))
	if err := env.Execute(context.Background(), "csv"); err != nil {
		t.Fatal(err)
	}
	if got := good.Values(); len(got) != 2 || got[1].Sensor != "s,2" || got[1].Value != 2.5 {
		t.Fatalf("records: %+v", got)
	}
	if d := dead.Values(); len(d) != 1 || !strings.HasSuffix(d[0].Location, "2.csv:2") {
		t.Fatalf("dead letters: %+v", d)
	}
}

func TestMissingFileIsAClearError(t *testing.T) {
	env := eddy.NewEnvironment()
	eddy.Discard(eddy.ReadJSONLines(env, eddy.FileOptions[reading]{}, "/nonexistent/*.jsonl"))
	err := env.Execute(context.Background(), "missing")
	if err == nil || !strings.Contains(err.Error(), `no file matches "/nonexistent/*.jsonl"`) {
		t.Fatalf("got %v", err)
	}
}
