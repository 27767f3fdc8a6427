package hashlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// internalKey returns a key of key group kg followed by the bytes of i.
func internalKey(kg int, i int) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, uint16(kg)), uint32(i))
}

func bugValue(i, n int) []byte { return bytes.Repeat([]byte{byte(i), byte(i >> 8), 0x5A}, n/3+1)[:n] }

// TestLoadSubsetThenCompact loads a checkpoint of the key groups [0, 4)
// writable for the key groups [0, 2) (as a restore to fewer key groups
// does), then keeps writing: the compaction of a loaded segment must skip
// the records of the key groups not loaded as garbage.
func TestLoadSubsetThenCompact(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, 0, 4, Options{SegmentSize: minSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Records of the four key groups interleaved in every segment.
	for i := range 2000 {
		if err := l.Set(internalKey(i%4, i), bugValue(i, 200)); err != nil {
			t.Fatal(err)
		}
	}
	cp := filepath.Join(t.TempDir(), "cp")
	if err := os.MkdirAll(cp, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Checkpoint(cp); err != nil {
		t.Fatal(err)
	}
	idx, _, err := FindIndex(cp)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := Load(cp, idx, 0, 2, Options{SegmentSize: minSegmentSize}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer wl.Close()
	want := map[string][]byte{}
	for i := range 2000 {
		if i%4 < 2 {
			want[string(internalKey(i%4, i))] = bugValue(i, 200)
		}
	}
	// Overwrite the loaded keys: their old records become garbage and the
	// loaded segments are compacted.
	for round := range 3 {
		for i := range 2000 {
			if i%4 >= 2 {
				continue
			}
			k, v := internalKey(i%4, i), bugValue(i+round, 200)
			if err := wl.Set(k, v); err != nil {
				t.Fatalf("round %d: Set(%x) on a log loaded for key groups [0,2) of a checkpoint of [0,4): %v", round, k, err)
			}
			want[string(k)] = v
		}
	}
	for k, v := range want {
		got, ok, err := wl.Get([]byte(k))
		if err != nil || !ok || !bytes.Equal(got, v) {
			t.Fatalf("Get(%x) = %d bytes, %v, %v; want %d bytes", k, len(got), ok, err, len(v))
		}
	}
}

// TestCheckpointAgainIntoSameDir checkpoints a log twice into one
// directory (a retried checkpoint): the second finds the segment names
// taken, and its fallback copy must not truncate the log's own segment
// files, which the names in dir are hard links of.
func TestCheckpointAgainIntoSameDir(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, 0, 4, Options{SegmentSize: minSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range 1000 {
		if err := l.Set(internalKey(i%4, i), bugValue(i, 200)); err != nil {
			t.Fatal(err)
		}
	}
	sizes := func() map[string]int64 {
		m, err := filepath.Glob(filepath.Join(dir, "vlog-*.seg"))
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, p := range m {
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			out[filepath.Base(p)] = st.Size()
		}
		return out
	}
	cp := filepath.Join(t.TempDir(), "cp")
	if err := os.MkdirAll(cp, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Checkpoint(cp); err != nil {
		t.Fatal(err)
	}
	before := sizes()
	_, err = l.Checkpoint(cp) // an error is fine; destroying the log is not
	after := sizes()
	for name, n := range before {
		if after[name] != n {
			// Reading the log now would fault on the truncated mapping.
			t.Fatalf("a second Checkpoint into %s (error: %v) changed the log's segment %s from %d to %d bytes", cp, err, name, n, after[name])
		}
	}
}

// preadSegments makes l read its sealed segments with pread, as it does
// where segments are not mapped (mapSegments false, every system but
// Linux).
func preadSegments(t *testing.T, l *Log) {
	t.Helper()
	for _, s := range l.segs {
		if s == nil || !s.sealed || s.data == nil {
			continue
		}
		f, err := os.Open(s.path)
		if err != nil {
			t.Fatal(err)
		}
		if err := unmap(s.data); err != nil {
			t.Fatal(err)
		}
		s.data, s.f = nil, f
	}
}

// preadLog returns a log of 400 keys internalKey(0, i) of 300-byte values, all
// in sealed segments read with pread.
func preadLog(t *testing.T) *Log {
	t.Helper()
	l, err := Open(t.TempDir(), 0, 1, Options{SegmentSize: minSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for i := range 400 {
		if err := l.Set(internalKey(0, i), bugValue(i, 300)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.seal(); err != nil {
		t.Fatal(err)
	}
	preadSegments(t, l)
	return l
}

// TestPreadGetValueKeptAcrossGet: Get's value is valid until the next
// call that changes the log, so a Get of another key leaves it as it was.
func TestPreadGetValueKeptAcrossGet(t *testing.T) {
	l := preadLog(t)
	a, _, err := l.Get(internalKey(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Get(internalKey(0, 2)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, bugValue(1, 300)) {
		t.Fatalf("the value of key 1 from Get changed with a Get of key 2 (segments read with pread)")
	}
}

// TestPreadSetFromGetValue Sets an existing key to the value Get returned
// for another: Set must store that value.
func TestPreadSetFromGetValue(t *testing.T) {
	l := preadLog(t)
	v, _, err := l.Get(internalKey(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Set(internalKey(0, 2), v); err != nil {
		t.Fatal(err)
	}
	got, _, err := l.Get(internalKey(0, 2))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, bugValue(1, 300)) {
		t.Fatalf("Set(key 2, value of key 1 from Get) stored %x..., want %x... (segments read with pread)", got[:6], bugValue(1, 300)[:6])
	}
}

// TestPreadScanGetThenSet: Scan's fn may Get any key and Set the key it is
// given; the key and value it is given must not change with the Get.
func TestPreadScanGetThenSet(t *testing.T) {
	l := preadLog(t)
	var failure string
	err := l.Scan(nil, func(k, v []byte) bool {
		i := int(binary.BigEndian.Uint32(k[2:]))
		if _, _, err := l.Get(internalKey(0, (i+1)%400)); err != nil {
			failure = err.Error()
			return false
		}
		if !bytes.Equal(k, internalKey(0, i)) || !bytes.Equal(v, bugValue(i, 300)) {
			failure = fmt.Sprintf("the key %x given to fn became %x with a Get of another key (segments read with pread)", internalKey(0, i), k)
			return false
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if failure != "" {
		t.Fatal(failure)
	}
}

// TestDamagedKeyReadsAsMissing damages a byte of a key in a sealed
// segment: Get of that key must report the damage (ErrCorrupt), not that
// the key is absent.
func TestDamagedKeyReadsAsMissing(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, 0, 1, Options{SegmentSize: minSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	key := func(i int) []byte { return append(internalKey(0, i), "-key"...) }
	for i := range 400 {
		if err := l.Set(key(i), bugValue(i, 300)); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, segName(1))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	off := bytes.Index(data, key(10))
	if off < 0 {
		t.Fatal("key 10 is not in the first segment")
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The last byte of the key, written in place (the mapping sees it).
	if _, err := f.WriteAt([]byte{data[off+len(key(10))-1] ^ 0xFF}, int64(off+len(key(10))-1)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	v, ok, err := l.Get(key(10))
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Get of a key whose record is damaged = %d bytes, %v, %v; want an error wrapping ErrCorrupt", len(v), ok, err)
	}
}

// TestIsLogFileStrict: IsLogFile must accept only the names the package
// writes, vlog-<digits>.seg and vlog-<digits>.idx; fmt.Sscanf skips spaces
// and ignores what follows the extension.
func TestIsLogFileStrict(t *testing.T) {
	for _, n := range []string{"vlog-000001.seg extra", "vlog- 1.seg", "vlog-1. idx", "vlog-1.seg\n", "vlog-1.seg\tcopy"} {
		if IsLogFile(n) {
			t.Errorf("IsLogFile(%q) = true", n)
		}
	}
}
