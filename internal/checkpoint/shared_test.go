package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeBackendCheckpoint writes checkpoint id whose two subtasks each hold
// a backend snapshot: a private file and the given shared files, uploaded
// from local copies.
func writeBackendCheckpoint(t *testing.T, d *Dir, id int64, shared [2][]string) *Metadata {
	t.Helper()
	op := OperatorState{UID: "win", Name: "Window", Parallelism: 2, MaxParallelism: 4, Subtasks: make([]*SubtaskState, 2)}
	for i := range 2 {
		bs := &BackendState{Kind: "test/1", KeyGroupStart: 2 * i, KeyGroupEnd: 2*i + 2}
		data := []byte("manifest of subtask " + string(rune('0'+i)))
		bs.Files = append(bs.Files, BackendFile{Name: "MANIFEST", Size: int64(len(data)), CRC32C: Checksum(data), Data: data})
		for _, key := range shared[i] {
			src := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(src, []byte("content of "+key), 0o644); err != nil {
				t.Fatal(err)
			}
			size, crc, err := d.Upload(key, src)
			if err != nil {
				t.Fatal(err)
			}
			if size != int64(len("content of "+key)) || crc != Checksum([]byte("content of "+key)) {
				t.Fatalf("Upload returned size %d crc %08x", size, crc)
			}
			bs.Files = append(bs.Files, BackendFile{Name: filepath.Base(key), Size: size, CRC32C: crc, Shared: key, Uploaded: true})
		}
		op.Subtasks[i] = &SubtaskState{Backends: []*BackendState{bs}, KeyGroups: map[int][]byte{2 * i: []byte("timers")}}
	}
	m, files := Assemble("job", id, false, false, []OperatorState{op})
	if _, err := d.Write(m, files); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestBackendStateRoundTrip(t *testing.T) {
	d, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := writeBackendCheckpoint(t, d, 1, [2][]string{{"shared/win/a-1.sst"}, {"shared/win/b-1.sst", "shared/win/b-2.sst"}})
	if m.Version != 2 {
		t.Errorf("a checkpoint with backend files is written as version %d, want 2", m.Version)
	}
	refs, _ := d.List()
	l, err := d.Load(refs[0])
	if err != nil {
		t.Fatal(err)
	}
	// Subtask 0 of parallelism 1 needs both snapshots; subtask 1 of
	// parallelism 4 ([1,2)) only the first.
	st, err := l.Redistribute("win", 0, 1, 0, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Backends) != 2 || len(st.Backends[1].Files) != 3 {
		t.Fatalf("redistributed backends: %+v", st.Backends)
	}
	for _, f := range st.Backends[1].Files {
		if f.Shared == "" {
			if string(f.Data) != "manifest of subtask 1" {
				t.Errorf("private file data %q", f.Data)
			}
			continue
		}
		b, err := os.ReadFile(f.Path)
		if err != nil || string(b) != "content of "+f.Shared {
			t.Errorf("shared file %s at %s: %q, %v", f.Shared, f.Path, b, err)
		}
	}
	st, _ = l.Redistribute("win", 1, 4, 1, 2, nil)
	if len(st.Backends) != 1 || st.Backends[0].KeyGroupStart != 0 {
		t.Fatalf("subtask owning [1,2) got %+v", st.Backends)
	}
}

func TestMissingSharedFileFailsLoad(t *testing.T) {
	root := t.TempDir()
	d, _ := NewDir(root)
	writeBackendCheckpoint(t, d, 1, [2][]string{{"shared/win/a-1.sst"}, nil})
	victim := filepath.Join(root, "shared", "win", "a-1.sst")
	if err := os.Remove(victim); err != nil {
		t.Fatal(err)
	}
	refs, _ := d.List()
	_, err := d.Load(refs[0])
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), victim) || !strings.Contains(err.Error(), "restore from an earlier checkpoint") {
		t.Fatalf("err = %v, want ErrCorrupt naming %s and the way out", err, victim)
	}
	// A truncated one too.
	writeBackendCheckpoint(t, d, 2, [2][]string{{"shared/win/c-1.sst"}, nil})
	if err := os.WriteFile(filepath.Join(root, "shared", "win", "c-1.sst"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	refs, _ = d.List()
	if _, err := d.Load(refs[0]); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("err = %v, want a truncated shared file", err)
	}
}

func TestRetainDeletesUnreferencedSharedFiles(t *testing.T) {
	root := t.TempDir()
	d, _ := NewDir(root)
	writeBackendCheckpoint(t, d, 1, [2][]string{{"shared/win/a-1.sst", "shared/win/a-2.sst"}, {"shared/win/b-1.sst"}})
	writeBackendCheckpoint(t, d, 2, [2][]string{{"shared/win/a-2.sst", "shared/win/a-3.sst"}, {"shared/win/b-1.sst"}})
	writeBackendCheckpoint(t, d, 3, [2][]string{{"shared/win/a-3.sst"}, {"shared/win/b-1.sst", "shared/win/b-2.sst"}})
	// A leftover of a checkpoint that never completed.
	if _, _, err := d.Upload("shared/win/z-9.sst", filepath.Join(root, "chk-000003", MetadataFile)); err != nil {
		t.Fatal(err)
	}
	list := func() []string {
		var out []string
		filepath.WalkDir(filepath.Join(root, "shared"), func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				rel, _ := filepath.Rel(root, p)
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		})
		slices.Sort(out)
		return out
	}
	if err := Retain(d, 2); err != nil {
		t.Fatal(err)
	}
	want := []string{"shared/win/a-2.sst", "shared/win/a-3.sst", "shared/win/b-1.sst", "shared/win/b-2.sst"}
	if got := list(); !slices.Equal(got, want) {
		t.Fatalf("after keeping checkpoints 2 and 3: %v, want %v", got, want)
	}
	if err := Retain(d, 1); err != nil {
		t.Fatal(err)
	}
	want = []string{"shared/win/a-3.sst", "shared/win/b-1.sst", "shared/win/b-2.sst"}
	if got := list(); !slices.Equal(got, want) {
		t.Fatalf("after keeping checkpoint 3: %v, want %v", got, want)
	}
	// Unreadable metadata: nothing is deleted.
	if err := os.WriteFile(filepath.Join(root, "chk-000003", MetadataFile), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := SweepShared(d); err == nil {
		t.Fatal("SweepShared with unreadable metadata succeeded")
	}
	if got := list(); !slices.Equal(got, want) {
		t.Fatalf("SweepShared deleted files despite unreadable metadata: %v", got)
	}
}

func TestUploadRejectsBadKeys(t *testing.T) {
	d, _ := NewDir(t.TempDir())
	src := filepath.Join(t.TempDir(), "f")
	os.WriteFile(src, []byte("x"), 0o644)
	for _, key := range []string{"", "/abs", "shared/../x", "shared//x", "other/x"} {
		if _, _, err := d.Upload(key, src); err == nil {
			t.Errorf("Upload(%q) succeeded", key)
		}
	}
}
