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

// TestLocalFSMapsTables opens table files through fsys and checks that
// ReadAt gives the file's bytes at every offset tried, io.EOF with the bytes
// there are past the end, and that other files and empty tables are read as
// they are.
func TestLocalFSMapsTables(t *testing.T) {
	dir := t.TempDir()
	want := make([]byte, 3*4096+123)
	for i := range want {
		want[i] = byte(i*7 + i>>8)
	}
	for _, name := range []string{"000001.sst", "MANIFEST-000001"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := fsys.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if mapped := isMapped(f); mapped != (mappedTables && filepath.Ext(name) == ".sst") {
			t.Fatalf("%s: mapped %v", name, mapped)
		}
		for _, c := range []struct{ off, n int }{{0, 10}, {4090, 20}, {len(want) - 5, 5}, {8192, 4096}} {
			got := make([]byte, c.n)
			if n, err := f.ReadAt(got, int64(c.off)); err != nil || n != c.n || !bytes.Equal(got, want[c.off:c.off+c.n]) {
				t.Fatalf("%s: ReadAt(%d bytes at %d) = %d, %v", name, c.n, c.off, n, err)
			}
		}
		got := make([]byte, 10)
		if n, err := f.ReadAt(got, int64(len(want)-4)); err != io.EOF || n != 4 || !bytes.Equal(got[:4], want[len(want)-4:]) {
			t.Fatalf("%s: ReadAt across the end = %d, %v; want 4, EOF", name, n, err)
		}
		if n, err := f.ReadAt(got, int64(len(want))); err != io.EOF || n != 0 {
			t.Fatalf("%s: ReadAt at the end = %d, %v; want 0, EOF", name, n, err)
		}
		head := make([]byte, 100)
		if n, err := f.Read(head); err != nil || n != 100 || !bytes.Equal(head, want[:100]) {
			t.Fatalf("%s: Read = %d, %v", name, n, err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	empty := filepath.Join(dir, "000002.sst")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := fsys.Open(empty)
	if err != nil {
		t.Fatal(err)
	}
	if isMapped(f) {
		t.Fatal("an empty table is mapped")
	}
	if n, err := f.ReadAt(make([]byte, 1), 0); err != io.EOF || n != 0 {
		t.Fatalf("ReadAt of an empty table = %d, %v", n, err)
	}
	f.Close()
}
