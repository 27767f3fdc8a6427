package main

import (
	"strings"
	"testing"
)

// TestCheckpointSettings checks the options of the checkpoint settings and
// the errors of bad values, which name the setting.
func TestCheckpointSettings(t *testing.T) {
	opts, err := checkpointSettings(map[string]string{"execution.checkpointing.interval": "2 s", "execution.checkpointing.min-pause": "500 ms"}, true)
	if err != nil || len(opts) != 2 {
		t.Fatalf("got %d options, %v; want 2", len(opts), err)
	}
	if opts, err := checkpointSettings(map[string]string{"execution.checkpointing.interval": "2 s"}, false); err != nil || len(opts) != 0 {
		t.Fatalf("an interval given by a flag: got %d options, %v", len(opts), err)
	}
	for key, v := range map[string]string{"execution.checkpointing.interval": "0 s", "execution.checkpointing.min-pause": "soon"} {
		_, err := checkpointSettings(map[string]string{key: v}, true)
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("SET '%s' = '%s': got %v, want an error naming the key", key, v, err)
		}
	}
}
