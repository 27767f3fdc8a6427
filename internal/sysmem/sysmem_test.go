package sysmem

import (
	"os"
	"testing"
)

func TestPhysical(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo on this system")
	}
	// Any Linux machine that runs the tests has more than 64 MiB and
	// less than 64 TiB.
	if got := Physical(); got < 64<<20 || got > 64<<40 {
		t.Fatalf("Physical() = %d bytes, want a machine's memory", got)
	}
}
