package hashlog_test

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
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

// findIndex returns the name of the index file in dir, which must have one.
func findIndex(t *testing.T, dir string) string {
	t.Helper()
	idx, ok, err := hashlog.FindIndex(dir)
	if err != nil || !ok {
		t.Fatalf("FindIndex(%s) = %q, %v, %v; want an index", dir, idx, ok, err)
	}
	return idx
}

// loadLog loads the checkpoint in dir for the key groups [kgStart, kgEnd),
// closed when the test ends.
func loadLog(t *testing.T, dir string, kgStart, kgEnd int, readOnly bool, mc *memCounter) *hashlog.Log {
	t.Helper()
	idx := findIndex(t, dir)
	l, err := hashlog.Load(dir, idx, kgStart, kgEnd, testOptions(mc), readOnly)
	if err != nil {
		t.Fatalf("Load(%s, %s, %d, %d, readOnly %v): %v", dir, idx, kgStart, kgEnd, readOnly, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// checkpoint checkpoints l into a new directory, checks the names it returns
// against the directory, and returns the directory and the names.
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
	if got := slices.Sorted(maps.Keys(listDir(t, dir))); !slices.Equal(got, names) {
		t.Fatalf("Checkpoint returned names %q, the directory holds %q", names, got)
	}
	idx := findIndex(t, dir)
	nidx := 0
	for _, n := range names {
		if !hashlog.IsLogFile(n) {
			t.Fatalf("IsLogFile(%q) = false for a file of a checkpoint", n)
		}
		if strings.HasSuffix(n, ".idx") {
			nidx++
			if n != idx {
				t.Fatalf("Checkpoint wrote index %s, FindIndex returns %s", n, idx)
			}
		}
	}
	if nidx != 1 {
		t.Fatalf("Checkpoint wrote %d index files: %q", nidx, names)
	}
	return dir, names
}

// fileSeq returns the sequence number of a log file name.
func fileSeq(t *testing.T, name string) uint64 {
	t.Helper()
	var seq uint64
	var ext string
	if _, err := fmt.Sscanf(name, "vlog-%d.%s", &seq, &ext); err != nil {
		t.Fatalf("%s is not a log file name: %v", name, err)
	}
	return seq
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

// sameDir checks that dir holds the files of before, of the same sizes.
func sameDir(t *testing.T, what, dir string, before map[string]int64) {
	t.Helper()
	if after := listDir(t, dir); !maps.Equal(before, after) {
		t.Fatalf("%s changed %s: files before %v, after %v", what, dir, before, after)
	}
}

// TestCheckpointAndLoad checkpoints a log mid-way, keeps writing until its
// compactions remove segment files the checkpoint holds, and loads the
// checkpoint read-only (all key groups, and subsets; the directory
// unchanged) and writable (the index and unneeded segments removed), then
// keeps using the loaded log, checkpoints and loads it again.
func TestCheckpointAndLoad(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, testKGStart, testKGEnd, nil)
	m := model{}

	// Segments that hold key group 254 only (distinct keys, not written
	// again before the checkpoint, so that compaction leaves them), then
	// writes and deletes of the other key groups.
	w := newWorkload(11, testKGStart, testKGEnd)
	w.bigValues = false
	for i := range 1200 {
		k, v := kgKey(testKGStart, 0xEE, byte(i>>8), byte(i)), w.value()
		if err := l.Set(k, v); err != nil {
			t.Fatal(err)
		}
		m[string(k)] = v
	}
	kg254Segs := listDir(t, dir)
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
	idx1 := findIndex(t, cp1)
	checkLog(t, l, m)

	// Write on until compaction has removed from dir segments that the
	// checkpoint holds.
	removed := func() int {
		n := 0
		now := listDir(t, dir)
		for _, name := range names1 {
			if _, ok := now[name]; !ok && strings.HasSuffix(name, ".seg") {
				n++
			}
		}
		return n
	}
	for i := 0; removed() < 3; i++ {
		if i == 50 {
			t.Fatalf("after 10000 more operations, compaction removed only %d of the checkpoint's segments from the log's directory", removed())
		}
		for range 200 {
			w.step(t, l, m)
		}
	}
	checkLog(t, l, m)

	// Read-only loads, of every key group and of subsets, leave the
	// directory as it was (the one without key group 254 has segments
	// with no live record).
	before := listDir(t, cp1)
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
			break
		}
		sameDir(t, fmt.Sprintf("read-only Load of key groups %v", r), cp1, before)
		if err := ro.Close(); err != nil {
			t.Fatal(err)
		}
		sameDir(t, fmt.Sprintf("Close of a read-only log of key groups %v", r), cp1, before)
	}

	// A writable load of a subset takes over its directory: the index and
	// the segments of key group 254 only are removed, the others stay.
	cpSub := copyDir(t, cp1)
	sub := loadLog(t, cpSub, testKGStart+1, testKGEnd, false, nil)
	checkLog(t, sub, subset(m1, testKGStart+1, testKGEnd))
	if _, ok, err := hashlog.FindIndex(cpSub); ok || err != nil {
		t.Fatalf("FindIndex after a writable Load = %v, %v; want no index (removed)", ok, err)
	}
	after := listDir(t, cpSub)
	dropped := 0
	for _, name := range names1 {
		_, had := kg254Segs[name]
		_, has := after[name]
		switch {
		case name == idx1:
		case had && has:
			t.Fatalf("segment %s holds only key group %d, not loaded, and is still in %s", name, testKGStart, cpSub)
		case had:
			dropped++
		}
	}
	if dropped == 0 {
		t.Fatalf("the checkpoint holds none of the segments %v of key group %d only: the test needs some", slices.Sorted(maps.Keys(kg254Segs)), testKGStart)
	}
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}

	// A writable load of every key group, used further.
	var mc memCounter
	wl := loadLog(t, cp1, testKGStart, testKGEnd, false, &mc)
	checkLog(t, wl, m1)
	if _, ok, err := hashlog.FindIndex(cp1); ok || err != nil {
		t.Fatalf("FindIndex after a writable Load = %v, %v; want no index (removed)", ok, err)
	}
	checkMemory(t, wl, &mc, len(m1), w.maxValue)
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
			checkMemory(t, wl, &mc, peak, max(w.maxValue, w2.maxValue))
		}
	}
	// New files are named above the checkpoint's index.
	for name := range listDir(t, cp1) {
		if !slices.Contains(names1, name) && fileSeq(t, name) <= fileSeq(t, idx1) {
			t.Fatalf("the loaded log wrote %s, not above the index %s it was loaded from", name, idx1)
		}
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
// log was when it was taken, even after later compactions; that index names
// increase; and that a segment in two checkpoints has the same bytes in
// both.
func TestSuccessiveCheckpoints(t *testing.T) {
	l := openLog(t, t.TempDir(), testKGStart, testKGEnd, nil)
	w := newWorkload(20, testKGStart, testKGEnd)
	m := model{}
	var dirs []string
	var snaps []model
	var idxs []string
	for i := range 6 {
		n := 1500
		if i == 3 {
			n = 0 // a checkpoint right after another
		}
		for range n {
			w.step(t, l, m)
		}
		d, _ := checkpoint(t, l)
		dirs = append(dirs, d)
		snaps = append(snaps, cloneModel(m))
		idx := findIndex(t, d)
		if len(idxs) > 0 && fileSeq(t, idx) <= fileSeq(t, idxs[len(idxs)-1]) {
			t.Fatalf("checkpoint %d has index %s, not above the previous one's %s", i, idx, idxs[len(idxs)-1])
		}
		idxs = append(idxs, idx)
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

// TestCheckpointEmpty checkpoints a log that never held an entry and one
// whose entries were all deleted, and loads both.
func TestCheckpointEmpty(t *testing.T) {
	l := openLog(t, t.TempDir(), testKGStart, testKGEnd, nil)
	d, names := checkpoint(t, l)
	if len(names) != 1 {
		t.Fatalf("the checkpoint of an empty log holds %q, want only an index", names)
	}
	wl := loadLog(t, d, testKGStart, testKGEnd, false, nil)
	checkLog(t, wl, model{})
	if err := wl.Set(kgKey(testKGStart, 1), []byte("a")); err != nil {
		t.Fatal(err)
	}
	checkLog(t, wl, model{string(kgKey(testKGStart, 1)): []byte("a")})

	w := newWorkload(40, testKGStart, testKGEnd)
	w.bigValues = false
	for range 1000 {
		if err := l.Set(w.key(), w.value()); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.DeletePrefix(nil); err != nil {
		t.Fatal(err)
	}
	d, names = checkpoint(t, l)
	if len(names) < 3 {
		t.Fatalf("checkpoint %q: want segments of garbage and an index", names)
	}
	before := listDir(t, d)
	ro := loadLog(t, d, testKGStart, testKGEnd, true, nil)
	checkLog(t, ro, model{})
	ro.Close()
	sameDir(t, "a read-only Load", d, before)
	wl = loadLog(t, d, testKGStart, testKGEnd, false, nil)
	checkLog(t, wl, model{})
	if left := listDir(t, d); len(left) != 0 {
		t.Fatalf("a writable Load of a log of no entries left %v in its directory, want nothing", left)
	}
}

// corruptCase damages a copy of a checkpoint and says what the error of Load
// must name.
type corruptCase struct {
	name string
	// damage changes dir and returns the name of the index to load (""
	// for the one FindIndex returns) and the file the error must name.
	damage func(t *testing.T, dir string, segs []string, idx string) (index, names string)
	// corrupt says whether the error wraps ErrCorrupt.
	corrupt bool
}

// TestLoadCorrupt damages copies of a checkpoint in several ways and checks
// that Load, read-only and writable, fails with an error naming the damaged
// file (wrapping ErrCorrupt where bytes do not check) and leaves the
// directory as it was.
func TestLoadCorrupt(t *testing.T) {
	src := t.TempDir()
	l := openLog(t, src, testKGStart, testKGEnd, nil)
	for i := range 600 {
		// Distinct keys: every record is live, so that every damaged
		// record is read by Load.
		k := kgKey(testKGStart+i%(testKGEnd-testKGStart), byte(i>>8), byte(i))
		if err := l.Set(k, bytes.Repeat([]byte{byte(i)}, 300+i%200)); err != nil {
			t.Fatal(err)
		}
	}
	cp, names := checkpoint(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var segs []string
	for _, n := range names {
		if strings.HasSuffix(n, ".seg") {
			segs = append(segs, n)
		}
	}
	if len(segs) < 3 {
		t.Fatalf("checkpoint %q: the test needs 3 segments", names)
	}
	truncate := func(size func(int64) int64) func(t *testing.T, dir string, segs []string, idx string) (string, string) {
		return func(t *testing.T, dir string, segs []string, idx string) (string, string) {
			p := filepath.Join(dir, idx)
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, size(st.Size())); err != nil {
				t.Fatal(err)
			}
			return "", idx
		}
	}
	cases := []corruptCase{
		{"segment record byte", func(t *testing.T, dir string, segs []string, idx string) (string, string) {
			flipByte(t, filepath.Join(dir, segs[1]), -1)
			return "", segs[1]
		}, true},
		{"last segment record byte", func(t *testing.T, dir string, segs []string, idx string) (string, string) {
			p := filepath.Join(dir, segs[len(segs)-1])
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			flipByte(t, p, st.Size()-1)
			return "", segs[len(segs)-1]
		}, true},
		{"segment header byte", func(t *testing.T, dir string, segs []string, idx string) (string, string) {
			flipByte(t, filepath.Join(dir, segs[0]), 3)
			return "", segs[0]
		}, true},
		{"segment sequence in header", func(t *testing.T, dir string, segs []string, idx string) (string, string) {
			flipByte(t, filepath.Join(dir, segs[0]), 8)
			return "", segs[0]
		}, true},
		{"segment truncated", func(t *testing.T, dir string, segs []string, idx string) (string, string) {
			p := filepath.Join(dir, segs[1])
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, st.Size()/2); err != nil {
				t.Fatal(err)
			}
			return "", segs[1]
		}, true},
		{"segment of another sequence number", func(t *testing.T, dir string, segs []string, idx string) (string, string) {
			data, err := os.ReadFile(filepath.Join(dir, segs[0]))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, segs[1]), data, 0o644); err != nil {
				t.Fatal(err)
			}
			return "", segs[1]
		}, true},
		{"segment missing", func(t *testing.T, dir string, segs []string, idx string) (string, string) {
			if err := os.Remove(filepath.Join(dir, segs[1])); err != nil {
				t.Fatal(err)
			}
			return "", segs[1]
		}, false},
		{"index byte", func(t *testing.T, dir string, segs []string, idx string) (string, string) {
			flipByte(t, filepath.Join(dir, idx), -1)
			return "", idx
		}, true},
		{"index magic", func(t *testing.T, dir string, segs []string, idx string) (string, string) {
			flipByte(t, filepath.Join(dir, idx), 0)
			return "", idx
		}, true},
		{"index truncated by a byte", truncate(func(n int64) int64 { return n - 1 }), true},
		{"index truncated to half", truncate(func(n int64) int64 { return n / 2 }), true},
		{"index truncated to its header", truncate(func(int64) int64 { return 12 }), true},
		{"index empty", truncate(func(int64) int64 { return 0 }), true},
		{"index grown", func(t *testing.T, dir string, segs []string, idx string) (string, string) {
			f, err := os.OpenFile(filepath.Join(dir, idx), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(make([]byte, 8)); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			return "", idx
		}, true},
		{"index missing", func(t *testing.T, dir string, segs []string, idx string) (string, string) {
			if err := os.Remove(filepath.Join(dir, idx)); err != nil {
				t.Fatal(err)
			}
			return idx, idx
		}, false},
		{"not an index name", func(t *testing.T, dir string, segs []string, idx string) (string, string) {
			return segs[0], segs[0]
		}, false},
	}
	for _, c := range cases {
		for _, readOnly := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/readOnly=%v", c.name, readOnly), func(t *testing.T) {
				dir := copyDir(t, cp)
				idx := findIndex(t, dir)
				index, want := c.damage(t, dir, segs, idx)
				if index == "" {
					index = findIndex(t, dir)
				}
				before := listDir(t, dir)
				l, err := hashlog.Load(dir, index, testKGStart, testKGEnd, testOptions(nil), readOnly)
				if err == nil {
					l.Close()
					t.Fatalf("Load succeeded, want an error naming %s", want)
				}
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("Load: %v; want an error naming %s", err, want)
				}
				if c.corrupt && !errorsIsCorrupt(err) {
					t.Fatalf("Load: %v; want an error wrapping ErrCorrupt", err)
				}
				sameDir(t, "a failed Load", dir, before)
			})
		}
	}

	// A directory of two index files, or none.
	dir := copyDir(t, cp)
	idx := findIndex(t, dir)
	other := fmt.Sprintf("vlog-%06d.idx", fileSeq(t, idx)+1)
	data, err := os.ReadFile(filepath.Join(dir, idx))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, other), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if name, ok, err := hashlog.FindIndex(dir); err == nil {
		t.Fatalf("FindIndex of a directory with two index files = %q, %v, nil; want an error", name, ok)
	}
	if name, ok, err := hashlog.FindIndex(t.TempDir()); ok || err != nil {
		t.Fatalf("FindIndex of an empty directory = %q, %v, %v; want no index, no error", name, ok, err)
	}
	// The undamaged checkpoint loads.
	ro := loadLog(t, cp, testKGStart, testKGEnd, true, nil)
	if ro.Len() != 600 {
		t.Fatalf("Len() = %d, want 600", ro.Len())
	}
}
