package pebble

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/kv"
)

// sortedBatchCase writes keys k00..k09 directly, then through a sorted batch
// deletes k02, overwrites k03 and adds k11, and checks what Get and Scan
// see, before and after a checkpoint and restore. It returns the backend's
// ingest count.
func sortedBatchCase(t *testing.T, spill int) uint64 {
	t.Helper()
	b := open(t, state.KeyGroupRange{Start: 0, End: 1}, 1)
	b.spillOverride = spill
	want := map[string]string{}
	for i := range 10 {
		k, v := fmt.Sprintf("k%02d", i), fmt.Sprintf("v%d", i)
		b.Set([]byte(k), []byte(v))
		want[k] = v
	}
	w := b.NewSortedBatch()
	w.Delete([]byte("k02"))
	w.Set([]byte("k03"), []byte("new3"))
	w.Set([]byte("k11"), []byte("v11"))
	w.Commit()
	delete(want, "k02")
	want["k03"], want["k11"] = "new3", "v11"

	check := func(b *Backend, what string) {
		t.Helper()
		for _, k := range []string{"k00", "k02", "k03", "k09", "k11", "k12"} {
			v, ok := b.Get([]byte(k))
			if w, wok := want[k]; ok != wok || string(v) != w {
				t.Errorf("%s: Get(%s) = %q, %v; want %q, %v", what, k, v, ok, w, wok)
			}
		}
		got := map[string]string{}
		b.Scan([]byte("k"), func(k, v []byte) bool { got[string(k)] = string(v); return true })
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: Scan = %v, want %v", what, got, want)
		}
	}
	check(b, "after Commit")
	if left, _ := filepath.Glob(filepath.Join(b.Dir(), "eddy-writeback-*")); len(left) > 0 {
		t.Errorf("ingested files left in the directory: %v", left)
	}
	ck := filepath.Join(t.TempDir(), "ck")
	if _, err := b.Checkpoint(ck); err != nil {
		t.Fatal(err)
	}
	r, err := Restore(ck, b.KeyGroups(), 1, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	check(r, "restored")
	return b.ingests
}

// TestSortedBatchIngested forces a sorted batch into an SST from its first
// write: the ingested writes supersede the earlier ones, deletes included.
func TestSortedBatchIngested(t *testing.T) {
	if n := sortedBatchCase(t, 1); n != 1 {
		t.Errorf("%d ingests, want 1", n)
	}
}

// TestSortedBatchSmall keeps a sorted batch below its spill size: it is
// committed as a Pebble batch.
func TestSortedBatchSmall(t *testing.T) {
	if n := sortedBatchCase(t, 1<<20); n != 0 {
		t.Errorf("%d ingests, want 0", n)
	}
}

// TestSortedBatchOutOfOrder: a spilled batch given keys out of order panics
// with a *kv.BackendError and removes its SST.
func TestSortedBatchOutOfOrder(t *testing.T) {
	b := open(t, state.KeyGroupRange{Start: 0, End: 1}, 1)
	b.spillOverride = 1
	w := b.NewSortedBatch()
	w.Set([]byte("b"), []byte("1"))
	defer func() {
		var be *kv.BackendError
		if e, ok := recover().(error); !ok || !errors.As(e, &be) {
			t.Errorf("recovered %v, want *kv.BackendError", e)
		}
		if left, _ := filepath.Glob(filepath.Join(b.Dir(), "eddy-writeback-*")); len(left) > 0 {
			t.Errorf("the failed batch left %v", left)
		}
		if _, ok := b.Get([]byte("b")); ok {
			t.Error("a write of the failed batch is visible")
		}
	}()
	w.Set([]byte("a"), []byte("2"))
	w.Commit()
	t.Error("keys out of order did not panic")
}
