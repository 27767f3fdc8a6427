package testservers

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestRemoveStaleTemplates removes the template directories of test
// processes that are gone, and keeps those of live ones.
func TestRemoveStaleTemplates(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	dead := filepath.Join(dir, fmt.Sprintf("%s%d-123", templatePrefix, cmd.Process.Pid))
	live := filepath.Join(dir, fmt.Sprintf("%s%d-456", templatePrefix, os.Getppid()))
	for _, d := range []string{dead, live} {
		if err := os.MkdirAll(filepath.Join(d, "data"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleTemplates(dir)
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the template of a process that is gone is still there (%v)", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the template of a live process was removed: %v", err)
	}
}
