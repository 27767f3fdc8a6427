package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestSQLClient drives `eddy sql` through its input and output with the
// scripts of testdata/sql. Directives:
//
//	file name=F        write the input to F in the test's directory
//	sql [f=F] [i=F] [history]
//	                   run `eddy sql` (-f F, -i F, --history-file in the
//	                   test's directory) with the input as its standard
//	                   input; print its output and the error it ends with
//	history            print the history file
//
// $DIR in inputs is the test's directory. Job ids are job1, job2, ... and
// the start times of SHOW JOBS print as <time>.
func TestSQLClient(t *testing.T) {
	defer func(f func() string) { newJobID = f }(newJobID)
	datadriven.Walk(t, "testdata/sql", func(t *testing.T, path string) {
		dir := t.TempDir()
		jobs := 0
		newJobID = func() string { jobs++; return fmt.Sprintf("job%d", jobs) }
		times := regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}`)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			input := strings.ReplaceAll(d.Input, "$DIR", dir)
			switch d.Cmd {
			case "file":
				var name string
				d.ScanArgs(t, "name", &name)
				if err := os.WriteFile(filepath.Join(dir, name), []byte(input+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return ""
			case "history":
				b, err := os.ReadFile(filepath.Join(dir, "history"))
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			case "sql":
				args := []string{"sql"}
				if d.HasArg("f") {
					var f string
					d.ScanArgs(t, "f", &f)
					args = append(args, "-f", filepath.Join(dir, f))
				}
				if d.HasArg("i") {
					var f string
					d.ScanArgs(t, "i", &f)
					args = append(args, "-i", filepath.Join(dir, f))
				}
				if d.HasArg("history") {
					args = append(args, "--history-file", filepath.Join(dir, "history"))
				} else {
					args = append(args, "--history-file", "")
				}
				cmd := newRootCmd()
				cmd.SetArgs(args)
				cmd.SetIn(strings.NewReader(input))
				var out bytes.Buffer
				cmd.SetOut(&out)
				cmd.SetErr(&out)
				err := cmd.Execute()
				if err != nil {
					fmt.Fprintf(&out, "error: %v\n", err)
				}
				return strings.ReplaceAll(times.ReplaceAllString(out.String(), "<time>"), dir, "$DIR")
			}
			d.Fatalf(t, "unknown directive %s", d.Cmd)
			return ""
		})
	})
}
