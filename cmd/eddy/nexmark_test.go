package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNexmarkCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	o := nexmarkOptions{query: "gen,q0,q5,q10,q13", events: 20_000, tps: 10_000, parallelism: 2, state: "heap", output: "blackhole"}
	if err := runNexmark(context.Background(), &out, &errOut, o); err != nil {
		t.Fatal(err)
	}
	table := out.String()
	for _, q := range []string{"gen", "q0", "q5", "q10", "q13"} {
		if !strings.Contains(table, " "+q+" ") {
			t.Errorf("the table has no row for %s:\n%s", q, table)
		}
	}
	if !strings.Contains(table, "events/s/core") {
		t.Errorf("the table has no per-core column:\n%s", table)
	}
}

func TestNexmarkCommandJSONLines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "q2.jsonl")
	var out, errOut bytes.Buffer
	o := nexmarkOptions{query: "q2", events: 50_000, tps: 10_000, parallelism: 1, state: "heap", output: "jsonl", outputFile: path}
	if err := runNexmark(context.Background(), &out, &errOut, o); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for s := bufio.NewScanner(f); s.Scan(); n++ {
		var row struct{ Auction, Price *int64 }
		if err := json.Unmarshal(s.Bytes(), &row); err != nil || row.Auction == nil || row.Price == nil || *row.Auction%123 != 0 {
			t.Fatalf("line %d: %s (%v)", n+1, s.Text(), err)
		}
	}
	if n == 0 {
		t.Error("no results")
	}
}

func TestNexmarkCommandErrors(t *testing.T) {
	base := nexmarkOptions{query: "q1", events: 10, tps: 10, parallelism: 1, state: "heap", output: "blackhole"}
	for name, change := range map[string]func(*nexmarkOptions){
		"unknown query": func(o *nexmarkOptions) { o.query = "q99" },
		"no events":     func(o *nexmarkOptions) { o.events = 0 },
		"state":         func(o *nexmarkOptions) { o.state = "rocksdb" },
		"jsonl no file": func(o *nexmarkOptions) { o.output = "jsonl" },
		"output":        func(o *nexmarkOptions) { o.output = "kafka" },
	} {
		o := base
		change(&o)
		if err := runNexmark(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}, o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestNexmarkGenerate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cmd := newRootCmd()
	cmd.SetArgs([]string{"nexmark", "generate", "--events", "500", "--tps", "1000", "--out", path})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 500 {
		t.Fatalf("%d lines, want 500", len(lines))
	}
	types := map[int]int{}
	for i, l := range lines {
		var e struct {
			EventType int `json:"event_type"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		types[e.EventType]++
	}
	if types[0] != 10 || types[1] != 30 || types[2] != 460 {
		t.Errorf("events per type %v, want 10 persons, 30 auctions and 460 bids", types)
	}
}

// TestNexmarkCPUProfiles checks that --cpuprofile-dir writes a profile of
// each run that go tool pprof can read (a gzipped protocol buffer).
func TestNexmarkCPUProfiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "profiles")
	var out, errOut bytes.Buffer
	o := nexmarkOptions{query: "q0,q1", events: 20_000, tps: 10_000, parallelism: 1, state: "heap", output: "blackhole", profileDir: dir}
	if err := runNexmark(context.Background(), &out, &errOut, o); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"q0.pprof", "q1.pprof"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s: not a gzipped profile (%d bytes)", name, len(b))
		}
	}
}
