package main

import (
	"runtime/debug"

	"github.com/eddystream/eddy/internal/sysmem"
)

// jobGCPercent is the garbage collector's GOGC for eddy's commands: a job's
// live heap is often small beside what it allocates per second (records in
// flight, rows in arenas), so the default of 100 runs a collection every few
// megabytes of records. 400 lets the heap grow to five times what is live
// before collecting; the soft memory limit keeps that growth within the
// machine.
const jobGCPercent = 400

// gcSettings returns the garbage collector settings eddy's commands apply
// when the environment leaves them to it: GOGC 400 when GOGC is not set,
// with, unless GOMEMLIMIT is set, a soft memory limit of three quarters of
// physical (0: no limit set). setPercent is false when GOGC is set: the
// runtime has then read both variables itself.
func gcSettings(getenv func(string) string, physical int64) (percent int, limit int64, setPercent bool) {
	if getenv("GOGC") != "" {
		return 0, 0, false
	}
	if getenv("GOMEMLIMIT") == "" && physical > 0 {
		limit = physical / 4 * 3
	}
	return jobGCPercent, limit, true
}

// applyGCDefaults sets the garbage collector as gcSettings says.
func applyGCDefaults(getenv func(string) string) {
	percent, limit, ok := gcSettings(getenv, sysmem.Physical())
	if !ok {
		return
	}
	debug.SetGCPercent(percent)
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
}
