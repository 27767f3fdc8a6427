package ops

import (
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/internal/ops/opstest"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/window"
)

// newHalfWindow returns a tumbling count window running as subtask 0 of 2
// (key groups [0,64)), emitting into col.
func newHalfWindow(t *testing.T, col *collector) *PaneWindow[string, opstest.Record, int64, result] {
	t.Helper()
	h := opstest.New("window")
	ctx := runtime.NewContext("window", 0, 2, opstest.MaxParallelism, func() int64 { return 0 }, func(int64, func(int64) error) {})
	logic := WindowLogic[string, opstest.Record, int64, result]{
		Create: func() int64 { return 0 },
		Add:    func(acc int64, _ opstest.Record) int64 { return acc + 1 },
		Merge:  func(a, b int64) int64 { return a + b },
		Fire: func(key string, w window.Window, accs []int64, emit func(result)) error {
			emit(result{key: key, win: w, count: accs[0]})
			return nil
		},
	}
	w, err := NewPaneWindow(ctx, recordKey(), h.Backend, WindowOptions{Assigner: window.Tumbling(10 * time.Millisecond)},
		logic, map[string]any{"": runtime.Input[result](col)})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// keyOutside returns a key whose key group is not in [0,64).
func keyOutside() string {
	spec := recordKey()
	for i := 0; ; i++ {
		k := string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		if state.KeyGroupOf(spec.Hash(k), opstest.MaxParallelism) >= 64 {
			return k
		}
	}
}

// TestKeyedOperatorUsesTheExchangeKeyGroups checks that a keyed operator
// takes the key group of each record from the batch when the hash exchange
// sent it (so it does not hash the key again) and hashes the key when the
// batch has none: a record that hashes outside the subtask's key groups is
// accepted under the key group the batch gives, refused without one, and a
// key group outside the subtask's is refused either way.
func TestKeyedOperatorUsesTheExchangeKeyGroups(t *testing.T) {
	outside := keyOutside()
	refused := func(name string, b *runtime.Batch[opstest.Record]) {
		t.Helper()
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), "reached subtask 0 owning [0,64)") {
				t.Errorf("%s: recovered %v, want the key group refused", name, r)
			}
		}()
		newHalfWindow(t, &collector{step: new(int)}).ProcessBatch(b)
	}
	b := runtime.NewBatch[opstest.Record](1)
	b.Append(opstest.Record{Key: outside, Val: 1}, 1)
	refused("no key group, key hashed outside", b)

	b.KG = append(b.KG, 5)
	col := &collector{step: new(int)}
	w := newHalfWindow(t, col)
	if err := w.ProcessBatch(b); err != nil {
		t.Fatal(err)
	}
	if err := w.ProcessWatermark(runtime.MaxWatermark); err != nil {
		t.Fatal(err)
	}
	if len(col.out) != 1 || col.out[0].key != outside || col.out[0].count != 1 {
		t.Fatalf("with key group 5 from the exchange: %v", col.out)
	}

	b.KG[0] = 100
	refused("key group 100 from the exchange", b)
}
