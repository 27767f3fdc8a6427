package hashlog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// bugCheckpoint returns a checkpoint of a log of two sealed segments and an
// active segment in two parts, and the parts' names.
func bugCheckpoint(t *testing.T) (dir string, parts []string) {
	t.Helper()
	l, err := Open(t.TempDir(), 0, 1, Options{SegmentSize: minSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range 250 {
		if err := l.Set(internalKey(0, i), bugValue(i, 600)); err != nil {
			t.Fatal(err)
		}
	}
	dir = filepath.Join(t.TempDir(), "cp")
	for _, d := range []string{dir + "0", dir} {
		if err := l.Set(internalKey(0, 1000), bugValue(1000, 100)); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		names, err := l.Checkpoint(d)
		if err != nil {
			t.Fatal(err)
		}
		parts = slices.DeleteFunc(names, func(n string) bool { return !strings.HasSuffix(n, ".part") })
	}
	if len(parts) != 2 {
		t.Fatalf("parts %q: the test wants 2", parts)
	}
	return dir, parts
}

// TestPartRecordErrorNamesPartAndDir: a damaged record in a part fails
// Load with ErrCorrupt, and the error names the parts and the directory
// (the active segment loaded from parts has no file of its own).
func TestPartRecordErrorNamesPartAndDir(t *testing.T) {
	cp, parts := bugCheckpoint(t)
	for _, c := range []struct {
		what   string
		part   string
		damage func([]byte) []byte
	}{
		{"a flipped byte of a record", parts[0], func(b []byte) []byte { b[len(b)/2] ^= 0xFF; return b }},
		{"a flipped byte of the last part's record", parts[1], func(b []byte) []byte { b[len(b)-1] ^= 0xFF; return b }},
		{"the last part cut within its record", parts[1], func(b []byte) []byte { return b[:len(b)-3] }},
	} {
		dir := filepath.Join(t.TempDir(), "copy")
		if err := os.CopyFS(dir, os.DirFS(cp)); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, c.part)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, c.damage(b), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := Load(dir, 0, 1, Options{SegmentSize: minSegmentSize}, true)
		if err == nil {
			l.Close()
			t.Fatalf("%s: Load succeeded", c.what)
		}
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.part) && !strings.Contains(err.Error(), dir) {
			t.Errorf("%s in %s: Load: %v; want an error wrapping ErrCorrupt naming %s or %s", c.what, c.part, err, c.part, dir)
		}
	}
}

// TestLoadedActiveTakesNewSegmentSize: a log loaded from parts with one
// segment size (a restore loads with the default) and given another by
// SetOptions holds an active buffer of the new size, and seals the loaded
// segment at that size.
func TestLoadedActiveTakesNewSegmentSize(t *testing.T) {
	cp, _ := bugCheckpoint(t)
	l, err := Load(cp, 0, 1, Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.SetOptions(Options{SegmentSize: minSegmentSize})
	if c := cap(l.active.data); c > max(len(l.active.data), l.SegmentSize()) {
		t.Errorf("after SetOptions(SegmentSize %d), the active segment loaded from parts has a buffer of %d bytes (Memory() = %d)", minSegmentSize, c, l.Memory())
	}
	loaded := l.active.seq
	for i := 0; l.active != nil && l.active.seq == loaded; i++ {
		if err := l.Set(internalKey(0, 2000+i), bugValue(i, 600)); err != nil {
			t.Fatal(err)
		}
	}
	if info, err := os.Stat(filepath.Join(cp, segName(loaded))); err != nil {
		t.Fatal(err)
	} else if info.Size() > minSegmentSize {
		t.Errorf("the segment loaded from parts, %s, was sealed at %d bytes, with a segment size of %d", segName(loaded), info.Size(), minSegmentSize)
	}
}

// TestPartsOfSegmentZero: segments are numbered from 1, so parts of a
// segment 0 are not files of the log: Load leaves them alone, whatever else
// the directory holds.
func TestPartsOfSegmentZero(t *testing.T) {
	l, err := Open(t.TempDir(), 0, 1, Options{SegmentSize: minSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Set(internalKey(0, 1), []byte("v")); err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "cp")
	if err := os.MkdirAll(cp, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Checkpoint(cp); err != nil { // vlog-000001.0.part only
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(cp, partName(1, 0)))
	if err != nil {
		t.Fatal(err)
	}
	zero := bytes.Clone(data)
	zero[8] = 0 // the header of segment 0
	for _, c := range []struct {
		what   string
		remove bool
	}{{"the parts of segment 0 alone", true}, {"the parts of segment 0 beside those of segment 1", false}} {
		outcomes := map[string]int{}
		for range 20 {
			dir := filepath.Join(t.TempDir(), "copy")
			if err := os.CopyFS(dir, os.DirFS(cp)); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, partName(0, 0)), zero, 0o644); err != nil {
				t.Fatal(err)
			}
			if c.remove {
				os.Remove(filepath.Join(dir, partName(1, 0)))
			}
			ll, err := Load(dir, 0, 1, Options{SegmentSize: minSegmentSize}, true)
			if err == nil {
				outcomes[fmt.Sprintf("loaded, %d keys", ll.Len())]++
				ll.Close()
			} else {
				outcomes["refused"]++
			}
		}
		// Segments are numbered from 1: vlog-000000.0.part is not a name
		// the log writes, so Load leaves it alone, every time.
		want := "loaded, 1 keys"
		if c.remove {
			want = "loaded, 0 keys"
		}
		if len(outcomes) != 1 || outcomes[want] != 20 {
			t.Errorf("%s: Load outcomes over 20 tries %v; want %q every time", c.what, outcomes, want)
		}
	}
}
