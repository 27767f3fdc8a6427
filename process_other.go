//go:build !unix

package eddy

// processAlive reports whether a process with the given id runs; where
// that cannot be told, it says yes, so nothing is removed.
func processAlive(int) bool { return true }
