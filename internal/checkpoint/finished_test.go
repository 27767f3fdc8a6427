package checkpoint

import "testing"

// TestFinishedSubtasks checks that finished subtasks, with or without
// state, are marked in the metadata, and which subtasks of a restore are
// finished: all of a fully finished operator, at any parallelism; those of a
// partly finished one only at the same parallelism.
func TestFinishedSubtasks(t *testing.T) {
	d, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ops := []OperatorState{
		{UID: "done", Name: "Done", Parallelism: 2, MaxParallelism: 4, Subtasks: []*SubtaskState{
			{Finished: true},
			{Lists: map[string][][]byte{"splits": {}}, Finished: true},
		}},
		{UID: "partly", Name: "Partly", Parallelism: 2, MaxParallelism: 4, Subtasks: []*SubtaskState{
			{KeyGroups: map[int][]byte{0: []byte("a")}, Finished: true},
			{KeyGroups: map[int][]byte{2: []byte("c")}},
		}},
		{UID: "running", Name: "Running", Parallelism: 2, MaxParallelism: 4, Subtasks: []*SubtaskState{nil, nil}},
	}
	m, files := Assemble("job", 3, false, false, ops)
	ref, err := d.Write(m, files)
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.Load(ref)
	if err != nil {
		t.Fatal(err)
	}
	if op, _ := l.Metadata.Operator("done"); len(op.Subtasks) != 2 || !op.Subtasks[0].Finished || op.Subtasks[0].File != "" || !op.Subtasks[1].Finished {
		t.Fatalf("fully finished operator in the metadata: %+v", op)
	}
	cases := []struct {
		uid  string
		i, p int
		want bool
	}{
		{"done", 0, 2, true}, {"done", 1, 2, true}, {"done", 2, 3, true}, {"done", 0, 1, true},
		{"partly", 0, 2, true}, {"partly", 1, 2, false}, {"partly", 0, 3, false}, {"partly", 0, 1, false},
		{"running", 0, 2, false},
	}
	for _, c := range cases {
		lo, hi := c.i*4/c.p, (c.i+1)*4/c.p
		st, err := l.Redistribute(c.uid, c.i, c.p, lo, hi, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st.Finished != c.want {
			t.Errorf("%s subtask %d of %d: finished %v, want %v", c.uid, c.i, c.p, st.Finished, c.want)
		}
	}
	// A partly finished operator keeps the state of its finished subtask.
	st, _ := l.Redistribute("partly", 0, 1, 0, 4, nil)
	if string(st.KeyGroups[0]) != "a" || string(st.KeyGroups[2]) != "c" {
		t.Fatalf("partly finished operator restored at parallelism 1: %v", st.KeyGroups)
	}
}
