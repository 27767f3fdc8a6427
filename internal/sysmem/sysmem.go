// Package sysmem reads the memory the process may use: the machine's
// physical memory, or its cgroup's limit when that is lower.
package sysmem

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// Physical returns the memory this process may use: MemTotal of
// /proc/meminfo, or the cgroup (v2, then v1) memory limit if lower. It
// returns 0 if neither can be read.
func Physical() int64 {
	var total int64
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				fields := strings.Fields(rest)
				if len(fields) > 0 {
					if kb, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
						total = kb << 10
					}
				}
				break
			}
		}
		f.Close()
	}
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(p); err == nil {
			// "max" (v2) and huge values (v1) mean no limit.
			if lim, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64); err == nil && lim > 0 && (total == 0 || lim < total) {
				total = lim
			}
			break
		}
	}
	return total
}
