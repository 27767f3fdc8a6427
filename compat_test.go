package eddy_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/eddystream/eddy"
)

// The savepoint in testdata/savepoint-v1 was taken by format version 1 of
// the sensor job (at parallelism 2, part-way through), with the output the
// job had committed by then in testdata/savepoint-v1-output. Later versions
// must restore it: this test guards the checkpoint format and the state
// encodings against incompatible changes. EDDY_WRITE_FIXTURE=1 rewrites it.
const fixtureEvents = 60000

func TestRestoresVersion1Savepoint(t *testing.T) {
	fixture := filepath.Join("testdata", "savepoint-v1")
	outFixture := filepath.Join("testdata", "savepoint-v1-output")
	if os.Getenv("EDDY_WRITE_FIXTURE") == "1" {
		writeFixture(t, fixture, outFixture)
	}
	want := failureFree(t, fixtureEvents)
	entries, err := os.ReadDir(fixture)
	if err != nil || len(entries) != 1 {
		t.Fatalf("fixture: %v %v", entries, err)
	}
	out := t.TempDir()
	copyDir(t, outFixture, out)
	env := eddy.NewEnvironment(eddy.WithParallelism(3), eddy.WithRestoreFrom(filepath.Join(fixture, entries[0].Name())))
	sensorJob(env, fixtureEvents, 0, out, nil)
	if err := env.Execute(context.Background(), "compat"); err != nil {
		t.Fatal(err)
	}
	if got := committedLines(t, out); !slices.Equal(got, want) {
		t.Fatalf("restored output differs: %d lines vs %d\n%s", len(got), len(want), diff(got, want))
	}
}

func writeFixture(t *testing.T, fixture, outFixture string) {
	os.RemoveAll(fixture)
	os.RemoveAll(outFixture)
	os.MkdirAll(outFixture, 0o755)
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	sensorJob(env, fixtureEvents, 60000, outFixture, nil)
	done := make(chan error, 1)
	go func() { done <- env.Execute(context.Background(), "fixture") }()
	time.Sleep(400 * time.Millisecond)
	if _, err := env.TriggerSavepoint(context.Background(), fixture, true); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
