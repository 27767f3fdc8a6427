package heap_test

import (
	"errors"
	"testing"

	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/heap"
	"github.com/eddystream/eddy/internal/state/statetest"
)

func TestConformance(t *testing.T) {
	statetest.Run(t, func(t *testing.T, kgs state.KeyGroupRange, maxP int) state.Backend {
		return heap.New(kgs, maxP)
	})
}

func TestRegisterTable(t *testing.T) {
	b := heap.New(state.KeyGroupRange{Start: 0, End: 4}, 4)
	ts := state.NewTimerService[int64, state.VoidNamespace](b.KeyGroups(), nil, nil)
	if err := b.RegisterTable("timers", ts); err != nil {
		t.Fatal(err)
	}
	other := state.NewTimerService[string, state.VoidNamespace](b.KeyGroups(), nil, nil)
	if err := b.RegisterTable("timers", other); !errors.Is(err, state.ErrIncompatibleTable) {
		t.Errorf("registering another kind under a name: %v", err)
	}
	if got, ok := b.Table("timers"); !ok || got != state.ObjectTable(ts) {
		t.Error("Table does not return the registered table")
	}
}

func TestNewPanicsOnBadRange(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New accepted key groups beyond max parallelism")
		}
	}()
	heap.New(state.KeyGroupRange{Start: 0, End: 9}, 8)
}

func BenchmarkHeap(b *testing.B) {
	statetest.Bench(b, func(kgs state.KeyGroupRange, maxP int) state.Backend { return heap.New(kgs, maxP) })
}
