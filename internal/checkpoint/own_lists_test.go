package checkpoint

import (
	"bytes"
	"testing"
)

// TestOwnListsAtUnchangedParallelism checks that a restore at the
// parallelism of the checkpoint gives each subtask the operator-state lists
// it had itself, so that the splits of a running source subtask are not
// dealt to one that had finished and does not run again.
func TestOwnListsAtUnchangedParallelism(t *testing.T) {
	d, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ops := []OperatorState{{UID: "src", Name: "Source", Parallelism: 2, MaxParallelism: 4, Subtasks: []*SubtaskState{
		{Lists: map[string][][]byte{"splits": {}}, Finished: true},
		{Lists: map[string][][]byte{"splits": {[]byte("a"), []byte("b"), []byte("c")}}},
	}}}
	m, files := Assemble("job", 1, false, false, ops)
	ref, err := d.Write(m, files)
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.Load(ref)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"", "a,b,c"} {
		st, err := l.Redistribute("src", i, 2, i*2, i*2+2, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Join(st.Lists["splits"], []byte(",")); string(got) != want {
			t.Errorf("subtask %d restored splits %q, want %q", i, got, want)
		}
	}
	// At another parallelism the items are dealt round-robin.
	st, _ := l.Redistribute("src", 0, 3, 0, 1, nil)
	if got := bytes.Join(st.Lists["splits"], []byte(",")); string(got) != "a" {
		t.Errorf("subtask 0 of 3 restored splits %q, want %q", got, "a")
	}
}
