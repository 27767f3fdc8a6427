package main

import (
	"fmt"
	"time"

	"github.com/eddystream/eddy/internal/state"
)

// checkParallelism reports a --parallelism out of range: the number of
// subtasks per operator is at least 1 and at most the max parallelism.
func checkParallelism(n int) error {
	if n < 1 || n > state.MaxKeyGroups {
		return fmt.Errorf("--parallelism must be between 1 and %d, got %d", state.MaxKeyGroups, n)
	}
	return nil
}

// checkPositive reports a flag that must be positive and is not.
func checkPositive[N int | int64 | time.Duration](flag string, v N) error {
	if v <= 0 {
		return fmt.Errorf("--%s must be positive, got %v", flag, v)
	}
	return nil
}
