// Package testutil holds helpers shared by the tests of several packages.
package testutil

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// CommittedLines returns the lines of the committed part files that an
// exactly-once file sink wrote in dir, sorted; hidden (uncommitted) files
// are not read.
func CommittedLines(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
	}
	slices.Sort(lines)
	return lines
}
