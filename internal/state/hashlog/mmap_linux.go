package hashlog

import (
	"os"
	"syscall"
)

// mapSegments: on Linux sealed segments are read through read-only
// mappings: a record read is a copy-free access to the page cache. The
// mapped pages count in the RSS as file pages, which the kernel drops as it
// needs. A device error while reading a mapped page ends the process
// (SIGBUS) instead of failing the read; segment files are never truncated
// or rewritten while mapped.
const mapSegments = true

// mapFile maps the n bytes of f read-only, or returns ok=false.
func mapFile(f *os.File, n int) ([]byte, bool) {
	// The file was just written (sealed, compacted into, or fetched from
	// checkpoint storage), so its pages are in the page cache: map them all
	// now (MAP_POPULATE) rather than take a fault at the first read of each.
	m, err := syscall.Mmap(int(f.Fd()), 0, n, syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return nil, false
	}
	// Point reads: no readahead around a page the kernel dropped.
	_ = syscall.Madvise(m, syscall.MADV_RANDOM)
	return m, true
}

func unmap(m []byte) error { return syscall.Munmap(m) }
