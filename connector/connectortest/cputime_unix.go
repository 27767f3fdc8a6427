//go:build unix

package connectortest

import (
	"syscall"
	"time"
)

// CPUTime returns the CPU time, user and system, the process has used so
// far over all its threads (0 if the platform does not say).
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
