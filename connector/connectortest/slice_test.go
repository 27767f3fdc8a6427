package connectortest

import (
	"fmt"
	"testing"

	"github.com/eddystream/eddy/connector"
)

type numbered struct {
	Split int
	N     int64
}

// TestSliceSourceConformance runs the suite on its own input source, with
// the expected output given and taken from a full read.
func TestSliceSourceConformance(t *testing.T) {
	var data []numbered
	for i := 0; i < 5000; i++ {
		data = append(data, numbered{Split: i * 2 / 5000, N: int64(i)})
	}
	open := func(testing.TB) (connector.Source[numbered], func()) { return newSliceSource(data, 0), nil }
	t.Run("want given", func(t *testing.T) {
		RunSource(t, SourceCase[numbered]{Open: open, Want: data, Seq: func(v numbered) int64 { return v.N }})
	})
	t.Run("reference from a full read", func(t *testing.T) {
		RunSource(t, SourceCase[numbered]{Open: open, Key: func(v numbered) string { return fmt.Sprint(v.N) }, PauseAfter: 1234})
	})
}

func TestMultisetDiff(t *testing.T) {
	k := keyOf[int](nil)
	if d := multisetDiff([]int{1, 2, 2, 3}, []int{3, 2, 1, 2}, k); d != "" {
		t.Errorf("equal multisets differ: %s", d)
	}
	if d := multisetDiff([]int{1, 2, 2}, []int{1, 2}, k); d == "" {
		t.Error("a duplicate went unnoticed")
	}
	if d := multisetDiff([]int{1}, []int{1, 2}, k); d == "" {
		t.Error("a missing record went unnoticed")
	}
	if d := subsetDiff([]int{1, 2}, []int{1, 2, 2, 3}, k); d != "" {
		t.Errorf("a subset is not one: %s", d)
	}
	if d := subsetDiff([]int{1, 1}, []int{1, 2}, k); d == "" {
		t.Error("a record beyond the superset went unnoticed")
	}
}

func TestMemorySinkChecksTheCommitterContract(t *testing.T) {
	m := NewMemorySink[int]()
	c := memCommitter[int]{m}
	tx, _ := c.Begin()
	if err := c.Write(&tx, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(tx); err == nil {
		t.Error("a commit before the pre-commit was accepted")
	}
	if err := c.PreCommit(&tx); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(&tx, 2); err == nil {
		t.Error("a write after the pre-commit was accepted")
	}
	clone := m.Clone()
	if err := c.Commit(tx); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(tx); err != nil {
		t.Errorf("a second commit is not idempotent: %v", err)
	}
	if err := c.Abort(tx); err == nil {
		t.Error("the abort of a committed transaction was accepted")
	}
	if got := m.Committed(); len(got) != 1 || got[0] != 1 {
		t.Errorf("committed %v, want [1]", got)
	}
	if len(m.Problems()) != 3 {
		t.Errorf("problems %q, want 3", m.Problems())
	}
	// The clone still holds the pre-committed transaction; Recover keeps
	// it when the checkpoint lists it, and discards the others.
	cc := memCommitter[int]{clone}
	other, _ := cc.Begin()
	if err := cc.Recover([]MemoryTx{tx}, nil); err != nil {
		t.Fatal(err)
	}
	if err := cc.Commit(tx); err != nil {
		t.Errorf("the commit of a recovered transaction failed: %v", err)
	}
	if err := cc.Commit(other); err == nil {
		t.Error("the commit of a leftover transaction discarded by Recover was accepted")
	}
}
