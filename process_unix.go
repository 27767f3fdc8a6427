//go:build unix

package eddy

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with the given id runs.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
