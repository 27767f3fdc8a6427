package pebble

import (
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// localFS is the file system of the backends' DBs: the OS's, with three
// changes that suit a directory that is never reopened after a crash (see
// Durability in the package comment):
//
//   - Sync, SyncData and SyncTo hand the buffered bytes to the OS but do not
//     wait for the device. A checkpoint does not rely on them either:
//     checkpoint storage copies the files it keeps and syncs the copies.
//   - Writes are buffered in chunks of writeBuffer bytes: Pebble writes a
//     table block by block, which would otherwise be a system call per 4 KiB
//     (a system call costs 1–3 µs on a VM).
//   - On Linux, table files are read through a read-only memory map (see
//     Open in fs_mmap_linux.go).
//
// It does not wrap the file system with Pebble's disk-health checks (a
// goroutine and a timer per operation), which Pebble adds only when
// Options.FS is nil.
type localFS struct {
	vfs.FS
}

// writeBuffer is the size of the write buffer of every writable file.
const writeBuffer = 256 << 10

var writeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, writeBuffer); return &b }}

var fsys vfs.FS = localFS{vfs.Default}

func (f localFS) wrapWritable(file vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &writableFile{File: file}, nil
}

// Create creates name for writing, buffered.
func (f localFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	return f.wrapWritable(f.FS.Create(name, category))
}

// ReuseForWrite renames oldname to newname and opens it for writing,
// buffered.
func (f localFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	return f.wrapWritable(f.FS.ReuseForWrite(oldname, newname, category))
}

// OpenReadWrite opens name for reading and writing, buffered.
func (f localFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return f.wrapWritable(f.FS.OpenReadWrite(name, category, opts...))
}

// OpenDir opens a directory, whose Sync does nothing.
func (f localFS) OpenDir(name string) (vfs.File, error) {
	return f.wrapWritable(f.FS.OpenDir(name))
}

// Unwrap returns the OS file system.
func (f localFS) Unwrap() vfs.FS { return f.FS }

// writableFile buffers the writes to a file (see localFS). Pebble writes a
// file from one goroutine at a time (vfs.File), so the buffer needs no lock.
type writableFile struct {
	vfs.File
	buf *[]byte // nil until the first write and after a flush of a full one
}

func (w *writableFile) flush() error {
	if w.buf == nil || len(*w.buf) == 0 {
		return nil
	}
	b := *w.buf
	*w.buf = b[:0]
	_, err := w.File.Write(b)
	return err
}

// Write appends p to the buffer, writing the buffer out when it is full.
func (w *writableFile) Write(p []byte) (int, error) {
	if w.buf == nil {
		w.buf = writeBuffers.Get().(*[]byte)
	}
	if len(*w.buf)+len(p) > cap(*w.buf) {
		if err := w.flush(); err != nil {
			return 0, err
		}
		if len(p) >= cap(*w.buf) {
			return w.File.Write(p)
		}
	}
	*w.buf = append(*w.buf, p...)
	return len(p), nil
}

// WriteAt writes out the buffer, then p at off.
func (w *writableFile) WriteAt(p []byte, off int64) (int, error) {
	if err := w.flush(); err != nil {
		return 0, err
	}
	return w.File.WriteAt(p, off)
}

// ReadAt writes out the buffer, then reads.
func (w *writableFile) ReadAt(p []byte, off int64) (int, error) {
	if err := w.flush(); err != nil {
		return 0, err
	}
	return w.File.ReadAt(p, off)
}

// Read writes out the buffer, then reads.
func (w *writableFile) Read(p []byte) (int, error) {
	if err := w.flush(); err != nil {
		return 0, err
	}
	return w.File.Read(p)
}

// Stat writes out the buffer, so that the size is right, then stats.
func (w *writableFile) Stat() (vfs.FileInfo, error) {
	if err := w.flush(); err != nil {
		return nil, err
	}
	return w.File.Stat()
}

// Sync writes out the buffer; it does not wait for the device.
func (w *writableFile) Sync() error { return w.flush() }

// SyncData writes out the buffer; it does not wait for the device.
func (w *writableFile) SyncData() error { return w.flush() }

// SyncTo writes out the buffer; it does not wait for the device.
func (w *writableFile) SyncTo(int64) (bool, error) { return false, w.flush() }

// Close writes out the buffer and closes the file.
func (w *writableFile) Close() error {
	err := w.flush()
	if w.buf != nil {
		writeBuffers.Put(w.buf)
		w.buf = nil
	}
	if cerr := w.File.Close(); err == nil {
		err = cerr
	}
	return err
}
