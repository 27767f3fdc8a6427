package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestStateFlagErrors checks that `eddy run` and `eddy demo` reject bad
// state flags before running anything, naming the flag.
func TestStateFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown backend", []string{"--state", "rocksdb"}, []string{`--state "rocksdb"`, `"heap"`, `"pebble"`}},
		{"state-dir on heap", []string{"--state-dir", "/tmp/x"}, []string{"--state-dir needs --state pebble"}},
		{"memory-budget on heap", []string{"--state", "heap", "--memory-budget", "1000000"}, []string{"--memory-budget needs --state pebble"}},
		{"negative memory-budget", []string{"--state", "pebble", "--memory-budget", "-1"}, []string{"--memory-budget must not be negative"}},
	} {
		for _, command := range [][]string{{"run", "hot-items"}, {"demo"}} {
			t.Run(command[0]+"/"+tc.name, func(t *testing.T) {
				cmd := newRootCmd()
				cmd.SetArgs(append(append([]string{}, command...), append(tc.args, "--events", "1000")...))
				var out bytes.Buffer
				cmd.SetOut(&out)
				cmd.SetErr(&out)
				err := cmd.Execute()
				if err == nil {
					t.Fatalf("no error; output:\n%s", out.String())
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
			})
		}
	}
}

// TestStatePebbleDemo runs a small demo with keyed state in Pebble under
// --state-dir and checks the subtasks' databases are gone afterwards.
func TestStatePebbleDemo(t *testing.T) {
	dir := t.TempDir()
	cmd := newRootCmd()
	cmd.SetArgs([]string{"demo", "--events", "20000", "--state", "pebble", "--state-dir", dir, "--memory-budget", "16777216"})
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "auctions;") {
		t.Errorf("no results:\n%s", out.String())
	}
	if left, err := os.ReadDir(dir); err != nil || len(left) != 0 {
		t.Errorf("--state-dir after the run: %v %v", left, err)
	}
}
