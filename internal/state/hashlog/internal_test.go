package hashlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	wl, err := Load(cp, 0, 2, Options{SegmentSize: minSegmentSize}, false)
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
// directory (a retried checkpoint): the second finds the segment and part
// names taken, and its fallback copy must not truncate the log's own
// segment and part files, which the names in dir are hard links of.
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
		m, err := filepath.Glob(filepath.Join(dir, "vlog-*"))
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
	if !slices.ContainsFunc(slices.Collect(maps.Keys(before)), func(n string) bool { return strings.HasSuffix(n, ".part") }) {
		t.Fatalf("the log's files %v: want a part", before)
	}
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
		if s != nil && s.sealed {
			preadSegment(t, s)
		}
	}
}

// preadSegment makes the sealed segment s read with pread.
func preadSegment(t *testing.T, s *segment) {
	t.Helper()
	if s.data == nil {
		return
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
// writes, vlog-<digits>.seg and vlog-<digits>.<digits>.part; fmt.Sscanf
// skips spaces and ignores what follows the extension.
func TestIsLogFileStrict(t *testing.T) {
	for _, n := range []string{"vlog-000001.seg extra", "vlog- 1.seg", "vlog-1. seg", "vlog-1.seg\n", "vlog-1.seg\tcopy", "vlog-1.idx", "vlog-1.seg/", " vlog-1.seg",
		"vlog-1.0.part extra", "vlog-1. 0.part", "vlog-1.0 .part", "vlog-1.0.part\n", " vlog-1.0.part", "vlog-1.0.part/", "vlog- 1.0.part"} {
		if IsLogFile(n) {
			t.Errorf("IsLogFile(%q) = true", n)
		}
	}
}

// killScenario builds, in a log whose automatic compaction is held off,
// the history of a key that TestKilledKeyStaysDead then checkpoints and
// loads after compacting some of the oldest segments.
type killScenario struct {
	name string
	// build writes the history of key k; fill writes filler entries until
	// the active segment is sealed. It returns whether the kill record of
	// k must still be in the active segment at checkpoint time.
	build func(t *testing.T, l *Log, k []byte, fill func()) (killActive bool)
}

// killSets are the values k is set to in the scenarios, distinct byte
// strings that the test finds in segment files.
var killSets = [][]byte{bytes.Repeat([]byte("v0-first-version."), 12), bytes.Repeat([]byte("v1-second-version."), 12)}

// TestKilledKeyStaysDead sets a key k to v0, fills the segment until it is
// sealed, sets k to v1, fills and seals, and deletes k (the kill record
// sealed or still in the active segment; or k is deleted after a compaction
// moved its record); then compacts the oldest sealed segments, none, some,
// then all of them, checkpoints, and loads the checkpoint read-only and
// writable: k must be absent although older versions of it are still in
// the checkpoint's older segments. The writable log then sets k again,
// deletes it, compacts on, and its checkpoints load with k absent, then with
// its last value.
func TestKilledKeyStaysDead(t *testing.T) {
	scenarios := []killScenario{
		{"kill in the active segment", func(t *testing.T, l *Log, k []byte, fill func()) bool {
			set(t, l, k, killSets[0])
			fill()
			set(t, l, k, killSets[1])
			fill()
			del(t, l, k)
			return true
		}},
		{"kill sealed", func(t *testing.T, l *Log, k []byte, fill func()) bool {
			set(t, l, k, killSets[0])
			fill()
			set(t, l, k, killSets[1])
			fill()
			del(t, l, k)
			fill()
			return false
		}},
		{"kill of a compaction's copy", func(t *testing.T, l *Log, k []byte, fill func()) bool {
			set(t, l, k, killSets[0])
			fill()
			set(t, l, k, killSets[1])
			fill()
			// The oldest segment (v0, garbage) and the next (v1, live)
			// compacted: v1 is copied into the active segment, where the
			// kill names the copy.
			for range 2 {
				if err := l.compact(oldestSealed(l)); err != nil {
					t.Fatal(err)
				}
			}
			del(t, l, k)
			fill()
			return false
		}},
	}
	for _, sc := range scenarios {
		// From none to all of the sealed segments, as many as the first
		// run finds.
		sealed := 0
		for compactN := 0; compactN <= sealed; compactN++ {
			ok := t.Run(fmt.Sprintf("%s/compact=%d", sc.name, compactN), func(t *testing.T) {
				sealed = checkKilledKey(t, sc, compactN)
			})
			if !ok {
				break
			}
		}
	}
}

// set sets k to v in l, failing the test on an error.
func set(t *testing.T, l *Log, k, v []byte) {
	t.Helper()
	if err := l.Set(k, v); err != nil {
		t.Fatal(err)
	}
}

// del deletes k from l, failing the test on an error.
func del(t *testing.T, l *Log, k []byte) {
	t.Helper()
	if err := l.Delete(k); err != nil {
		t.Fatal(err)
	}
}

// oldestSealed returns the sealed segment of l of the lowest sequence
// number, or nil.
func oldestSealed(l *Log) *segment {
	var o *segment
	for _, s := range l.segs {
		if s != nil && s.sealed && (o == nil || s.seq < o.seq) {
			o = s
		}
	}
	return o
}

// checkKilledKey runs the scenario sc, compacts the compactN oldest sealed
// segments and checks the checkpoints and loads. It returns the number of
// sealed segments the scenario left.
func checkKilledKey(t *testing.T, sc killScenario, compactN int) int {
	dir := t.TempDir()
	l, err := Open(dir, 0, 2, Options{SegmentSize: minSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	k := []byte("\x00\x00victim")
	want := map[string][]byte{}
	i := 0
	// Filler of key group 1 over a few keys: mostly garbage, so that
	// compactions copy little and do not seal the active segment.
	fill := func() {
		t.Helper()
		seq := l.active.seq
		for l.active == nil || l.active.seq == seq {
			fk, fv := internalKey(1, i%8), bugValue(i, 1000)
			if err := l.Set(fk, fv); err != nil {
				t.Fatal(err)
			}
			want[string(fk)] = fv
			i++
		}
	}
	l.noGC++ // no automatic compaction: the test chooses which segments go
	killActive := sc.build(t, l, k, fill)
	activeSeq := l.active.seq
	var sealed int
	for _, s := range l.segs {
		if s != nil && s.sealed {
			sealed++
		}
	}
	if compactN > sealed {
		t.Fatalf("the scenario left %d sealed segments, not the %d of its first run", sealed, compactN)
	}
	for range compactN {
		if err := l.compact(oldestSealed(l)); err != nil {
			t.Fatal(err)
		}
	}
	l.noGC--
	if killActive && (l.active == nil || l.active.seq != activeSeq) {
		t.Fatalf("the active segment %d that holds the kill record was sealed before the checkpoint; the test wants it active", activeSeq)
	}
	if v, ok, err := l.Get(k); ok || err != nil {
		t.Fatalf("Get(k) after Delete and %d compactions = %q, %v, %v; want absent", compactN, v, ok, err)
	}
	cp := filepath.Join(t.TempDir(), "cp")
	if err := os.MkdirAll(cp, 0o755); err != nil {
		t.Fatal(err)
	}
	names, err := l.Checkpoint(cp)
	if err != nil {
		t.Fatal(err)
	}
	// The active segment is a part of the checkpoint, which holds the kill
	// record if it is still active.
	if p := partName(l.active.seq, 0); !slices.Contains(names, p) {
		t.Fatalf("checkpoint %q: want the active segment as the part %s", names, p)
	} else if data, err := os.ReadFile(filepath.Join(cp, p)); err != nil {
		t.Fatal(err)
	} else if killActive && !bytes.Contains(data, append([]byte{kindKill, byte(len(k)), killValueLen}, k...)) {
		t.Fatalf("the part %s of the active segment holds no kill record of k", p)
	}
	// Which versions of k the checkpoint still holds.
	var held []int
	for j, v := range killSets {
		for _, n := range names {
			data, err := os.ReadFile(filepath.Join(cp, n))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(data, v) {
				held = append(held, j)
			}
		}
	}
	t.Logf("checkpoint %q holds versions %v of the deleted key", names, held)
	if compactN == 0 && len(held) == 0 {
		t.Fatalf("the checkpoint holds no earlier version of the deleted key: the test needs one")
	}

	check := func(what string, l *Log, want map[string][]byte, k []byte, kv []byte) {
		t.Helper()
		v, ok, err := l.Get(k)
		if err != nil || ok != (kv != nil) || !bytes.Equal(v, kv) {
			t.Fatalf("%s: Get(k) = %.20q, %v, %v; want %.20q, %v", what, v, ok, err, kv, kv != nil)
		}
		n := 0
		if err := l.Scan(nil, func(key, v []byte) bool {
			if w, ok := want[string(key)]; !ok || !bytes.Equal(v, w) {
				t.Errorf("%s: Scan visits %q (%d bytes), want %d bytes (present %v)", what, key, len(v), len(w), ok)
			}
			n++
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if n != len(want) || l.Len() != len(want) {
			t.Fatalf("%s: Scan visited %d keys, Len() = %d; want %d", what, n, l.Len(), len(want))
		}
	}
	check("the log", l, want, k, nil)
	for _, readOnly := range []bool{true, false} {
		for _, kgs := range [][2]int{{0, 2}, {0, 1}} {
			d := cp
			if !readOnly {
				d = filepath.Join(t.TempDir(), "copy")
				if err := os.CopyFS(d, os.DirFS(cp)); err != nil {
					t.Fatal(err)
				}
			}
			ll, err := Load(d, kgs[0], kgs[1], Options{SegmentSize: minSegmentSize}, readOnly)
			if err != nil {
				t.Fatal(err)
			}
			w := map[string][]byte{}
			for key, v := range want {
				if kg := int(binary.BigEndian.Uint16([]byte(key))); kg >= kgs[0] && kg < kgs[1] {
					w[key] = v
				}
			}
			check(fmt.Sprintf("Load(key groups %v, readOnly %v)", kgs, readOnly), ll, w, k, nil)
			if readOnly {
				ll.Close()
				continue
			}
			// The loaded log sets k again and deletes it, with enough
			// writes between for compactions to run; each checkpoint
			// loads with k as it was.
			for step, kv := range [][]byte{killSets[0], nil, killSets[1], nil, []byte("last")} {
				if kv != nil {
					set(t, ll, k, kv)
					w[string(k)] = kv
				} else {
					del(t, ll, k)
					delete(w, string(k))
				}
				for j := range 300 {
					if kgs[1] == 2 {
						fk, fv := internalKey(1, j%8), bugValue(j+step, 1000)
						set(t, ll, fk, fv)
						w[string(fk)] = fv
					} else {
						set(t, ll, internalKey(0, j%8), bugValue(j+step, 1000))
						w[string(internalKey(0, j%8))] = bugValue(j+step, 1000)
					}
				}
				cp2 := filepath.Join(t.TempDir(), "cp2")
				if err := os.MkdirAll(cp2, 0o755); err != nil {
					t.Fatal(err)
				}
				if _, err := ll.Checkpoint(cp2); err != nil {
					t.Fatal(err)
				}
				l2, err := Load(cp2, kgs[0], kgs[1], Options{SegmentSize: minSegmentSize}, true)
				if err != nil {
					t.Fatal(err)
				}
				check(fmt.Sprintf("step %d: Load of a checkpoint of the loaded log", step), l2, w, k, kv)
				l2.Close()
			}
			ll.Close()
		}
	}
	return sealed
}
