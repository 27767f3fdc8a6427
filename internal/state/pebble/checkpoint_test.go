package pebble

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/eddystream/eddy/internal/state"
)

// fill puts keys [from, to) into a value table "v" and a map table "m" of b,
// skipping keys outside b's key groups, and returns how many it put.
func fill(t testing.TB, b state.Backend, from, to int64, val string) int {
	t.Helper()
	vt, err := state.NewValueTable[int64, state.VoidNamespace, string](b, "v", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	mt, err := state.NewMapTable[int64, int32, string, int64](b, "m", nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for k := from; k < to; k++ {
		kg := kgOf(k, b.MaxParallelism())
		if !b.KeyGroups().Contains(kg) {
			continue
		}
		vt.Put(kg, k, state.VoidNamespace{}, val)
		mt.Put(kg, k, 1, "x", k)
		n++
	}
	return n
}

// contents returns every entry of the tables "v" and "m" of b, per key
// group, as strings.
func contents(t testing.TB, b state.Backend) map[int][]string {
	t.Helper()
	vt, err := state.NewValueTable[int64, state.VoidNamespace, string](b, "v", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	mt, err := state.NewMapTable[int64, int32, string, int64](b, "m", nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int][]string{}
	for kg := range b.MaxParallelism() {
		if !b.KeyGroups().Contains(kg) {
			continue
		}
		vt.Range(kg, func(k int64, _ state.VoidNamespace, v string) bool {
			out[kg] = append(out[kg], "v"+itoa(k)+"="+v)
			return true
		})
		mt.Range(kg, func(k int64, n int32, uk string, uv int64) bool {
			out[kg] = append(out[kg], "m"+itoa(k)+"/"+uk+"="+itoa(uv))
			return true
		})
		slices.Sort(out[kg])
	}
	return out
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

func TestCheckpointRestore(t *testing.T) {
	kgs := state.KeyGroupRange{Start: 0, End: 8}
	b := open(t, kgs, 8)
	fill(t, b, 0, 1000, "a")
	want := contents(t, b)
	ck := filepath.Join(t.TempDir(), "ck1")
	files, err := b.Checkpoint(ck)
	if err != nil {
		t.Fatal(err)
	}
	var hasManifest, hasList, hasSST bool
	for _, f := range files {
		hasManifest = hasManifest || strings.HasPrefix(f, "MANIFEST-")
		hasList = hasList || f == FileList
		hasSST = hasSST || strings.HasSuffix(f, ".sst")
		if strings.HasSuffix(f, ".log") {
			t.Errorf("checkpoint holds a WAL file %s", f)
		}
	}
	if !hasManifest || !hasList || !hasSST {
		t.Errorf("checkpoint files %v", files)
	}
	// Writes after the checkpoint are not in it.
	fill(t, b, 0, 10, "later")
	r, err := Restore(ck, kgs, 8, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := contents(t, r); !equalContents(got, want) {
		t.Errorf("restored state differs")
	}
	// Restoring a subset drops the other key groups.
	ck2 := filepath.Join(t.TempDir(), "ck2")
	if _, err := b.Checkpoint(ck2); err != nil {
		t.Fatal(err)
	}
	sub := state.KeyGroupRange{Start: 2, End: 5}
	r2, err := Restore(ck2, sub, 8, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	n := 0
	r2.Scan(nil, func(k, _ []byte) bool {
		if kg := int(k[0])<<8 | int(k[1]); !sub.Contains(kg) {
			t.Fatalf("key group %d survived restoring %v", kg, sub)
		}
		n++
		return true
	})
	if n == 0 {
		t.Error("nothing restored")
	}
	ck3 := filepath.Join(t.TempDir(), "ck3")
	if _, err := r2.Checkpoint(ck3); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(ck3, state.KeyGroupRange{Start: 0, End: 8}, 8, testOpts); err == nil || !strings.Contains(err.Error(), "Rescale") {
		t.Errorf("restoring more key groups than the checkpoint has: %v", err)
	}
}

func equalContents(a, b map[int][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for kg, ea := range a {
		if !slices.Equal(ea, b[kg]) {
			return false
		}
	}
	return true
}

func TestRestoreMissingFile(t *testing.T) {
	b := open(t, state.KeyGroupRange{Start: 0, End: 4}, 4)
	fill(t, b, 0, 100, "a")
	ck := filepath.Join(t.TempDir(), "ck")
	files, err := b.Checkpoint(ck)
	if err != nil {
		t.Fatal(err)
	}
	var sst string
	for _, f := range files {
		if strings.HasSuffix(f, ".sst") {
			sst = f
		}
	}
	os.Remove(filepath.Join(ck, sst))
	_, err = Restore(ck, b.KeyGroups(), 4, testOpts)
	if err == nil || !strings.Contains(err.Error(), "missing "+sst) || !strings.Contains(err.Error(), ck) || !strings.Contains(err.Error(), "download") {
		t.Errorf("restore with %s missing: %v", sst, err)
	}
	// A file list that omits the file: Pebble's own check at open names it.
	list, _ := os.ReadFile(filepath.Join(ck, FileList))
	var kept []string
	for _, l := range strings.Split(string(list), "\n") {
		if !strings.HasPrefix(l, sst+" ") {
			kept = append(kept, l)
		}
	}
	os.WriteFile(filepath.Join(ck, FileList), []byte(strings.Join(kept, "\n")), 0o644)
	if _, err = Restore(ck, b.KeyGroups(), 4, testOpts); err == nil || !strings.Contains(err.Error(), strings.TrimSuffix(sst, ".sst")) || !strings.Contains(err.Error(), "download") {
		t.Errorf("restore with %s missing and unlisted: %v", sst, err)
	}
	os.Remove(filepath.Join(ck, FileList))
	if _, err = Restore(ck, b.KeyGroups(), 4, testOpts); err == nil || !strings.Contains(err.Error(), "has no "+FileList) {
		t.Errorf("restore without %s: %v", FileList, err)
	}
	// A truncated file.
	ck3 := filepath.Join(t.TempDir(), "ck3")
	if _, err := b.Checkpoint(ck3); err != nil {
		t.Fatal(err)
	}
	os.Truncate(filepath.Join(ck3, sst), 10)
	if _, err = Restore(ck3, b.KeyGroups(), 4, testOpts); err == nil || !strings.Contains(err.Error(), sst) {
		t.Errorf("restore with %s truncated: %v", sst, err)
	}
}

func TestRestoreIncompatibleFormat(t *testing.T) {
	b := open(t, state.KeyGroupRange{Start: 0, End: 4}, 4)
	fill(t, b, 0, 100, "a")
	if err := b.db.Set(keyFormat, []byte("99"), noSync); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(t.TempDir(), "ck")
	if _, err := b.Checkpoint(ck); err != nil {
		t.Fatal(err)
	}
	for range 2 { // a failed restore leaves the checkpoint as it was
		_, err := Restore(ck, b.KeyGroups(), 4, testOpts)
		if err == nil || !strings.Contains(err.Error(), `format version "99"`) || !strings.Contains(err.Error(), ck) || !strings.Contains(err.Error(), "savepoint") {
			t.Errorf("restore of format 99: %v", err)
		}
	}
	// Another max parallelism.
	b.db.Set(keyFormat, strconv.AppendInt(nil, FormatVersion, 10), noSync)
	ck2 := filepath.Join(t.TempDir(), "ck2")
	if _, err := b.Checkpoint(ck2); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(ck2, b.KeyGroups(), 8, testOpts); err == nil || !strings.Contains(err.Error(), "max parallelism 4") {
		t.Errorf("restore with another max parallelism: %v", err)
	}
	if Budget().Backends != 1 {
		t.Errorf("failed restores leaked budget leases: %d backends open", Budget().Backends)
	}
}

func TestPlanUploadIncremental(t *testing.T) {
	b := open(t, state.KeyGroupRange{Start: 0, End: 4}, 4)
	fill(t, b, 0, 1000, "a")
	dir := t.TempDir()
	files1, err := b.Checkpoint(filepath.Join(dir, "1"))
	if err != nil {
		t.Fatal(err)
	}
	p1 := PlanUpload(files1, nil)
	if len(p1.Upload) != len(files1) || len(p1.Reuse) != 0 {
		t.Fatalf("first plan %+v", p1)
	}
	uploaded := map[string]string{}
	for _, f := range p1.Upload {
		if IsShared(f) {
			uploaded[f] = b.InstanceID() + "-" + f
		}
	}
	fill(t, b, 0, 10, "b")
	files2, err := b.Checkpoint(filepath.Join(dir, "2"))
	if err != nil {
		t.Fatal(err)
	}
	p2 := PlanUpload(files2, uploaded)
	if len(p2.Reuse) == 0 {
		t.Errorf("second checkpoint reuses nothing: %+v", p2)
	}
	for _, f := range p2.Upload {
		if _, ok := uploaded[f]; ok && IsShared(f) {
			t.Errorf("uploads %s again", f)
		}
	}
	for _, f := range files2 {
		if !IsShared(f) && !slices.Contains(p2.Upload, f) {
			t.Errorf("does not upload mutable file %s", f)
		}
	}
}
