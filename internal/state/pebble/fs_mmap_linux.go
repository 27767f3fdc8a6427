package pebble

import (
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Open opens name for reading. A table file (.sst, written once and never
// changed after) is mapped into memory read-only and its ReadAt copies from
// the mapping: a block read is then a copy from the OS page cache instead of
// a pread system call, which costs 1–3 µs on a VM and is most of the cost of
// a read that misses the block cache. The mapped pages are the page cache's,
// as with pread: the kernel drops and rereads them as it needs, and they are
// counted in the RSS as file pages (RssFile), not in the process's own memory
// (RssAnon) that the memory budget bounds. A file that cannot be mapped, or
// that is opened for sequential reads (compactions, copies), is read with
// system calls. The mapping is advised for random reads, as Pebble advises
// the file. One difference with pread: a device error while reading a page
// ends the process (SIGBUS) instead of failing the read; table files are
// never truncated or rewritten while open.
func (f localFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	file, err := f.FS.Open(name, opts...)
	if err != nil || !strings.HasSuffix(name, ".sst") {
		return file, err
	}
	for _, o := range opts {
		if o == vfs.SequentialReadsOption {
			// A compaction or a copy reading the file from start to end:
			// read calls, with the kernel's readahead.
			return file, nil
		}
	}
	st, err := file.Stat()
	if err != nil || st.Size() <= 0 || st.Size() != int64(int(st.Size())) {
		return file, nil
	}
	fd := file.Fd()
	if fd == vfs.InvalidFd {
		return file, nil
	}
	m, err := syscall.Mmap(int(fd), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return file, nil
	}
	// Point reads: no readahead around a missed page (Pebble opens tables
	// for point reads with fadvise(POSIX_FADV_RANDOM), which a mapping does
	// not follow).
	_ = syscall.Madvise(m, syscall.MADV_RANDOM)
	return &mappedFile{File: file, m: m}, nil
}

// mappedFile is a table file read through a read-only mapping of the whole
// file (see localFS.Open). Read, Stat and Fd are the file's.
type mappedFile struct {
	vfs.File
	m []byte
}

// ReadAt copies len(p) bytes at off from the mapping. As os.File.ReadAt, it
// returns io.EOF with the bytes there are when the read passes the end.
func (f *mappedFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("pebble: read at negative offset %d", off)
	}
	if off >= int64(len(f.m)) {
		return 0, io.EOF
	}
	n := copy(p, f.m[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Prefetch does nothing: reads copy from the page cache through the mapping.
func (f *mappedFile) Prefetch(int64, int64) error { return nil }

// Close unmaps the file and closes it.
func (f *mappedFile) Close() error {
	err := syscall.Munmap(f.m)
	f.m = nil
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	return err
}
