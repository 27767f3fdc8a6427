package hashlog_test

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/eddystream/eddy/internal/state/hashlog"
)

// newDir returns a new, empty directory for a checkpoint.
func newDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "checkpoint")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// listDir returns the size of every file in dir by name.
func listDir(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]int64, len(ents))
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = info.Size()
	}
	return out
}

// dirState returns the size and a digest of the bytes of every file in dir,
// by name.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, size := range listDir(t, dir) {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = fmt.Sprintf("%d bytes, sha256 %x", size, sha256.Sum256(data))
	}
	return out
}

// sameState checks that dir holds the files of before, with the same bytes.
func sameState(t *testing.T, what, dir string, before map[string]string) {
	t.Helper()
	if after := dirState(t, dir); !maps.Equal(before, after) {
		t.Fatalf("%s changed %s: files before %v, after %v", what, dir, before, after)
	}
}

// sameFile checks that the files at a and b hold the same bytes.
func sameFile(t *testing.T, a, b string) {
	t.Helper()
	da, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(da, db) {
		t.Fatalf("%s (%d bytes) and %s (%d bytes) differ", a, len(da), b, len(db))
	}
}

// copyDir copies the files of dir (not links: the copies share nothing with
// the originals) into a new directory and returns it.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	to := newDir(t)
	for name := range listDir(t, dir) {
		in, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(to, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// loadLog loads the checkpoint in dir for the key groups [kgStart, kgEnd),
// closed when the test ends.
func loadLog(t *testing.T, dir string, kgStart, kgEnd int, readOnly bool, mc *memCounter) *hashlog.Log {
	t.Helper()
	l, err := hashlog.Load(dir, kgStart, kgEnd, testOptions(mc), readOnly)
	if err != nil {
		t.Fatalf("Load(%s, %d, %d, readOnly %v): %v", dir, kgStart, kgEnd, readOnly, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// checkpoint checkpoints l into a new directory, checks the names it returns
// against the directory (sorted, log files only, the parts those of one
// segment, newer than every sealed one, contiguous from offset 0), and
// returns the directory and the names.
func checkpoint(t *testing.T, l *hashlog.Log) (string, []string) {
	t.Helper()
	dir := newDir(t)
	names, err := l.Checkpoint(dir)
	if err != nil {
		t.Fatalf("Checkpoint(%s): %v", dir, err)
	}
	if !slices.IsSorted(names) {
		t.Fatalf("Checkpoint returned names %q, not sorted", names)
	}
	files := listDir(t, dir)
	if got := slices.Sorted(maps.Keys(files)); !slices.Equal(got, names) {
		t.Fatalf("Checkpoint returned names %q, the directory holds %q", names, got)
	}
	for _, n := range names {
		if !hashlog.IsLogFile(n) {
			t.Fatalf("IsLogFile(%q) = false for a file of a checkpoint", n)
		}
		segSeq(t, n)
	}
	checkParts(t, dir, names, files)
	return dir, names
}

// checkParts checks the parts among the names of the checkpoint in dir
// (files holds the sizes of its files): all of one segment, newer than every
// sealed segment of the checkpoint, contiguous from offset 0, none empty.
func checkParts(t *testing.T, dir string, names []string, files map[string]int64) {
	t.Helper()
	_, hiSeg := seqRange(t, sealedNames(names))
	parts := partNames(t, names)
	end := 0
	for i, n := range parts {
		seq, from, _ := logFile(t, n)
		if first, _, _ := logFile(t, parts[0]); seq != first || seq <= hiSeg {
			t.Fatalf("checkpoint %s holds parts %q and segments up to %d: want the parts of one segment, newer than the sealed ones", dir, parts, hiSeg)
		}
		if from != end || files[n] == 0 {
			t.Fatalf("checkpoint %s: part %d of %q, %s (%d bytes), does not follow the parts before it, which end at %d", dir, i, parts, n, files[n], end)
		}
		end += int(files[n])
	}
}

// logFile returns the sequence number of the name of a file of a log or a
// checkpoint, and for a part (vlog-<seq>.<from>.part, not a segment,
// vlog-<seq>.seg) the offset it starts at.
func logFile(t *testing.T, name string) (seq uint64, from int, part bool) {
	t.Helper()
	rest, ok := strings.CutPrefix(name, "vlog-")
	digits, off := "", ""
	switch {
	case !ok:
	case strings.HasSuffix(rest, ".seg"):
		digits = strings.TrimSuffix(rest, ".seg")
	case strings.HasSuffix(rest, ".part"):
		digits, off, ok = strings.Cut(strings.TrimSuffix(rest, ".part"), ".")
		part = true
	default:
		ok = false
	}
	seq, err := strconv.ParseUint(digits, 10, 64)
	if !ok || err != nil || strings.ContainsAny(digits, "+-") {
		t.Fatalf("%s is not the name of a segment or a part", name)
	}
	if part {
		f, err := strconv.Atoi(off)
		if err != nil || f < 0 || strings.ContainsAny(off, "+-") {
			t.Fatalf("%s is not the name of a part", name)
		}
		from = f
	}
	return seq, from, part
}

// isPart reports whether name is the name of a part.
func isPart(name string) bool { return strings.HasSuffix(name, ".part") }

// segSeq returns the sequence number of a segment or part file name.
func segSeq(t *testing.T, name string) uint64 {
	t.Helper()
	seq, _, _ := logFile(t, name)
	return seq
}

// sealedNames returns the names of sealed segments among names.
func sealedNames(names []string) []string {
	return slices.DeleteFunc(slices.Clone(names), isPart)
}

// partNames returns the names of parts among names, by offset.
func partNames(t *testing.T, names []string) []string {
	t.Helper()
	parts := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !isPart(n) })
	slices.SortFunc(parts, func(a, b string) int {
		sa, fa, _ := logFile(t, a)
		sb, fb, _ := logFile(t, b)
		if sa != sb {
			return cmp.Compare(sa, sb)
		}
		return cmp.Compare(fa, fb)
	})
	return parts
}

// seqRange returns the lowest and highest sequence numbers of the segment
// and part names, 0, 0 if there are none.
func seqRange(t *testing.T, names []string) (lo, hi uint64) {
	t.Helper()
	for i, n := range names {
		s := segSeq(t, n)
		if i == 0 || s < lo {
			lo = s
		}
		hi = max(hi, s)
	}
	return lo, hi
}

// loadedActive returns the size of the buffer that Load allocates for the
// active segment of a log loaded from the checkpoint files names with the
// default options, as a restore loads it before SetOptions: the default
// segment size if the checkpoint holds parts, which SetOptions leaves as it
// is until the segment is sealed.
func loadedActive(names []string) int {
	if slices.ContainsFunc(names, isPart) {
		return hashlog.DefaultSegmentSize
	}
	return 0
}

// newerThanLoaded reports whether name, a file of a log loaded from the
// checkpoint files loaded, is one of them or one the log may have written
// since: a segment or part above every loaded one, the segment whose parts
// were loaded (sealed since), or a later part of it.
func newerThanLoaded(t *testing.T, loaded []string, name string) bool {
	t.Helper()
	if slices.Contains(loaded, name) {
		return true
	}
	_, hi := seqRange(t, loaded)
	seq, from, part := logFile(t, name)
	if parts := partNames(t, loaded); len(parts) > 0 && seq == hi {
		_, last, _ := logFile(t, parts[len(parts)-1])
		return !part || from > last
	}
	return seq > hi
}

// subset returns the entries of m of the key groups [kgStart, kgEnd).
func subset(m model, kgStart, kgEnd int) model {
	out := model{}
	for k, v := range m {
		if kg := int(k[0])<<8 | int(k[1]); kg >= kgStart && kg < kgEnd {
			out[k] = v
		}
	}
	return out
}

// checkOutside checks that l refuses the keys of m outside [kgStart,
// kgEnd).
func checkOutside(t *testing.T, l *hashlog.Log, m model, kgStart, kgEnd int) {
	t.Helper()
	for k := range m {
		if kg := int(k[0])<<8 | int(k[1]); kg < kgStart || kg >= kgEnd {
			if v, ok, err := l.Get([]byte(k)); err == nil {
				t.Fatalf("Get(%x) of a key group not loaded = %d bytes, %v; want an error", k, len(v), ok)
			}
		}
	}
}

// checkAbsent checks that l has none of the keys of the key groups [kgStart,
// kgEnd) in keys that m does not hold (keys written once and deleted since).
func checkAbsent(t *testing.T, l *hashlog.Log, m model, keys map[string]bool, kgStart, kgEnd int) {
	t.Helper()
	for k := range keys {
		if _, ok := m[k]; ok {
			continue
		}
		if kg := int(k[0])<<8 | int(k[1]); kg < kgStart || kg >= kgEnd {
			continue
		}
		if v, ok, err := l.Get([]byte(k)); ok || err != nil {
			t.Fatalf("Get(%x) of a deleted key = %d bytes, %v, %v; want absent", k, len(v), ok, err)
		}
	}
}

// sameDir checks that dir holds the files of before, of the same sizes.
func sameDir(t *testing.T, what, dir string, before map[string]int64) {
	t.Helper()
	if after := listDir(t, dir); !maps.Equal(before, after) {
		t.Fatalf("%s changed %s: files before %v, after %v", what, dir, before, after)
	}
}

// segRecord is a record of a segment file, as the tests read it.
type segRecord struct {
	off, size int // offset in the segment and size
	pos       int // offset in the file (a part starts at its offset)
	hdr       int // checksum, kind and the two lengths
	kind      byte
	key       []byte
	value     []byte
}

// The record kinds (the byte after the checksum) and the segment header.
const (
	kindSet       = 0
	kindKill      = 1
	segHeaderSize = 16
	segMagic      = "EDDYVLG1"
)

// castagnoli is the table of the records' checksums (CRC-32C).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// readRecords returns the records of the segment or part file at path,
// checking the segment header (of a segment, and of the part that starts at
// offset 0), that the records fill the file and that their checksums match.
// Offsets are those in the segment.
func readRecords(t *testing.T, path string) []segRecord {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seq, from, _ := logFile(t, filepath.Base(path))
	start := 0
	if from == 0 {
		if len(data) < segHeaderSize || string(data[:8]) != segMagic || binary.LittleEndian.Uint64(data[8:]) != seq {
			t.Fatalf("%s: bad segment header %x", path, data[:min(len(data), segHeaderSize)])
		}
		start = segHeaderSize
	}
	var out []segRecord
	for off := start; off < len(data); {
		b := data[off:]
		kl, n1 := binary.Uvarint(b[5:])
		vl, n2 := binary.Uvarint(b[5+n1:])
		hdr := 5 + n1 + n2
		size := hdr + int(kl) + int(vl)
		if n1 <= 0 || n2 <= 0 || size > len(b) || b[4] > kindKill {
			t.Fatalf("%s: bad record at offset %d", path, off)
		}
		if crc32.Checksum(b[4:size], castagnoli) != binary.LittleEndian.Uint32(b) {
			t.Fatalf("%s: checksum mismatch at offset %d", path, off)
		}
		out = append(out, segRecord{off: from + off, pos: off, size: size, hdr: hdr, kind: b[4], key: b[hdr : hdr+int(kl)], value: b[hdr+int(kl) : size]})
		off += size
	}
	return out
}

// TestRecordFormat checks the records a Set and a Delete write: a set
// record of the key and value, and a kill record of the key whose value is
// the sequence number (8 bytes LE) and offset (4 bytes LE) of the set
// record, in another segment, and in another part of the active segment
// (offsets in the segment; a part starts at the offset its name gives).
func TestRecordFormat(t *testing.T) {
	l := openLog(t, t.TempDir(), testKGStart, testKGEnd, nil)
	k := kgKey(testKGStart, 'k')
	if err := l.Set(k, []byte("value")); err != nil {
		t.Fatal(err)
	}
	// A second segment between the set and the kill.
	for i := range 100 {
		if err := l.Set(kgKey(testKGStart+1, byte(i)), make([]byte, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Delete(k); err != nil {
		t.Fatal(err)
	}
	dir, names := checkpoint(t, l)
	if len(names) < 2 {
		t.Fatalf("checkpoint %q: want 2 segments", names)
	}
	var setSeq uint64
	setOff, kills := -1, 0
	for _, n := range names {
		for _, r := range readRecords(t, filepath.Join(dir, n)) {
			if !bytes.Equal(r.key, k) {
				continue
			}
			switch r.kind {
			case kindSet:
				if setOff >= 0 || string(r.value) != "value" {
					t.Fatalf("%s: set record of %x at %d with value %q; want one, of value %q", n, k, r.off, r.value, "value")
				}
				setSeq, setOff = segSeq(t, n), r.off
			case kindKill:
				kills++
				if setOff < 0 || len(r.value) != 12 || binary.LittleEndian.Uint64(r.value) != setSeq || int(binary.LittleEndian.Uint32(r.value[8:])) != setOff {
					t.Fatalf("%s: kill record of %x has value %x; want the set record's sequence %d and offset %d", n, k, r.value, setSeq, setOff)
				}
				if segSeq(t, n) == setSeq {
					t.Fatalf("the kill record is in the set record's segment %s; the test wants it in a later one", n)
				}
			}
		}
	}
	if setOff < 0 || kills != 1 {
		t.Fatalf("found the set record at %d and %d kill records of %x; want one of each", setOff, kills, k)
	}

	// A set record in a part and the kill record that ends it in a later
	// part of the same segment: the kill names the set record's offset in
	// the segment, not in its part.
	k2 := kgKey(testKGStart, 'k', '2')
	if err := l.Set(k2, []byte("in a part")); err != nil {
		t.Fatal(err)
	}
	_, names1 := checkpoint(t, l)
	if err := l.Delete(k2); err != nil {
		t.Fatal(err)
	}
	dir, names = checkpoint(t, l)
	parts := partNames(t, names)
	if len(parts) < 2 || !slices.Contains(names1, parts[len(parts)-2]) {
		t.Fatalf("checkpoints %q, then %q: want the active segment in two parts, the first in both", names1, names)
	}
	var set, kill *segRecord
	for _, n := range parts {
		recs := readRecords(t, filepath.Join(dir, n))
		for i, r := range recs {
			if bytes.Equal(r.key, k2) && r.kind == kindSet {
				set = &recs[i]
			}
			if bytes.Equal(r.key, k2) && r.kind == kindKill {
				kill = &recs[i]
				if n != parts[len(parts)-1] || r.pos != 0 {
					t.Fatalf("the kill record of %x is at %d in %s, want it first in the last part", k2, r.pos, n)
				}
			}
		}
	}
	seq := segSeq(t, parts[0])
	switch {
	case set == nil || kill == nil:
		t.Fatalf("parts %q: set record of %x %v, kill record %v; want both", parts, k2, set, kill)
	case string(set.value) != "in a part":
		t.Fatalf("the set record of %x holds %q", k2, set.value)
	case len(kill.value) != 12 || binary.LittleEndian.Uint64(kill.value) != seq || int(binary.LittleEndian.Uint32(kill.value[8:])) != set.off:
		t.Fatalf("the kill record of %x at %d has value %x; want segment %d and offset %d", k2, kill.off, kill.value, seq, set.off)
	}
	if _, from, _ := logFile(t, parts[len(parts)-1]); from != kill.off {
		t.Fatalf("the last part %s starts at %d, its first record at segment offset %d", parts[len(parts)-1], from, kill.off)
	}
}

// TestCheckpointAndLoad checkpoints a log mid-way, keeps writing until its
// compactions remove segment files the checkpoint holds, and loads the
// checkpoint read-only (all key groups, and subsets) and writable, checking
// that Load changes no file, that a writable log's compactions then remove
// the segments it does not need, that it names new segments above the
// checkpoint's, and that it can be used, checkpointed and loaded again.
func TestCheckpointAndLoad(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, testKGStart, testKGEnd, nil)
	m := model{}

	// Segments that hold key group 254 only (distinct keys, not written
	// again), then writes and deletes of the other key groups.
	w := newWorkload(11, testKGStart, testKGEnd)
	w.bigValues = false
	for i := range 1200 {
		k, v := kgKey(testKGStart, 0xEE, byte(i>>8), byte(i)), w.value()
		if err := l.Set(k, v); err != nil {
			t.Fatal(err)
		}
		m[string(k)] = v
	}
	w1 := newWorkload(10, testKGStart+1, testKGEnd)
	for range 3000 {
		k := w1.key()
		if w1.r.IntN(4) == 0 {
			if err := l.Delete(k); err != nil {
				t.Fatal(err)
			}
			delete(m, string(k))
			continue
		}
		v := w1.value()
		if err := l.Set(k, v); err != nil {
			t.Fatal(err)
		}
		m[string(k)] = v
	}
	w.bigValues = true

	cp1, names1 := checkpoint(t, l)
	m1 := cloneModel(m)
	state1 := dirState(t, cp1)
	checkLog(t, l, m)
	// The segments of the checkpoint that hold records of key group 254
	// only.
	var kg254 []string
	for _, name := range sealedNames(names1) {
		only := true
		for _, r := range readRecords(t, filepath.Join(cp1, name)) {
			only = only && int(binary.BigEndian.Uint16(r.key)) == testKGStart
		}
		if only {
			kg254 = append(kg254, name)
		}
	}
	if len(kg254) == 0 {
		t.Fatalf("no segment of the checkpoint %q holds key group %d only: the test needs some", names1, testKGStart)
	}

	// Write on until compaction has removed from dir segments that the
	// checkpoint holds.
	removed := func(dir string, names []string) int {
		n := 0
		now := listDir(t, dir)
		for _, name := range names {
			if _, ok := now[name]; !ok {
				n++
			}
		}
		return n
	}
	for i := 0; removed(dir, names1) < 3; i++ {
		if i == 50 {
			t.Fatalf("after 10000 more operations, compaction removed only %d of the checkpoint's segments from the log's directory", removed(dir, names1))
		}
		for range 200 {
			w.step(t, l, m)
		}
	}
	checkLog(t, l, m)
	sameState(t, "writing on in the log after its checkpoint", cp1, state1)

	// Read-only loads, of every key group and of subsets, leave the
	// directory as it was.
	for _, r := range [][2]int{{testKGStart, testKGEnd}, {256, 259}, {testKGStart + 1, testKGEnd}, {testKGStart, testKGStart + 1}, {0, 1 << 16}, {100, 200}} {
		ro := loadLog(t, cp1, r[0], r[1], true, nil)
		sub := subset(m1, r[0], r[1])
		checkLog(t, ro, sub)
		checkOutside(t, ro, m1, r[0], r[1])
		if len(sub) > 0 && ro.Memory() <= 0 {
			t.Fatalf("read-only log of %d entries: Memory() = %d", len(sub), ro.Memory())
		}
		for k := range sub {
			if err := ro.Set([]byte(k), []byte("x")); err == nil {
				t.Fatalf("Set(%x) on a read-only log succeeded", k)
			}
			if err := ro.Delete([]byte(k)); err == nil {
				t.Fatalf("Delete(%x) on a read-only log succeeded", k)
			}
			break
		}
		if err := ro.DeletePrefix(nil); err == nil {
			t.Fatal("DeletePrefix on a read-only log succeeded")
		}
		if _, err := ro.Checkpoint(newDir(t)); err == nil {
			t.Fatal("Checkpoint of a read-only log succeeded")
		}
		checkLog(t, ro, sub)
		sameState(t, fmt.Sprintf("read-only Load of key groups %v", r), cp1, state1)
		if err := ro.Close(); err != nil {
			t.Fatal(err)
		}
		sameState(t, fmt.Sprintf("Close of a read-only log of key groups %v", r), cp1, state1)
	}

	// A writable load of a subset leaves its directory as it was; its
	// compactions then remove the segments of key group 254 only, which it
	// does not need, and the others it has compacted.
	cpSub := copyDir(t, cp1)
	subState := dirState(t, cpSub)
	subKGs := [2]int{testKGStart + 1, testKGEnd}
	sub := loadLog(t, cpSub, subKGs[0], subKGs[1], false, nil)
	mSub := subset(m1, subKGs[0], subKGs[1])
	checkLog(t, sub, mSub)
	checkOutside(t, sub, m1, subKGs[0], subKGs[1])
	sameState(t, "a writable Load of a subset", cpSub, subState)
	wSub := newWorkload(13, subKGs[0], subKGs[1])
	for i := 0; removed(cpSub, kg254) < len(kg254); i++ {
		if i == 100 {
			t.Fatalf("after 20000 operations, the log loaded without key group %d keeps %d of its segments %q", testKGStart, len(kg254)-removed(cpSub, kg254), kg254)
		}
		for range 200 {
			wSub.step(t, sub, mSub)
		}
	}
	checkLog(t, sub, mSub)
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}

	// A writable load of every key group, with the options a restore
	// uses (the default ones, then SetOptions), used further.
	wl, err := hashlog.Load(cp1, testKGStart, testKGEnd, hashlog.Options{}, false)
	if err != nil {
		t.Fatalf("Load(%s): %v", cp1, err)
	}
	t.Cleanup(func() { wl.Close() })
	sameState(t, "a writable Load", cp1, state1)
	var mc memCounter
	wl.SetOptions(testOptions(&mc))
	checkLog(t, wl, m1)
	checkMemory(t, wl, &mc, len(m1), max(w.maxValue, loadedActive(names1)))
	m2 := cloneModel(m1)
	w2 := newWorkload(12, testKGStart, testKGEnd)
	peak := len(m2)
	for i := range 6000 {
		w2.step(t, wl, m2)
		peak = max(peak, len(m2))
		if i%1000 == 999 {
			checkLog(t, wl, m2)
			k := w2.key()
			if err := wl.Set(k, []byte("v")); err != nil {
				t.Fatal(err)
			}
			m2[string(k)] = []byte("v")
			checkDisk(t, cp1, m2)
			checkMemory(t, wl, &mc, peak, max(w.maxValue, w2.maxValue, loadedActive(names1)))
		}
	}
	// New segments are named above the checkpoint's (or continue the
	// segment whose parts it loaded), and the loaded segments it
	// compacted are gone.
	for name := range listDir(t, cp1) {
		if !newerThanLoaded(t, names1, name) {
			t.Fatalf("the loaded log wrote %s, not above the segments of the checkpoint it was loaded from, %q", name, names1)
		}
	}
	if removed(cp1, names1) == 0 {
		t.Fatalf("after 6000 operations, the writable log loaded from %s still holds every segment of the checkpoint", cp1)
	}
	cp2, _ := checkpoint(t, wl)
	m2cp := cloneModel(m2)
	for range 2000 {
		w2.step(t, wl, m2)
	}
	checkLog(t, wl, m2)
	ro2 := loadLog(t, cp2, testKGStart, testKGEnd, true, nil)
	checkLog(t, ro2, m2cp)

	// The original log was not disturbed by any of it.
	checkLog(t, l, m)
}

// TestSuccessiveCheckpoints takes several checkpoints of a log into fresh
// directories, between random operations, and checks that each loads as the
// log was when it was taken, even after later compactions; that a
// checkpoint right after another holds the same files; that a part is left
// out only with its whole segment; and that a segment or part in two
// checkpoints has the same bytes in both.
func TestSuccessiveCheckpoints(t *testing.T) {
	l := openLog(t, t.TempDir(), testKGStart, testKGEnd, nil)
	w := newWorkload(20, testKGStart, testKGEnd)
	m := model{}
	var dirs []string
	var snaps []model
	var prev []string
	for i := range 6 {
		n := 1500
		if i == 3 {
			n = 0 // a checkpoint right after another
		}
		for range n {
			w.step(t, l, m)
		}
		d, names := checkpoint(t, l)
		dirs = append(dirs, d)
		snaps = append(snaps, cloneModel(m))
		if i > 0 {
			added := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(prev, n) })
			switch {
			case n == 0 && !slices.Equal(names, prev):
				t.Fatalf("checkpoint %d right after the previous one holds %q, the previous one %q", i, names, prev)
			case n > 0 && len(added) == 0:
				t.Fatalf("checkpoint %d after 1500 operations holds %q, no file the previous one %q does not", i, names, prev)
			}
			// A part of the previous checkpoint left out is one of a
			// segment sealed since: this one holds no part of it.
			for _, p := range partNames(t, prev) {
				if !slices.Contains(names, p) && slices.ContainsFunc(partNames(t, names), func(n string) bool { return segSeq(t, n) == segSeq(t, p) }) {
					t.Fatalf("checkpoint %d holds parts %q of the segment of the previous checkpoint's part %s, but not that part", i, partNames(t, names), p)
				}
			}
		}
		prev = names
	}
	for range 3000 {
		w.step(t, l, m)
	}
	for i, d := range dirs {
		ro := loadLog(t, d, testKGStart, testKGEnd, true, nil)
		checkLog(t, ro, snaps[i])
		if err := ro.Close(); err != nil {
			t.Fatal(err)
		}
	}
	shared := 0
	for i := 1; i < len(dirs); i++ {
		for name := range listDir(t, dirs[i]) {
			prev, err := os.ReadFile(filepath.Join(dirs[i-1], name))
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			cur, err := os.ReadFile(filepath.Join(dirs[i], name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(prev, cur) {
				t.Fatalf("%s differs between checkpoints %d and %d", name, i-1, i)
			}
			shared++
		}
	}
	if shared == 0 {
		t.Fatal("no segment is shared by two successive checkpoints: the test needs some")
	}
	// Each checkpoint also loads writable, and the loaded logs work.
	for i, d := range dirs {
		wl := loadLog(t, d, testKGStart, testKGEnd, false, nil)
		mi := cloneModel(snaps[i])
		wi := newWorkload(uint64(30+i), testKGStart, testKGEnd)
		for range 500 {
			wi.step(t, wl, mi)
		}
		checkLog(t, wl, mi)
		if err := wl.Close(); err != nil {
			t.Fatal(err)
		}
	}
	checkLog(t, l, m)
}

// TestManyCheckpointsSmallChanges takes 200 checkpoints of a log of many
// sealed segments, each after a few Sets and Deletes, into fresh
// directories, as incremental checkpoints do, and checks that the files of
// each checkpoint that the one before did not hold (what an incremental
// checkpoint uploads) are the bytes appended since: a new part, and a
// segment file when one is sealed, in all at most 3 times the bytes of the
// records written and a few segments; and that every checkpoint loads as
// the log was.
func TestManyCheckpointsSmallChanges(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, testKGStart, testKGEnd, nil)
	w := newWorkload(80, testKGStart, testKGEnd)
	w.bigValues = false
	m := model{}
	// Sealed segments of distinct keys.
	var keys []string
	for i := 0; ; i++ {
		if files, _ := segFiles(t, dir); files >= 12 {
			break
		}
		k, v := kgKey(testKGStart+i%(testKGEnd-testKGStart), 0xF0, byte(i>>8), byte(i)), bytes.Repeat([]byte{byte(i)}, 1000+w.r.IntN(2000))
		if err := l.Set(k, v); err != nil {
			t.Fatal(err)
		}
		m[string(k)] = v
		keys = append(keys, string(k))
	}
	first, prev := checkpoint(t, l)
	prevSizes := listDir(t, first)
	var written, added int64
	sealed, compacted := 0, 0
	type taken struct {
		dir string
		m   model
	}
	var cps []taken
	for round := range 200 {
		for range 1 + w.r.IntN(5) {
			switch x := w.r.IntN(4); {
			case x == 0: // a Delete of a key present
				k := keys[w.r.IntN(len(keys))]
				if _, ok := m[k]; !ok {
					continue
				}
				if err := l.Delete([]byte(k)); err != nil {
					t.Fatal(err)
				}
				delete(m, k)
				written += recordSize(len(k), 12)
			default: // a Set of a key of the sealed segments or a new one
				k := []byte(keys[w.r.IntN(len(keys))])
				if x == 1 {
					k = w.key()
				}
				v := make([]byte, w.r.IntN(600))
				if err := l.Set(k, v); err != nil {
					t.Fatal(err)
				}
				m[string(k)] = v
				written += recordSize(len(k), len(v))
			}
		}
		d, names := checkpoint(t, l)
		sizes := listDir(t, d)
		var newParts, newSegs []string
		for _, n := range names {
			if slices.Contains(prev, n) {
				if sizes[n] != prevSizes[n] {
					t.Fatalf("round %d: %s has %d bytes, %d in the checkpoint before", round, n, sizes[n], prevSizes[n])
				}
				continue
			}
			added += sizes[n]
			if isPart(n) {
				newParts = append(newParts, n)
			} else {
				newSegs = append(newSegs, n)
			}
		}
		// One new part, of what was appended since, unless nothing was
		// (a Delete of a key deleted before).
		if len(newParts) > 1 {
			t.Fatalf("round %d: checkpoint %q holds the new parts %q, want one", round, names, newParts)
		}
		sealed += len(newSegs)
		for _, n := range sealedNames(prev) {
			if !slices.Contains(names, n) {
				compacted++
			}
		}
		cps = append(cps, taken{d, cloneModel(m)})
		ro := loadLog(t, d, testKGStart, testKGEnd, true, nil)
		checkLog(t, ro, m)
		if err := ro.Close(); err != nil {
			t.Fatal(err)
		}
		prev, prevSizes = names, sizes
	}
	t.Logf("200 checkpoints: %d bytes of records written, %d bytes of files added, %d segments sealed, %d compacted", written, added, sealed, compacted)
	if limit := 3*written + 4*testSegSize; added > limit {
		t.Fatalf("200 checkpoints after %d bytes of records written added %d bytes of files (%d segments sealed, %d compacted): more than %d", written, added, sealed, compacted, limit)
	}
	if sealed == 0 {
		t.Fatalf("no segment sealed over the checkpoints: the test needs some")
	}
	// Every checkpoint still loads as it was taken.
	for i, c := range cps {
		if i%10 != 9 {
			continue
		}
		ro := loadLog(t, c.dir, testKGStart, testKGEnd, true, nil)
		checkLog(t, ro, c.m)
		if err := ro.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLoadFromParts checkpoints a log whose active segment is in 1, 2 and
// many parts (set records, overwrites and kill records of keys of the
// sealed segments and of the parts), and loads the checkpoint read-only and
// writable. The writable log goes on writing the segment it loaded: its
// next checkpoint holds the loaded parts, byte for byte, and one new part
// that follows them; once it seals the segment, the segment file starts
// with the bytes of the parts, the parts are gone from its directory but
// not from the checkpoints, and every checkpoint loads as it was taken.
func TestLoadFromParts(t *testing.T) {
	for _, nParts := range []int{1, 2, 9} {
		t.Run(fmt.Sprint("parts=", nParts), func(t *testing.T) {
			dir := t.TempDir()
			l := openLog(t, dir, testKGStart, testKGEnd, nil)
			w := newWorkload(uint64(70+nParts), testKGStart, testKGEnd)
			w.bigValues = false
			m := model{}
			set := func(l *hashlog.Log, k, v []byte) {
				t.Helper()
				if err := l.Set(k, v); err != nil {
					t.Fatalf("Set(%x): %v", k, err)
				}
				m[string(k)] = v
			}
			del := func(l *hashlog.Log, k []byte) {
				t.Helper()
				if err := l.Delete(k); err != nil {
					t.Fatalf("Delete(%x): %v", k, err)
				}
				delete(m, string(k))
			}
			// anyKey returns a key of m.
			anyKey := func() []byte {
				for k := range m {
					return []byte(k)
				}
				t.Fatal("no key")
				return nil
			}
			// Three sealed segments and a new active one.
			for files := 0; files < 3; {
				set(l, w.key(), w.value())
				files, _ = segFiles(t, dir)
			}
			for start, _ := segFiles(t, dir); ; {
				if n, _ := segFiles(t, dir); n > start {
					break
				}
				set(l, w.key(), w.value())
			}
			// The parts: a few small writes before each checkpoint.
			var cp string
			var names []string
			for p := range nParts {
				k := kgKey(testKGStart+p%(testKGEnd-testKGStart), 0xAA, byte(p))
				set(l, k, bytes.Repeat([]byte{byte(p)}, 100))
				set(l, kgKey(testKGStart+1, 0xAB), []byte(fmt.Sprint("overwritten in part ", p)))
				del(l, anyKey())
				if p > 0 {
					del(l, kgKey(testKGStart+(p-1)%(testKGEnd-testKGStart), 0xAA, byte(p-1)))
				}
				cp, names = checkpoint(t, l)
				if got := len(partNames(t, names)); got != p+1 {
					t.Fatalf("checkpoint %d of the active segment holds %q: want %d parts", p, names, p+1)
				}
			}
			parts := partNames(t, names)
			seq := segSeq(t, parts[0])
			if len(sealedNames(names)) < 3 {
				t.Fatalf("checkpoint %q: want 3 sealed segments", names)
			}
			state := dirState(t, cp)
			mcp := cloneModel(m)

			ro := loadLog(t, cp, testKGStart, testKGEnd, true, nil)
			checkLog(t, ro, mcp)
			if err := ro.Close(); err != nil {
				t.Fatal(err)
			}
			sameState(t, "a read-only Load", cp, state)

			// Writable, in a copy.
			wdir := copyDir(t, cp)
			var mc memCounter
			wl := loadLog(t, wdir, testKGStart, testKGEnd, false, &mc)
			sameState(t, "a writable Load", wdir, state)
			checkLog(t, wl, m)
			checkMemory(t, wl, &mc, len(m), w.maxValue)
			set(wl, kgKey(testKGStart, 0xAC), []byte("after the load"))
			del(wl, anyKey())
			cp2, names2 := checkpoint(t, wl)
			parts2 := partNames(t, names2)
			if !slices.Equal(sealedNames(names2), sealedNames(names)) || len(parts2) != len(parts)+1 || !slices.Equal(parts2[:len(parts)], parts) {
				t.Fatalf("checkpoint of the loaded log holds %q; want the loaded checkpoint's files %q and one new part", names2, names)
			}
			for _, p := range parts {
				sameFile(t, filepath.Join(cp, p), filepath.Join(cp2, p))
			}
			last := parts[len(parts)-1]
			if s, from, _ := logFile(t, parts2[len(parts)]); s != seq || int64(from) != int64(logOffset(t, last))+listDir(t, cp)[last] {
				t.Fatalf("the new part %s does not follow the loaded parts %q", parts2[len(parts)], parts)
			}
			m2 := cloneModel(m)
			state2 := dirState(t, cp2)
			ro2 := loadLog(t, cp2, testKGStart, testKGEnd, true, nil)
			checkLog(t, ro2, m2)
			ro2.Close()

			// Written on until the loaded segment is sealed.
			segFile := filepath.Join(wdir, fmt.Sprintf("vlog-%06d.seg", seq))
			for i := 0; ; i++ {
				if _, err := os.Stat(segFile); err == nil {
					break
				}
				if i == 10000 {
					t.Fatalf("%s not written after 10000 writes", segFile)
				}
				set(wl, w.key(), w.value())
			}
			for name := range listDir(t, wdir) {
				if isPart(name) && segSeq(t, name) == seq {
					t.Fatalf("sealing segment %d left its part %s in the log's directory %s", seq, name, wdir)
				}
			}
			sealed, err := os.ReadFile(segFile)
			if err != nil {
				t.Fatal(err)
			}
			var joined []byte
			for _, p := range parts2 {
				b, err := os.ReadFile(filepath.Join(cp2, p))
				if err != nil {
					t.Fatal(err)
				}
				joined = append(joined, b...)
			}
			if !bytes.HasPrefix(sealed, joined) {
				t.Fatalf("segment %s (%d bytes) does not start with the %d bytes of its parts", segFile, len(sealed), len(joined))
			}
			checkLog(t, wl, m)
			sameState(t, "the loaded log", cp, state)
			sameState(t, "the loaded log", cp2, state2)

			cp3, names3 := checkpoint(t, wl)
			if !slices.Contains(names3, filepath.Base(segFile)) || slices.ContainsFunc(partNames(t, names3), func(n string) bool { return segSeq(t, n) == seq }) {
				t.Fatalf("checkpoint after the seal holds %q: want segment %d and none of its parts", names3, seq)
			}
			for _, c := range []struct {
				dir string
				m   model
			}{{cp, mcp}, {cp2, m2}, {cp3, m}} {
				for _, readOnly := range []bool{true, false} {
					d := c.dir
					if !readOnly {
						d = copyDir(t, c.dir)
					}
					ll := loadLog(t, d, testKGStart, testKGEnd, readOnly, nil)
					checkLog(t, ll, c.m)
					if err := ll.Close(); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

// logOffset returns the offset a part's name gives, 0 for a segment.
func logOffset(t *testing.T, name string) int {
	t.Helper()
	_, from, _ := logFile(t, name)
	return from
}

// TestLoadBadParts damages the parts of a checkpoint's active segment and
// checks that Load, read-only and writable, fails with an error wrapping
// ErrCorrupt that names the directory or the part, and leaves the directory
// as it was: a part missing between others or first, a part longer or
// shorter than the next one's offset says, a damaged segment header, an
// empty part, parts of a segment older than a sealed one or of the sealed
// one itself, and parts of two segments.
func TestLoadBadParts(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, testKGStart, testKGEnd, nil)
	w := newWorkload(90, testKGStart, testKGEnd)
	w.bigValues, w.width, w.extra = false, 8, 1 // few keys: compaction comes soon
	// Three sealed segments or more, the first compacted away.
	for i := 0; ; i++ {
		if files, _ := segFiles(t, dir); files >= 3 {
			if _, err := os.Stat(filepath.Join(dir, "vlog-000001.seg")); err != nil {
				break
			}
		}
		if i == 100000 {
			t.Fatal("segment 1 not compacted after 100000 writes")
		}
		if err := l.Set(w.key(), w.value()); err != nil {
			t.Fatal(err)
		}
	}
	var cp string
	var names []string
	for i := range 3 {
		if err := l.Set(kgKey(testKGStart, 0xBB, byte(i)), bytes.Repeat([]byte{'p'}, 50)); err != nil {
			t.Fatal(err)
		}
		cp, names = checkpoint(t, l)
	}
	parts, segs := partNames(t, names), sealedNames(names)
	if len(parts) != 3 {
		t.Fatalf("checkpoint %q: the test wants 3 parts", names)
	}
	seq := segSeq(t, parts[0])
	loSeg, hiSeg := seqRange(t, segs)
	files := listDir(t, cp)
	end := logOffset(t, parts[2]) + int(files[parts[2]])
	read := func(dir, name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write := func(dir, name string, b []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	remove := func(dir, name string) {
		t.Helper()
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	// moveParts renames the parts to those of segment to, with the header
	// rewritten for it.
	moveParts := func(dir string, to uint64) string {
		t.Helper()
		for _, p := range parts {
			b := read(dir, p)
			if logOffset(t, p) == 0 {
				binary.LittleEndian.PutUint64(b[8:], to)
			}
			remove(dir, p)
			write(dir, fmt.Sprintf("vlog-%06d.%d.part", to, logOffset(t, p)), b)
		}
		return fmt.Sprintf("vlog-%06d.0.part", to)
	}
	for _, c := range []struct {
		name   string
		damage func(dir string) string // returns the file the error may name
	}{
		{"a part missing between others", func(d string) string { remove(d, parts[1]); return parts[2] }},
		{"the first part missing", func(d string) string { remove(d, parts[0]); return parts[1] }},
		{"the first part only", func(d string) string {
			remove(d, parts[1])
			remove(d, parts[2])
			write(d, parts[0], read(d, parts[0])[:segHeaderSize-1])
			return parts[0]
		}},
		{"a part a byte longer", func(d string) string { write(d, parts[0], append(read(d, parts[0]), 0)); return parts[1] }},
		{"a part a byte shorter", func(d string) string { b := read(d, parts[1]); write(d, parts[1], b[:len(b)-1]); return parts[2] }},
		{"a part emptied", func(d string) string { write(d, parts[1], nil); return parts[1] }},
		{"an empty part after the others", func(d string) string {
			p := fmt.Sprintf("vlog-%06d.%d.part", seq, end)
			write(d, p, nil)
			return p
		}},
		{"a part starting within another", func(d string) string {
			p := fmt.Sprintf("vlog-%06d.%d.part", seq, logOffset(t, parts[1])+1)
			write(d, p, read(d, parts[1])[1:])
			return p
		}},
		{"magic damaged", func(d string) string { b := read(d, parts[0]); b[2] ^= 1; write(d, parts[0], b); return parts[0] }},
		{"sequence damaged", func(d string) string { b := read(d, parts[0]); b[8] ^= 1; write(d, parts[0], b); return parts[0] }},
		{"the parts of the last sealed segment", func(d string) string { return moveParts(d, hiSeg) }},
		{"the parts of a segment between sealed ones", func(d string) string {
			if hiSeg-loSeg < 2 {
				t.Fatalf("sealed segments %q: the test wants a gap in their sequence numbers or more of them", segs)
			}
			return moveParts(d, hiSeg-1)
		}},
		{"the parts of a compacted segment", func(d string) string {
			if loSeg < 2 {
				t.Fatalf("sealed segments %q: the test wants the first compacted", segs)
			}
			return moveParts(d, loSeg-1)
		}},
		{"the parts of a sealed segment beside it", func(d string) string {
			var b []byte
			for _, p := range parts {
				b = append(b, read(d, p)...)
			}
			name := fmt.Sprintf("vlog-%06d.seg", seq)
			write(d, name, b)
			return name
		}},
		{"the parts of two segments", func(d string) string {
			b := read(d, parts[0])
			binary.LittleEndian.PutUint64(b[8:], seq+1)
			name := fmt.Sprintf("vlog-%06d.0.part", seq+1)
			write(d, name, b)
			return name
		}},
	} {
		for _, readOnly := range []bool{true, false} {
			d := copyDir(t, cp)
			file := c.damage(d)
			before := dirState(t, d)
			ll, err := hashlog.Load(d, testKGStart, testKGEnd, testOptions(nil), readOnly)
			if err == nil {
				ll.Close()
				t.Fatalf("%s: Load (readOnly %v) of %q succeeded", c.name, readOnly, slices.Sorted(maps.Keys(listDir(t, d))))
			}
			if !errorsIsCorrupt(err) || !strings.Contains(err.Error(), d) && !strings.Contains(err.Error(), file) {
				t.Fatalf("%s: Load (readOnly %v): %v; want an error wrapping ErrCorrupt naming %s or %s", c.name, readOnly, err, d, file)
			}
			sameState(t, c.name+": a failed Load", d, before)
			if readOnly {
				t.Logf("%s: %v", c.name, err)
			}
		}
	}
	// The checkpoint itself loads.
	ll := loadLog(t, cp, testKGStart, testKGEnd, true, nil)
	if ll.Len() == 0 {
		t.Fatal("the checkpoint loads empty")
	}
}

// TestCheckpointEmpty checkpoints a log that never held an entry (no file)
// and one whose entries were all deleted (segments and parts of set and
// kill records), and loads both.
func TestCheckpointEmpty(t *testing.T) {
	l := openLog(t, t.TempDir(), testKGStart, testKGEnd, nil)
	d, names := checkpoint(t, l)
	if len(names) != 0 {
		t.Fatalf("the checkpoint of an empty log holds %q, want nothing", names)
	}
	ro := loadLog(t, d, testKGStart, testKGEnd, true, nil)
	checkLog(t, ro, model{})
	wl := loadLog(t, d, testKGStart, testKGEnd, false, nil)
	checkLog(t, wl, model{})
	if err := wl.Set(kgKey(testKGStart, 1), []byte("a")); err != nil {
		t.Fatal(err)
	}
	checkLog(t, wl, model{string(kgKey(testKGStart, 1)): []byte("a")})

	// Every key deleted: the checkpoint holds set records and the kill
	// records that end them.
	w := newWorkload(40, testKGStart, testKGEnd)
	w.bigValues = false
	ever := map[string]bool{}
	for range 1000 {
		k := w.key()
		if err := l.Set(k, w.value()); err != nil {
			t.Fatal(err)
		}
		ever[string(k)] = true
	}
	if err := l.DeletePrefix(nil); err != nil {
		t.Fatal(err)
	}
	d, names = checkpoint(t, l)
	sets, kills := 0, 0
	for _, n := range names {
		for _, r := range readRecords(t, filepath.Join(d, n)) {
			if r.kind == kindKill {
				kills++
			} else {
				sets++
			}
		}
	}
	if sets == 0 || kills == 0 {
		t.Fatalf("checkpoint %q holds %d set and %d kill records: the test needs both", names, sets, kills)
	}
	before := dirState(t, d)
	ro = loadLog(t, d, testKGStart, testKGEnd, true, nil)
	checkLog(t, ro, model{})
	checkAbsent(t, ro, model{}, ever, testKGStart, testKGEnd)
	ro.Close()
	sameState(t, "a read-only Load", d, before)
	wl = loadLog(t, d, testKGStart, testKGEnd, false, nil)
	checkLog(t, wl, model{})
	sameState(t, "a writable Load", d, before)
	// Its writes compact the loaded segments away, and seal the one
	// loaded from parts, which removes them.
	m := model{}
	for i := 0; ; i++ {
		left := 0
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(d, n)); err == nil {
				left++
			}
		}
		if left == 0 {
			break
		}
		if i == 20000 {
			t.Fatalf("after 20000 writes, %d of the loaded segments %q of no entry are still in %s", left, names, d)
		}
		k, v := w.key(), w.value()
		if err := wl.Set(k, v); err != nil {
			t.Fatal(err)
		}
		m[string(k)] = v
	}
	checkLog(t, wl, m)
}

// TestLoadCorrupt damages copies of a checkpoint and checks that Load,
// read-only and writable, fails with an error wrapping ErrCorrupt that
// names the damaged file, and leaves the directory as it was: a byte of
// every part of every record (set records live and dead, kill records) of
// the segments and of the parts of the active segment, of the segment
// header, segments and parts truncated within a record, and segments of
// another sequence number. It also checks that an undamaged checkpoint,
// with files that are not the log's beside it, loads and is left as it was.
func TestLoadCorrupt(t *testing.T) {
	src := t.TempDir()
	l := openLog(t, src, testKGStart, testKGEnd, nil)
	var live []string
	for i := range 300 {
		if i == 285 {
			// The active segment's first part; the second is written by
			// the checkpoint below.
			checkpoint(t, l)
		}
		k := kgKey(testKGStart+i%(testKGEnd-testKGStart), byte(i>>8), byte(i))
		if err := l.Set(k, bytes.Repeat([]byte{byte(i)}, 300+i*37%800)); err != nil {
			t.Fatal(err)
		}
		switch i % 10 {
		case 3: // a dead set record and a kill record
			if err := l.Delete(k); err != nil {
				t.Fatal(err)
			}
		case 7: // a dead set record and a live one
			if err := l.Set(k, []byte("again")); err != nil {
				t.Fatal(err)
			}
			live = append(live, string(k))
		default:
			live = append(live, string(k))
		}
	}
	if err := l.DeletePrefix(kgKey(testKGEnd - 1)); err != nil {
		t.Fatal(err)
	}
	cp, names := checkpoint(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	segs, parts := sealedNames(names), partNames(t, names)
	if len(segs) < 3 || len(parts) < 2 {
		t.Fatalf("checkpoint %q: the test needs 3 segments and 2 parts", names)
	}
	records := map[string][]segRecord{}
	kills := 0
	for _, s := range names {
		records[s] = readRecords(t, filepath.Join(cp, s))
		for _, r := range records[s] {
			if r.kind == kindKill {
				kills++
			}
		}
	}
	if kills < 40 {
		t.Fatalf("the checkpoint holds %d kill records: the test needs more", kills)
	}

	// load loads dir and checks that it fails with an error wrapping
	// ErrCorrupt that names one of want, and changes no file.
	load := func(t *testing.T, what, dir string, readOnly bool, want ...string) {
		t.Helper()
		before := listDir(t, dir)
		l, err := hashlog.Load(dir, testKGStart, testKGEnd, testOptions(nil), readOnly)
		if err == nil {
			l.Close()
			t.Fatalf("%s: Load (readOnly %v) succeeded, want an error naming %q", what, readOnly, want)
		}
		named := slices.ContainsFunc(want, func(w string) bool { return strings.Contains(err.Error(), w) })
		if !named || !errorsIsCorrupt(err) {
			t.Fatalf("%s: Load (readOnly %v): %v; want an error wrapping ErrCorrupt naming one of %q", what, readOnly, err, want)
		}
		sameDir(t, what+": a failed Load", dir, before)
	}
	// named returns what an error about the file name of the checkpoint
	// copy dir may name: the file, the directory, and for a record of a
	// part, the segment the parts make up (whose records are checked once
	// the parts are joined; bug_test.go wants the part or the directory).
	named := func(dir, name string, record bool) []string {
		if !isPart(name) {
			return []string{name}
		}
		if record {
			return []string{name, dir, fmt.Sprintf("vlog-%06d", segSeq(t, name))}
		}
		return []string{name, dir}
	}

	// A byte of each part of every record, flipped in place and back.
	t.Run("record bytes", func(t *testing.T) {
		dir := copyDir(t, cp)
		state := dirState(t, dir)
		n := 0
		for _, s := range names {
			path := filepath.Join(dir, s)
			for _, r := range records[s] {
				kl := len(r.key)
				offs := []int{0, 3, 4, 5, r.hdr - 1, r.hdr, r.hdr + kl - 1, r.size - 1}
				if len(r.value) > 0 {
					offs = append(offs, r.hdr+kl, r.hdr+kl+len(r.value)/2)
				}
				slices.Sort(offs)
				for _, o := range slices.Compact(offs) {
					what := fmt.Sprintf("%s: byte %d of the %s record of key %x at offset %d", s, o, map[byte]string{kindSet: "set", kindKill: "kill"}[r.kind], r.key, r.off)
					flipByte(t, path, int64(r.pos+o))
					load(t, what, dir, n%2 == 0, named(dir, s, true)...)
					flipByte(t, path, int64(r.pos+o))
					n++
				}
			}
		}
		sameState(t, "failed Loads", dir, state)
	})

	for _, readOnly := range []bool{true, false} {
		t.Run(fmt.Sprintf("files/readOnly=%v", readOnly), func(t *testing.T) {
			for i, s := range []string{segs[0], segs[1], segs[len(segs)-1], parts[0], parts[len(parts)-1]} {
				recs := records[s]
				// The header: magic and sequence number (of a segment, and
				// of the first part).
				if !isPart(s) || s == parts[0] {
					for _, o := range []int64{0, 7, 8, 15} {
						dir := copyDir(t, cp)
						flipByte(t, filepath.Join(dir, s), o)
						load(t, fmt.Sprintf("%s: header byte %d", s, o), dir, readOnly, named(dir, s, false)...)
					}
				}
				// Truncated within a record: in the header, in the first
				// record, within later ones, by one byte.
				size := int64(recs[len(recs)-1].pos + recs[len(recs)-1].size)
				mid := recs[len(recs)/2]
				cuts := []int64{int64(recs[0].pos + recs[0].size - 1), int64(mid.pos + 1), int64(mid.pos + mid.hdr + 1), size - 1}
				if recs[0].pos > 0 {
					cuts = append(cuts, 0, 8, segHeaderSize-1, segHeaderSize+3)
				}
				for _, n := range cuts {
					dir := copyDir(t, cp)
					if err := os.Truncate(filepath.Join(dir, s), n); err != nil {
						t.Fatal(err)
					}
					// A part cut short but not empty is reported as a
					// record running past the end of the segment, or, for
					// the parts before the last, as a part that does not
					// follow.
					load(t, fmt.Sprintf("%s truncated to %d bytes", s, n), dir, readOnly, named(dir, s, true)...)
				}
				if isPart(s) {
					continue
				}
				// Another segment's bytes under its name.
				other := segs[(i+1)%len(segs)]
				dir := copyDir(t, cp)
				data, err := os.ReadFile(filepath.Join(dir, other))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, s), data, 0o644); err != nil {
					t.Fatal(err)
				}
				load(t, fmt.Sprintf("%s holding segment %s", s, other), dir, readOnly, s)
			}
			// A segment of a name no segment of the checkpoint has, holding
			// another's bytes; one of a header only; above the parts (whose
			// segment must be the newest) and between the sealed
			// segments and the parts.
			_, hiSeg := seqRange(t, segs)
			_, hi := seqRange(t, names)
			if hi != hiSeg+1 {
				t.Fatalf("checkpoint %q: the test wants the parts' segment right after the last sealed one", names)
			}
			for _, c := range []struct {
				name string
				data func([]byte) []byte
			}{
				{fmt.Sprintf("vlog-%06d.seg", hi+1), func(b []byte) []byte { return b }},
				{fmt.Sprintf("vlog-%06d.seg", hi+2), func(b []byte) []byte { return b[:8] }},
				{fmt.Sprintf("vlog-%06d.seg", hi), func(b []byte) []byte { return b }},
			} {
				dir := copyDir(t, cp)
				data, err := os.ReadFile(filepath.Join(dir, segs[0]))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, c.name), c.data(data), 0o644); err != nil {
					t.Fatal(err)
				}
				load(t, "a stray "+c.name, dir, readOnly, c.name, dir)
			}
		})
	}

	// The undamaged checkpoint loads, with files that are not the log's
	// beside it, and Load changes none.
	dir := copyDir(t, cp)
	for _, n := range []string{"vlog-000001.idx", "vlog-x.seg", "README", "vlog-000001.seg.tmp", "vlog-000001.part", "vlog-000009.x.part", "vlog-000009.0.part.tmp"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("not a segment"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	state := dirState(t, dir)
	for _, readOnly := range []bool{true, false} {
		l := loadLog(t, dir, testKGStart, testKGEnd, readOnly, nil)
		want := 0
		for _, k := range live {
			if int(binary.BigEndian.Uint16([]byte(k))) != testKGEnd-1 {
				want++
			}
		}
		if l.Len() != want {
			t.Fatalf("Len() = %d, want %d", l.Len(), want)
		}
		sameState(t, fmt.Sprintf("a Load (readOnly %v)", readOnly), dir, state)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		sameState(t, fmt.Sprintf("Close of a loaded log (readOnly %v)", readOnly), dir, state)
	}
}

// chain is a log in a chain of generations: each generation is a writable
// Load of a copy of the last checkpoint of the one before, used further. It
// keeps a map of what the log should hold.
type chain struct {
	t              *testing.T
	r              *rand.Rand
	w              *workload
	l              *hashlog.Log
	dir            string
	kgStart, kgEnd int
	full           bool // the key groups are those of the first generation
	m              model
	mc             *memCounter
	peak           int
	// tracked are keys of each key group, some written often and some
	// rarely, that are set again and again and deleted, over many seals
	// and compactions.
	tracked [][]byte
	// ever holds every key written.
	ever map[string]bool
	// loaded are the segments the generation was loaded from.
	loaded []string
	// cps are the checkpoints taken, checked again at the end.
	cps []chainCheckpoint
	// hazards counts the deleted keys whose set records a checkpoint held
	// (which a wrong replay would bring back).
	hazards int
	// parted and multiParted count the checkpoints that held parts, and
	// those that held several.
	parted, multiParted int
}

// chainCheckpoint is a checkpoint of a chain and what it should hold.
type chainCheckpoint struct {
	dir            string
	m              model
	kgStart, kgEnd int
	full           bool
}

// op applies a random operation to the log and the map.
func (c *chain) op() {
	t, l, w := c.t, c.l, c.w
	t.Helper()
	switch x := c.r.IntN(100); {
	case x < 40:
		k, v := w.key(), w.value()
		if err := l.Set(k, v); err != nil {
			t.Fatalf("Set(%x, %d bytes): %v", k, len(v), err)
		}
		c.m[string(k)] = v
		c.ever[string(k)] = true
	case x < 45:
		n := 1 + c.r.IntN(8)
		keys, values := make([][]byte, n), make([][]byte, n)
		for i := range n {
			keys[i], values[i] = w.key(), w.value()
			if i > 0 && c.r.IntN(4) == 0 {
				keys[i] = keys[c.r.IntN(i)]
			}
		}
		if err := l.SetBatch(keys, values); err != nil {
			t.Fatalf("SetBatch(%d keys): %v", n, err)
		}
		for i := range n {
			c.m[string(keys[i])] = values[i]
			c.ever[string(keys[i])] = true
		}
	case x < 58:
		k := w.key()
		if err := l.Delete(k); err != nil {
			t.Fatalf("Delete(%x): %v", k, err)
		}
		delete(c.m, string(k))
	case x < 59:
		p := w.prefix()
		if len(p) == 0 && c.r.IntN(8) != 0 {
			p = kgKey(c.kgStart + c.r.IntN(c.kgEnd-c.kgStart)) // fewer full wipes
		}
		if err := l.DeletePrefix(p); err != nil {
			t.Fatalf("DeletePrefix(%x): %v", p, err)
		}
		c.m.deletePrefix(p)
	case x < 62:
		checkGet(t, l, c.m, w.key())
	default:
		k := c.tracked[c.r.IntN(c.r.IntN(len(c.tracked))+1)] // the first ones more often
		if _, ok := c.m[string(k)]; ok && c.r.IntN(4) == 0 {
			if err := l.Delete(k); err != nil {
				t.Fatalf("Delete(%x): %v", k, err)
			}
			delete(c.m, string(k))
			return
		}
		v := w.value()
		if err := l.Set(k, v); err != nil {
			t.Fatalf("Set(%x, %d bytes): %v", k, len(v), err)
		}
		c.m[string(k)] = v
		c.ever[string(k)] = true
	}
	c.peak = max(c.peak, len(c.m))
}

// checkpoint checkpoints the log into a new directory, checks the
// checkpoint and returns it with its names.
func (c *chain) checkpoint() (chainCheckpoint, []string) {
	t := c.t
	t.Helper()
	dir, names := checkpoint(t, c.l)
	cp := chainCheckpoint{dir: dir, m: cloneModel(c.m), kgStart: c.kgStart, kgEnd: c.kgEnd, full: c.full}
	// New segments are named above the ones the generation was loaded
	// from (or continue the segment whose parts it loaded).
	for _, n := range names {
		if !newerThanLoaded(t, c.loaded, n) {
			t.Fatalf("checkpoint file %s is not one the log was loaded from, %q, and not above them", n, c.loaded)
		}
	}
	// Deleted keys whose set records the checkpoint holds.
	dead := map[string]bool{}
	for _, n := range names {
		for _, r := range readRecords(t, filepath.Join(dir, n)) {
			kg := int(binary.BigEndian.Uint16(r.key))
			if _, ok := cp.m[string(r.key)]; !ok && r.kind == kindSet && kg >= c.kgStart && kg < c.kgEnd {
				dead[string(r.key)] = true
			}
		}
	}
	c.hazards += len(dead)
	if n := len(partNames(t, names)); n > 1 {
		c.multiParted++
		c.parted++
	} else if n == 1 {
		c.parted++
	}
	c.check(cp)
	c.cps = append(c.cps, cp)
	return cp, names
}

// check loads the checkpoint cp read-only (all its key groups and a random
// subset) and writable (a random subset, in a copy, then written to,
// checkpointed and loaded again), compares each log with cp's map, and
// checks that the loads change no file and that the loaded parts the
// writable log checkpoints again have the same bytes.
func (c *chain) check(cp chainCheckpoint) {
	t := c.t
	t.Helper()
	state := dirState(t, cp.dir)
	a := cp.kgStart + c.r.IntN(cp.kgEnd-cp.kgStart)
	b := a + 1 + c.r.IntN(cp.kgEnd-a)
	ranges := [][2]int{{cp.kgStart, cp.kgEnd}, {a, b}}
	if cp.full {
		ranges = append(ranges, [2]int{0, 1 << 16})
	}
	for _, r := range ranges {
		ro := loadLog(t, cp.dir, r[0], r[1], true, nil)
		want := subset(cp.m, r[0], r[1])
		checkLog(t, ro, want)
		checkAbsent(t, ro, want, c.ever, r[0], r[1])
		checkOutside(t, ro, cp.m, r[0], r[1])
		if err := ro.Close(); err != nil {
			t.Fatal(err)
		}
	}
	sameState(t, "read-only Loads", cp.dir, state)

	dir := copyDir(t, cp.dir)
	copyState := dirState(t, dir)
	wl := loadLog(t, dir, a, b, false, nil)
	sameState(t, "a writable Load", dir, copyState)
	m := subset(cp.m, a, b)
	checkLog(t, wl, m)
	checkAbsent(t, wl, m, c.ever, a, b)
	w := newWorkload(c.r.Uint64(), a, b)
	w.width, w.extra = c.w.width, c.w.extra
	for range 300 {
		w.step(t, wl, m)
	}
	checkLog(t, wl, m)
	d, names := checkpoint(t, wl)
	// The parts it was loaded from, checkpointed again, are the same.
	for _, n := range partNames(t, names) {
		if _, ok := state[n]; ok {
			sameFile(t, filepath.Join(cp.dir, n), filepath.Join(d, n))
		}
	}
	if err := wl.Close(); err != nil {
		t.Fatal(err)
	}
	ro := loadLog(t, d, a, b, true, nil)
	checkLog(t, ro, m)
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	sameState(t, "the loads and the log of a copy", cp.dir, state)
}

// TestCheckpointChainsMatchMap runs random Set, SetBatch, Delete and
// DeletePrefix calls over several key groups of a log of 64 KiB segments
// (compaction runs often) with a small key space, and keys set several times
// and deleted; takes checkpoints at random points (some soon after another,
// so that the active segment is in several parts) and at the end of each
// generation, each loaded (read-only and writable, every key group and
// subsets) and compared with a copy of the map taken at checkpoint time,
// deleted keys absent; and starts each next generation from a writable Load
// of a copy of the last checkpoint (in one chain, of a subset of the key
// groups), five generations, each going on writing the active segment it
// loaded from parts. At the end every checkpoint loads again as it was
// taken.
func TestCheckpointChainsMatchMap(t *testing.T) {
	for _, seed := range []uint64{51, 52, 53} {
		narrow := seed == 52
		t.Run(fmt.Sprintf("seed=%d/narrow=%v", seed, narrow), func(t *testing.T) {
			c := &chain{
				t: t, r: rand.New(rand.NewPCG(seed, 7)), w: newWorkload(seed, testKGStart, testKGEnd),
				dir: t.TempDir(), kgStart: testKGStart, kgEnd: testKGEnd, full: true,
				m: model{}, mc: &memCounter{}, ever: map[string]bool{},
			}
			c.w.width, c.w.extra = 4, 1
			for i := range 4 {
				for kg := testKGStart; kg < testKGEnd; kg++ {
					c.tracked = append(c.tracked, kgKey(kg, 0xEE, byte(i)))
				}
			}
			c.r.Shuffle(len(c.tracked), func(i, j int) { c.tracked[i], c.tracked[j] = c.tracked[j], c.tracked[i] })
			c.l = openLog(t, c.dir, c.kgStart, c.kgEnd, c.mc)
			for gen := range 5 {
				loLoaded, _ := seqRange(t, c.loaded)
				ops := 2500 + c.r.IntN(2500)
				for i := range ops {
					c.op()
					if c.r.IntN(1000) == 0 {
						c.checkpoint()
						if c.r.IntN(2) == 0 {
							// Another soon after: the active segment in
							// several parts.
							for range 1 + c.r.IntN(50) {
								c.op()
							}
							c.checkpoint()
						}
					}
					if i%500 == 499 {
						k := c.w.key()
						if err := c.l.Set(k, nil); err != nil {
							t.Fatal(err)
						}
						c.m[string(k)] = nil
						c.ever[string(k)] = true
						checkLog(t, c.l, c.m)
						checkDisk(t, c.dir, c.m)
						checkMemory(t, c.l, c.mc, c.peak, c.w.maxValue)
					}
				}
				// The log's compactions removed the oldest segments,
				// those it was loaded from among them.
				if gen > 0 {
					gone := 0
					for _, n := range c.loaded {
						if _, err := os.Stat(filepath.Join(c.dir, n)); err != nil {
							gone++
						}
					}
					if gone == 0 {
						t.Fatalf("generation %d: after %d operations the log still holds every segment it was loaded from", gen, ops)
					}
				}
				cp, names := c.checkpoint()
				if lo, _ := seqRange(t, names); lo <= loLoaded {
					t.Fatalf("generation %d: the checkpoint's oldest segment is %d, the generation started at %d: no compaction", gen, lo, loLoaded)
				}
				// The log goes on after its checkpoint (which must not
				// change), then the next generation starts from it.
				for range 300 {
					c.op()
				}
				checkLog(t, c.l, c.m)
				if err := c.l.Close(); err != nil {
					t.Fatal(err)
				}
				if narrow && gen == 1 {
					c.kgStart, c.kgEnd, c.full = testKGStart+2, testKGEnd-1, false
				}
				c.dir = copyDir(t, cp.dir)
				state := dirState(t, c.dir)
				// Loaded with the segment size of the test (the default
				// options, as a restore loads, are TestCheckpointAndLoad's),
				// then SetOptions as a restore does.
				l, err := hashlog.Load(c.dir, c.kgStart, c.kgEnd, testOptions(nil), false)
				if err != nil {
					t.Fatalf("generation %d: Load(%s, %d, %d): %v", gen+1, c.dir, c.kgStart, c.kgEnd, err)
				}
				t.Cleanup(func() { l.Close() })
				sameState(t, "a writable Load", c.dir, state)
				c.mc = &memCounter{}
				l.SetOptions(testOptions(c.mc))
				if c.mc.n != l.Memory() {
					t.Fatalf("SetOptions reported %d bytes, Memory() = %d", c.mc.n, l.Memory())
				}
				c.l, c.loaded = l, names
				c.m = subset(cp.m, c.kgStart, c.kgEnd)
				c.peak = len(c.m)
				c.tracked = slices.DeleteFunc(c.tracked, func(k []byte) bool {
					kg := int(binary.BigEndian.Uint16(k))
					return kg < c.kgStart || kg >= c.kgEnd
				})
				width, extra, maxValue := c.w.width, c.w.extra, c.w.maxValue
				c.w = newWorkload(c.r.Uint64(), c.kgStart, c.kgEnd)
				c.w.width, c.w.extra, c.w.maxValue = width, extra, maxValue
				checkLog(t, c.l, c.m)
				checkAbsent(t, c.l, c.m, c.ever, c.kgStart, c.kgEnd)
			}
			if c.hazards == 0 {
				t.Fatal("no checkpoint held a set record of a deleted key: the test needs some")
			}
			if c.multiParted == 0 {
				t.Fatalf("%d checkpoints, %d with parts, none with several: the test needs some", len(c.cps), c.parted)
			}
			for i, cp := range c.cps {
				ro := loadLog(t, cp.dir, cp.kgStart, cp.kgEnd, true, nil)
				checkLog(t, ro, cp.m)
				checkAbsent(t, ro, cp.m, c.ever, cp.kgStart, cp.kgEnd)
				if err := ro.Close(); err != nil {
					t.Fatalf("checkpoint %d: %v", i, err)
				}
			}
			t.Logf("%d checkpoints (%d with parts, %d with several), %d deleted keys with set records in them", len(c.cps), c.parted, c.multiParted, c.hazards)
		})
	}
}
