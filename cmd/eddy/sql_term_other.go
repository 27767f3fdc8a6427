//go:build !linux && !darwin

package main

import "errors"

// On other systems the SQL client treats its input and output as files:
// results print as they come (tableau), and a live view ends with Ctrl-C.

func isTTY(fd uintptr) bool { return false }

func ttySize(fd uintptr) (rows, cols int, ok bool) { return 0, 0, false }

func ttyKeysMode(fd uintptr) (restore func(), err error) {
	return nil, errors.New("keys as they are typed are not supported on this system")
}
