package state_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/heap"
)

// nativeSnapshot returns the native (checkpoint) snapshot of op.
func nativeSnapshot(t *testing.T, op *canonicalOp) map[int][]byte {
	t.Helper()
	encode, err := op.tables.BeginSnapshot(op.kgs, state.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return encode()
}

// TestNativeRestoreChecksKinds: the native snapshot of a heap backend
// restores into tables of the same kinds, and is refused with
// ErrIncompatibleTable, naming the state, by a table of the same name
// declared with other types (whose entries it would otherwise decode as
// those types); a snapshot whose sections carry no kind sum (written before
// they did) restores as it did.
func TestNativeRestoreChecksKinds(t *testing.T) {
	all, snap, want := filledHeapSnapshot(t, nativeSnapshot)

	same := newCanonicalOp(t, heap.New(all, canonicalMaxP))
	if err := same.tables.Restore(all, snap); err != nil {
		t.Fatalf("restore into the same tables: %v", err)
	}
	if got := same.dump(t); !slices.Equal(got, want) {
		t.Fatalf("restored state differs: %s", firstDiff(got, want))
	}

	b := heap.New(all, canonicalMaxP)
	tables := state.NewKeyedTables(b)
	if _, err := state.NewValueTable[int64, state.VoidNamespace, string](b, "void", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	var err error
	only := map[int][]byte{}
	for kg, data := range snap {
		only[kg] = nativeSections(t, kg, data, func(name string) (string, bool) {
			return name, strings.HasPrefix(name, "void\x00")
		})
	}
	err = tables.Restore(all, only)
	if !errors.Is(err, state.ErrIncompatibleTable) || !strings.Contains(err.Error(), `"void"`) || !strings.Contains(err.Error(), "value[int64,void,string]") {
		t.Fatalf("restore of value[string,void,string] into value[int64,void,string]: %v", err)
	}

	// A table whose name holds a zero byte.
	zb := heap.New(all, canonicalMaxP)
	zt := state.NewKeyedTables(zb)
	zv, err := state.NewValueTable[string, state.VoidNamespace, string](zb, "a\x00b", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	zv.Put(0, "k", state.VoidNamespace{}, "v")
	encode, err := zt.BeginSnapshot(all, state.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	zsnap := encode()
	zb2 := heap.New(all, canonicalMaxP)
	zv2, err := state.NewValueTable[string, state.VoidNamespace, string](zb2, "a\x00b", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := state.NewKeyedTables(zb2).Restore(all, zsnap); err != nil {
		t.Fatalf("restore of a table named with a zero byte: %v", err)
	}
	if v, ok := zv2.Get(0, "k", state.VoidNamespace{}); !ok || v != "v" {
		t.Fatalf("restored %q, %v; want \"v\"", v, ok)
	}

	// Sections named by their table alone, as before the kind sums.
	legacy := map[int][]byte{}
	for kg, data := range snap {
		legacy[kg] = nativeSections(t, kg, data, func(name string) (string, bool) {
			n, _, _ := strings.Cut(name, "\x00")
			return n, true
		})
	}
	old := newCanonicalOp(t, heap.New(all, canonicalMaxP))
	if err := old.tables.Restore(all, legacy); err != nil {
		t.Fatalf("restore of sections without kind sums: %v", err)
	}
	if got := old.dump(t); !slices.Equal(got, want) {
		t.Fatalf("state restored from sections without kind sums differs: %s", firstDiff(got, want))
	}
}

// nativeSections re-encodes the sections of key group kg that keep keeps,
// under the names it gives.
func nativeSections(t *testing.T, kg int, b []byte, keep func(name string) (string, bool)) []byte {
	t.Helper()
	var out []byte
	err := state.EachSection(kg, b, func(name string, data []byte) error {
		if n, ok := keep(name); ok {
			out = state.AppendSection(out, n, data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
