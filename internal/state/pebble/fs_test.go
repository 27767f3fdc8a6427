package pebble

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestLocalFSBuffersWrites writes a file through fsys in pieces smaller and
// larger than the write buffer, mixed with positioned writes, reads and
// stats, and checks that every read, stat and the closed file see the bytes
// in the order they were written.
func TestLocalFSBuffersWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	f, err := fsys.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	write := func(p []byte) {
		t.Helper()
		if n, err := f.Write(p); err != nil || n != len(p) {
			t.Fatalf("Write(%d bytes) = %d, %v", len(p), n, err)
		}
		want = append(want, p...)
	}
	piece := func(n int, c byte) []byte { return bytes.Repeat([]byte{c}, n) }
	write(piece(100, 'a'))
	if st, err := f.Stat(); err != nil || st.Size() != int64(len(want)) {
		t.Fatalf("Stat after a buffered write: size %d, %v; want %d", st.Size(), err, len(want))
	}
	write(piece(writeBuffer-50, 'b')) // fills the buffer past its end
	write(piece(3*writeBuffer, 'c'))  // larger than the buffer
	write(piece(10, 'd'))
	got := make([]byte, 10)
	if _, err := f.ReadAt(got, int64(len(want)-10)); err != nil || !bytes.Equal(got, piece(10, 'd')) {
		t.Fatalf("ReadAt of buffered bytes = %q, %v", got, err)
	}
	write(piece(20, 'e'))
	if _, err := f.WriteAt([]byte("XY"), 5); err != nil {
		t.Fatal(err)
	}
	copy(want[5:], "XY")
	write(piece(7, 'f'))
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if disk, err := os.ReadFile(path); err != nil || !bytes.Equal(disk, want) {
		t.Fatalf("after Sync the file holds %d bytes (%v), want %d", len(disk), err, len(want))
	}
	write(piece(30, 'g'))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if disk, err := os.ReadFile(path); err != nil || !bytes.Equal(disk, want) {
		t.Fatalf("after Close the file holds %d bytes (%v), want %d", len(disk), err, len(want))
	}

	// Reopened for reading and writing, the file reads from the start and
	// appends after what it reads.
	f, err = fsys.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 7)
	if _, err := io.ReadFull(f, head); err != nil || string(head) != "aaaaaXY" {
		t.Fatalf("Read = %q, %v", head, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
