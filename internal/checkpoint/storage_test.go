package checkpoint

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sampleState() []OperatorState {
	return []OperatorState{
		{UID: "src", Name: "Source", Parallelism: 2, MaxParallelism: 128, Subtasks: []*SubtaskState{
			{Lists: map[string][][]byte{"splits": {[]byte("s0"), []byte("s2")}}},
			{Lists: map[string][][]byte{"splits": {[]byte("s1")}}},
		}},
		{UID: "win", Name: "Window", Parallelism: 2, MaxParallelism: 4, Subtasks: []*SubtaskState{
			{KeyGroups: map[int][]byte{0: []byte("kg0"), 1: []byte("kg1")}},
			{KeyGroups: map[int][]byte{2: []byte("kg2"), 3: []byte("kg3")}},
		}},
	}
}

func TestWriteLoadRedistribute(t *testing.T) {
	d, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m, files := Assemble("job", 7, false, false, sampleState())
	ref, err := d.Write(m, files)
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.Load(ref)
	if err != nil {
		t.Fatal(err)
	}
	if l.Metadata.ID != 7 || len(l.Metadata.Operators) != 2 {
		t.Fatalf("metadata: %+v", l.Metadata)
	}
	// Rescale the window from 2 to 3 subtasks: key groups [0,2) [2,3) [3,4).
	for i, want := range []string{"kg0kg1", "kg2", "kg3"} {
		lo, hi := []int{0, 2, 3}[i], []int{2, 3, 4}[i]
		st, err := l.Redistribute("win", i, 3, lo, hi, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		for kg := lo; kg < hi; kg++ {
			got = append(got, st.KeyGroups[kg]...)
		}
		if string(got) != want {
			t.Fatalf("subtask %d got %q want %q", i, got, want)
		}
	}
	// Splits dealt round-robin to 1 subtask: all of them.
	st, _ := l.Redistribute("src", 0, 1, 0, 128, nil)
	if got := bytes.Join(st.Lists["splits"], []byte(",")); string(got) != "s0,s2,s1" {
		t.Fatalf("splits %q", got)
	}
	// And to 3: one each.
	st, _ = l.Redistribute("src", 2, 3, 0, 0, nil)
	if len(st.Lists["splits"]) != 1 || string(st.Lists["splits"][0]) != "s1" {
		t.Fatalf("split share %q", st.Lists["splits"])
	}
	st, _ = l.Redistribute("src", 2, 3, 0, 0, map[string]bool{"splits": true})
	if len(st.Lists["splits"]) != 3 {
		t.Fatalf("union share %q", st.Lists["splits"])
	}
}

func TestCorruptCheckpointsAreDetectedAndSkipped(t *testing.T) {
	d, _ := NewDir(t.TempDir())
	for id := int64(1); id <= 3; id++ {
		m, files := Assemble("job", id, false, false, sampleState())
		if _, err := d.Write(m, files); err != nil {
			t.Fatal(err)
		}
	}
	refs, _ := d.List()
	if len(refs) != 3 || refs[0].ID != 3 {
		t.Fatalf("refs %v", refs)
	}
	// Truncate a state file of checkpoint 3, flip a byte in checkpoint 2.
	st3 := filepath.Join(refs[0].Path, "op001-win-1.state")
	if err := os.Truncate(st3, 2); err != nil {
		t.Fatal(err)
	}
	st2 := filepath.Join(refs[1].Path, "op000-src-0.state")
	b, _ := os.ReadFile(st2)
	b[0] ^= 0xff
	os.WriteFile(st2, b, 0o644)
	if _, err := d.Load(refs[0]); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("truncated file: %v", err)
	}
	if _, err := d.Load(refs[1]); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("flipped byte: %v", err)
	}
	var logs bytes.Buffer
	l, err := LatestValid(d, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil || l == nil || l.Metadata.ID != 1 {
		t.Fatalf("fallback: %v %v", l, err)
	}
	if !strings.Contains(logs.String(), "chk-000003") || !strings.Contains(logs.String(), "chk-000002") {
		t.Fatalf("skips not logged: %s", logs.String())
	}
	// A metadata file cut short is not a checkpoint either.
	meta := filepath.Join(refs[2].Path, MetadataFile)
	mb, _ := os.ReadFile(meta)
	os.WriteFile(meta, mb[:len(mb)/2], 0o644)
	if _, err := d.Load(refs[2]); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated metadata: %v", err)
	}
	if l, _ := LatestValid(d, slog.New(slog.NewTextHandler(&logs, nil))); l != nil {
		t.Fatalf("loaded %v from corrupt checkpoints", l.Ref)
	}
}

func TestRetain(t *testing.T) {
	d, _ := NewDir(t.TempDir())
	for id := int64(1); id <= 5; id++ {
		m, files := Assemble("job", id, false, false, sampleState())
		d.Write(m, files)
	}
	os.MkdirAll(filepath.Join(d.Path(), "chk-000000"), 0o755) // incomplete
	if err := Retain(d, 2); err != nil {
		t.Fatal(err)
	}
	refs, _ := d.List()
	if len(refs) != 2 || refs[0].ID != 5 || refs[1].ID != 4 {
		t.Fatalf("retained %v", refs)
	}
	if _, err := os.Stat(filepath.Join(d.Path(), "chk-000000")); err == nil {
		t.Fatal("incomplete checkpoint directory kept")
	}
}

func TestUnknownVersionIsRefused(t *testing.T) {
	m := &Metadata{Version: 99, Job: "j"}
	b, _ := m.encode()
	if _, err := decodeMetadata(b); err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Fatalf("got %v", err)
	}
}

func TestLockDirIsExclusive(t *testing.T) {
	dir := t.TempDir()
	l, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockDir(dir); err == nil || !strings.Contains(err.Error(), "in use by another running job") {
		t.Fatalf("second lock: %v", err)
	}
	l.Unlock()
	l2, err := LockDir(dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	l2.Unlock()
}
