//go:build !unix

package connectortest

import "time"

// CPUTime returns 0: the platform's CPU time is not read (see the unix
// version).
func CPUTime() time.Duration { return 0 }
