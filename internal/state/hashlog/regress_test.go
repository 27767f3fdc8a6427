package hashlog

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// loadPread does what Load does (read-only) for a checkpoint of sealed
// segments only, but reads every segment with pread, as Load does where
// segments are not mapped (every system but Linux, or where a mapping
// fails).
func loadPread(t *testing.T, dir string, kgStart, kgEnd int) (*Log, error) {
	t.Helper()
	l, err := Open(dir, kgStart, kgEnd, Options{SegmentSize: minSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	l.readOnly = true
	t.Cleanup(func() { l.Close() })
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for _, e := range ents {
		if seq, _, ok := parseName(e.Name()); ok {
			seqs = append(seqs, seq)
		} else if _, _, ok := parsePart(e.Name()); ok {
			t.Fatalf("loadPread reads sealed segments only, and %s holds the part %s", dir, e.Name())
		}
	}
	slices.Sort(seqs)
	bySeq := map[uint64]uint16{}
	for _, seq := range seqs {
		idx, err := l.allocIdx()
		if err != nil {
			t.Fatal(err)
		}
		s, err := openSegment(filepath.Join(dir, segName(seq)), seq, idx)
		if err != nil {
			return nil, err
		}
		preadSegment(t, s)
		l.segs[idx] = s
		bySeq[seq] = idx
		l.nextSeq = seq + 1
		if err := l.replay(s, bySeq); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// TestReplayPread: (*Log).replay (checkpoint.go) parses each record into
// l.scratch when the segment is read with pread (s.data == nil: every
// system but Linux, where mapSegments is false), and keeps rec and k, which
// alias l.scratch, across l.find, whose reads of the index's records
// (l.raw, segment.parse) write into the same buffer. After find, k and rec
// hold bytes of another record: the key comparison fails when the earlier
// record's header has another length (a second entry for the key), and
// rec[4] and the kill value are those of the record find read (a kill
// taken for a set record: the deleted key stays, and the kill record
// becomes an entry of its own). Fix: in replay, clone rec when s.data ==
// nil (as compact does) before calling find.
func TestReplayPread(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, 0, 1, Options{SegmentSize: minSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dead := append(internalKey(0, 1), "-dead"...)
	twice := append(internalKey(0, 2), "-twice"...)
	if err := l.Set(dead, bytes.Repeat([]byte{'d'}, 300)); err != nil {
		t.Fatal(err)
	}
	if err := l.Delete(dead); err != nil {
		t.Fatal(err)
	}
	if err := l.Set(twice, bytes.Repeat([]byte{'a'}, 100)); err != nil { // 1-byte value length
		t.Fatal(err)
	}
	if err := l.Set(twice, bytes.Repeat([]byte{'b'}, 300)); err != nil { // 2-byte value length
		t.Fatal(err)
	}
	// Sealed, so that the checkpoint holds a segment file, which
	// loadPread reads with pread (parts are read into the active segment).
	if err := l.seal(); err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "cp")
	if err := os.MkdirAll(cp, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Checkpoint(cp); err != nil {
		t.Fatal(err)
	}
	// Mapped (Linux): as written.
	mapped, err := Load(cp, 0, 1, Options{SegmentSize: minSegmentSize}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer mapped.Close()
	if _, ok, _ := mapped.Get(dead); ok || mapped.Len() != 1 {
		t.Fatalf("mapped Load: Get(dead) ok=%v, Len()=%d; want absent, 1", ok, mapped.Len())
	}
	pl, err := loadPread(t, cp, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, ok, err := pl.Get(dead)
	var keys []string
	pl.Scan(nil, func(k, v []byte) bool { keys = append(keys, fmt.Sprintf("%s(%d bytes)", k[6:], len(v))); return true })
	if ok || err != nil || pl.Len() != 1 {
		t.Fatalf("Load with pread: Get(deleted key) = %v, %v; Len() = %d, keys %q; want the deleted key absent and one key", ok, err, pl.Len(), keys)
	}
}

// TestSetOptionsGrowWithActiveSegment: after SetOptions with a larger
// SegmentSize while an active segment exists, (*Log).append and appendRaw
// (log.go) seal the active segment only when it exceeds the new size, past
// the capacity newActive made its buffer with (the old size): append's
// s.data[:off+4] panics when the buffer is within 4 bytes of its capacity,
// and otherwise the buffer is reallocated larger, which Memory never counts
// (seal then subtracts cap(s.data), more than newActive added). Fix: seal
// when the record does not fit in cap(l.active.data) too, e.g. limit =
// min(cap(l.active.data), max(l.segSize, segHeader+size)), or seal the
// active segment in SetOptions.
func TestSetOptionsGrowWithActiveSegment(t *testing.T) {
	for _, fill := range []int{minSegmentSize - 2, minSegmentSize - 1000} {
		t.Run(fmt.Sprint("fill=", fill), func(t *testing.T) {
			var mem int64
			l, err := Open(t.TempDir(), 0, 1, Options{SegmentSize: minSegmentSize, OnMemory: func(d int64) { mem += d }})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			// One record that fills the active segment to fill bytes.
			k := internalKey(0, 0)
			vlen := fill - segHeader - 5 - 1 - 3 - len(k)
			if err := l.Set(k, make([]byte, vlen)); err != nil {
				t.Fatal(err)
			}
			if got := len(l.active.data); got != fill {
				t.Fatalf("active segment holds %d bytes, want %d", got, fill)
			}
			l.SetOptions(Options{SegmentSize: 4 * minSegmentSize, OnMemory: func(d int64) { mem += d }})
			mem = l.Memory()
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("Set after SetOptions grew the segment size panicked: %v", r)
					}
				}()
				for i := 1; i < 400; i++ {
					if err := l.Set(internalKey(0, i), make([]byte, 1000)); err != nil {
						t.Fatal(err)
					}
				}
			}()
			if mem != l.Memory() || mem < int64(len(l.active.data)) {
				t.Fatalf("Memory() = %d, OnMemory deltas %d, active segment %d bytes: Memory lost the growth of the active buffer", l.Memory(), mem, len(l.active.data))
			}
		})
	}
}
