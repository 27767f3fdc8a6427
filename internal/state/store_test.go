package state_test

import (
	"testing"
	"time"

	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/heap"
	"github.com/eddystream/eddy/internal/state/memtest"
)

func TestNewStoreDefaults(t *testing.T) {
	b := heap.New(state.KeyGroupRange{Start: 0, End: 4}, 4)
	s := state.NewStore(b, &state.KeyContext[string]{}, nil, nil)
	if now := s.Now(); now < time.Now().Add(-time.Minute).UnixMilli() {
		t.Errorf("the default clock reads %d", now)
	}
	if s.KeyCodec() == nil || s.Backend() != state.Backend(b) || s.KeyContext() == nil {
		t.Error("accessors do not return what the store was made with")
	}
	if n := s.CleanupExpired(100); n != 0 {
		t.Errorf("CleanupExpired without TTL state deleted %d", n)
	}
	defer func() {
		if recover() == nil {
			t.Error("NewStore accepted a key type without a codec")
		}
	}()
	state.NewStore(b, &state.KeyContext[any]{}, nil, nil)
}

// TestValueHandleAllocations checks that reading and updating an existing
// value allocates nothing, on both kinds of backend.
func TestValueHandleAllocations(t *testing.T) {
	for name, b := range map[string]state.Backend{
		"heap":    heap.New(state.KeyGroupRange{Start: 0, End: 4}, 4),
		"memtest": memtest.New(state.KeyGroupRange{Start: 0, End: 4}, 4),
	} {
		kc := &state.KeyContext[int64]{KG: 1, Key: 5}
		s := state.NewStore(b, kc, func() int64 { return 0 }, nil)
		h, err := state.NewValueHandle[int64, state.VoidNamespace, int64](s, nil, nil, "v", nil, state.TTLConfig{})
		if err != nil {
			t.Fatal(err)
		}
		h.Update(1)
		n := testing.AllocsPerRun(1000, func() {
			v, _ := h.Value()
			h.Update(v + 1)
		})
		if n != 0 {
			t.Errorf("%s: Value+Update allocates %v times", name, n)
		}
	}
}
