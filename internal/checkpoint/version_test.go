package checkpoint

import (
	"strings"
	"testing"
)

// TestFormatVersions checks the version each kind of checkpoint is written
// in: the lowest that holds what it has.
func TestFormatVersions(t *testing.T) {
	keyed := func(canonical bool) *SubtaskState {
		return &SubtaskState{KeyGroups: map[int][]byte{0: []byte("state"), 1: nil}, Canonical: canonical}
	}
	for _, c := range []struct {
		name string
		sub  *SubtaskState
		want int
	}{
		{"native keyed state", keyed(false), 1},
		{"operator lists", &SubtaskState{Lists: map[string][][]byte{"l": {[]byte("x")}}}, 1},
		{"backend snapshot", &SubtaskState{Backends: []*BackendState{{Kind: "pebble/1"}}}, 2},
		{"canonical keyed state", keyed(true), 3},
		{"canonical and backend snapshot", &SubtaskState{KeyGroups: map[int][]byte{0: []byte("timers")}, Canonical: true, Backends: []*BackendState{{Kind: "pebble/1"}}}, 3},
		{"canonical but empty", &SubtaskState{KeyGroups: map[int][]byte{0: nil}, Canonical: true}, 1},
	} {
		m, _ := Assemble("j", 1, true, false, []OperatorState{{UID: "op", Name: "op", Parallelism: 1, MaxParallelism: 2, Subtasks: []*SubtaskState{c.sub}}})
		if m.Version != c.want {
			t.Errorf("%s: written as version %d, want %d", c.name, m.Version, c.want)
		}
	}
}

// TestReadsEveryVersion checks that this eddy reads the metadata of every
// format version it or an earlier one wrote.
func TestReadsEveryVersion(t *testing.T) {
	for v := 1; v <= FormatVersion; v++ {
		m := &Metadata{Version: v, Job: "j"}
		b, err := m.encode()
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeMetadata(b)
		if err != nil || got.Version != v {
			t.Errorf("version %d: %v, %v", v, got, err)
		}
	}
}

// TestOlderReaderRefusesNewerVersion checks what a reader of versions 1 to
// 2, the eddy before canonical savepoints, says of a version 3 savepoint:
// the version it does not read and what to restore it with.
func TestOlderReaderRefusesNewerVersion(t *testing.T) {
	err := checkVersion(3, 2)
	if err == nil {
		t.Fatal("a reader of versions 1 to 2 accepts version 3")
	}
	for _, want := range []string{"format version 3", "reads versions 1 to 2", "with an eddy that reads version 3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if err := checkVersion(0, FormatVersion); err == nil {
		t.Error("version 0 accepted")
	}
}
