package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestParallelismFlagErrors checks that every command refuses a
// parallelism out of range before running anything, naming the flag and
// the range, instead of running at parallelism 1.
func TestParallelismFlagErrors(t *testing.T) {
	commands := [][]string{{"run", "hot-items"}, {"run", "nexmark-q0"}, {"demo"}, {"nexmark", "--query", "q0"}}
	for _, p := range []string{"0", "-3", "40000"} {
		for _, command := range commands {
			t.Run(strings.Join(command, " ")+"/"+p, func(t *testing.T) {
				cmd := newRootCmd()
				cmd.SetArgs(append(append([]string{}, command...), "--parallelism", p, "--events", "1000"))
				var out bytes.Buffer
				cmd.SetOut(&out)
				cmd.SetErr(&out)
				err := cmd.Execute()
				if err == nil {
					t.Fatalf("no error; output:\n%s", out.String())
				}
				want := "--parallelism must be between 1 and 32768, got " + p
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
				if out.Len() != 0 {
					t.Errorf("the command ran:\n%s", out.String())
				}
			})
		}
	}
}

// TestPositiveFlagErrors checks the flags that must be positive.
func TestPositiveFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "hot-items", "--events", "0"}, "--events must be positive, got 0"},
		{[]string{"run", "nexmark-q1", "--tps", "-5"}, "--tps must be positive, got -5"},
		{[]string{"run", "hot-items", "--checkpoint-interval", "0s"}, "--checkpoint-interval must be positive, got 0s"},
		{[]string{"demo", "--top", "0"}, "--top must be positive, got 0"},
		{[]string{"demo", "--checkpoint-interval", "-1s"}, "--checkpoint-interval must be positive, got -1s"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := newRootCmd()
			cmd.SetArgs(tc.args)
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			err := cmd.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestSavepointFlagErrors checks that the savepoint directory is chosen
// when the job starts, not by `eddy savepoint`.
func TestSavepointFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"savepoint", "--dir", "/tmp/x"}, "--dir is no longer accepted"},
		{[]string{"demo", "--rest-address", "none", "--savepoint-dir", "/tmp/x"}, "--savepoint-dir needs --rest-address"},
		{[]string{"run", "hot-items", "--rest-address", "", "--savepoint-dir", "/tmp/x"}, "--savepoint-dir needs --rest-address"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := newRootCmd()
			cmd.SetArgs(tc.args)
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			err := cmd.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
