package pebble

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eddystream/eddy/internal/checkpoint"
	"github.com/eddystream/eddy/internal/state"
)

// snapshot takes snapshot id of b into storage d and returns it.
func snapshot(t *testing.T, b *Backend, d *checkpoint.Dir, id int64) *checkpoint.BackendState {
	t.Helper()
	done, err := b.Snapshot(id, d, "shared/op")
	if err != nil {
		t.Fatal(err)
	}
	st, err := done()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// restorable turns a snapshot as taken into one as a restore gets it.
func restorable(d *checkpoint.Dir, st *checkpoint.BackendState) *checkpoint.BackendState {
	out := *st
	out.Files = nil
	for _, f := range st.Files {
		if f.Shared != "" {
			f.Path = d.SharedPath(f.Shared)
		}
		out.Files = append(out.Files, f)
	}
	return &out
}

func uploaded(st *checkpoint.BackendState) (up, shared int) {
	for _, f := range st.Files {
		if f.Shared != "" {
			shared++
			if f.Uploaded {
				up++
			}
		}
	}
	return
}

func TestSnapshotsReuseFilesOfCompletedCheckpoints(t *testing.T) {
	d, err := checkpoint.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	all := state.KeyGroupRange{Start: 0, End: 8}
	b, err := Open(filepath.Join(t.TempDir(), "db"), all, 8, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	fill(t, b, 0, 2000, "a")
	s1 := snapshot(t, b, d, 1)
	if up, sh := uploaded(s1); up == 0 || up != sh {
		t.Fatalf("first snapshot uploaded %d of %d shared files, want all", up, sh)
	}
	// Snapshot 1 has not completed: snapshot 2, of the same files, uploads
	// them again.
	s2 := snapshot(t, b, d, 2)
	if up, sh := uploaded(s2); up != sh {
		t.Fatalf("snapshot after an incomplete one reused files: %d of %d uploaded", up, sh)
	}
	b.CheckpointComplete(2)
	fill(t, b, 2000, 2100, "c")
	s3 := snapshot(t, b, d, 3)
	// Every file of snapshot 3 that completed checkpoint 2 holds is reused
	// (unless a compaction replaced them all, which the small data here
	// makes unlikely, the new SST alone is uploaded).
	keys2 := map[string]string{}
	for _, f := range s2.Files {
		keys2[f.Name] = f.Shared
	}
	reused := 0
	for _, f := range s3.Files {
		if key, ok := keys2[f.Name]; ok && f.Shared != "" {
			if f.Uploaded || f.Shared != key {
				t.Errorf("snapshot 3 uploads %s again, which completed checkpoint 2 holds as %s", f.Name, key)
			}
			reused++
		}
	}
	if up, sh := uploaded(s3); up == 0 || up+reused != sh {
		t.Errorf("snapshot 3 uploaded %d and reused %d of %d shared files", up, reused, sh)
	}
	want := contents(t, b)

	// Restore in place, and at two subtasks (rescale from one snapshot).
	r, err := RestoreSnapshots(filepath.Join(t.TempDir(), "r"), []*checkpoint.BackendState{restorable(d, s3)}, all, 8, Options{}, d)
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(t, r); !maps.EqualFunc(got, want, func(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }) {
		t.Fatalf("restored state differs")
	}
	// The restored backend knows the restored files as stored, and its
	// first snapshot reuses those still live (compactions after the
	// restore may have replaced some, which are then uploaded anew).
	if _, sh := uploaded(s3); len(r.inc.confirmed) != sh {
		t.Errorf("after restore %d files are known as stored, want the %d of the checkpoint", len(r.inc.confirmed), sh)
	}
	s4 := snapshot(t, r, d, 4)
	names3 := map[string]string{}
	for _, f := range s3.Files {
		names3[f.Name] = f.Shared
	}
	for _, f := range s4.Files {
		if key, ok := names3[f.Name]; ok && f.Shared != "" && (f.Uploaded || f.Shared != key) {
			t.Errorf("after restore, %s was uploaded again as %s", f.Name, f.Shared)
		}
	}
	r.Close()
	half := state.KeyGroupRange{Start: 4, End: 8}
	r2, err := RestoreSnapshots(filepath.Join(t.TempDir(), "r2"), []*checkpoint.BackendState{restorable(d, s3)}, half, 8, Options{}, d)
	if err != nil {
		t.Fatal(err)
	}
	got := contents(t, r2)
	r2.Close()
	for kg := range 8 {
		if half.Contains(kg) != (len(got[kg]) > 0) || half.Contains(kg) && strings.Join(got[kg], ",") != strings.Join(want[kg], ",") {
			t.Errorf("key group %d after restoring %v: %d entries, want %d", kg, half, len(got[kg]), len(want[kg]))
		}
	}
}

func TestRestoreSnapshotsErrors(t *testing.T) {
	d, _ := checkpoint.NewDir(t.TempDir())
	all := state.KeyGroupRange{Start: 0, End: 8}
	b, err := Open(filepath.Join(t.TempDir(), "db"), all, 8, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, b, 0, 500, "a")
	st := restorable(d, snapshot(t, b, d, 1))
	b.Close()

	other := *st
	other.Kind = "pebble/99"
	if _, err := RestoreSnapshots(filepath.Join(t.TempDir(), "x"), []*checkpoint.BackendState{&other}, all, 8, Options{}, d); err == nil || !strings.Contains(err.Error(), "pebble/99") {
		t.Errorf("restoring an unknown kind: %v", err)
	}
	bad := *st
	bad.Files = append([]checkpoint.BackendFile(nil), st.Files...)
	for i, f := range bad.Files {
		if f.Shared == "" {
			bad.Files[i].Data = append([]byte("x"), f.Data[1:]...)
			break
		}
	}
	if _, err := RestoreSnapshots(filepath.Join(t.TempDir(), "y"), []*checkpoint.BackendState{&bad}, all, 8, Options{}, d); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("restoring a corrupt file: %v", err)
	}
	gone := *st
	gone.Files = append([]checkpoint.BackendFile(nil), st.Files...)
	for i, f := range gone.Files {
		if f.Shared != "" {
			gone.Files[i].Path = f.Path + ".gone"
			break
		}
	}
	if _, err := RestoreSnapshots(filepath.Join(t.TempDir(), "z"), []*checkpoint.BackendState{&gone}, all, 8, Options{}, d); err == nil || !strings.Contains(err.Error(), ".gone") || !strings.Contains(err.Error(), "missing") {
		t.Errorf("restoring with a missing shared file: %v", err)
	}
}
