package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/eddystream/eddy"
)

// stateFlags are the keyed state flags of `eddy run` and `eddy demo`.
type stateFlags struct {
	backend      string
	dir          string
	memoryBudget int64
}

func (s *stateFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&s.backend, "state", "heap", `keyed state backend: "heap" (in memory), or "pebble" (an embedded LSM on disk, with incremental checkpoints)`)
	f.StringVar(&s.dir, "state-dir", "", "with --state pebble, the directory of the state databases, one per keyed subtask, each removed when it ends (default: eddy-state in the temporary directory)")
	f.Int64Var(&s.memoryBudget, "memory-budget", 0, "with --state pebble, the bytes of block cache and memtables for the process (0: derived from the machine's memory)")
}

// check reports a combination of the state flags that cannot run.
func (s *stateFlags) check(cmd *cobra.Command) error {
	f := cmd.Flags()
	switch s.backend {
	case "heap":
		for _, name := range []string{"state-dir", "memory-budget"} {
			if f.Changed(name) {
				return fmt.Errorf("--%s needs --state pebble", name)
			}
		}
	case "pebble":
		if s.memoryBudget < 0 {
			return fmt.Errorf("--memory-budget must not be negative, got %d", s.memoryBudget)
		}
		if f.Changed("state-dir") && s.dir == "" {
			return errors.New("--state-dir is empty")
		}
	default:
		return fmt.Errorf(`--state %q: the state backends are "heap" and "pebble"`, s.backend)
	}
	return nil
}

// open returns the state backend the flags select. Without --state-dir,
// Pebble keeps its databases under eddy-state in the system's temporary
// directory; each is removed when its subtask ends, and those of a process
// that was killed are removed by the next run.
func (s *stateFlags) open() eddy.StateBackend {
	if s.backend != "pebble" {
		return eddy.HeapState()
	}
	dir := s.dir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "eddy-state")
	}
	return eddy.PebbleState(dir, s.memoryBudget)
}
