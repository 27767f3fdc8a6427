package state_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/agg"
	istate "github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/heap"
	"github.com/eddystream/eddy/state"
)

// newStore returns a store on a heap backend with a fake clock, and the key
// context the test sets.
func newStore(now *int64) (state.Store[string], *istate.KeyContext[string]) {
	kc := &istate.KeyContext[string]{}
	b := heap.New(istate.KeyGroupRange{Start: 0, End: 1}, 1)
	return istate.NewStore(b, kc, func() int64 { return *now }, nil), kc
}

func TestDeclareAndUse(t *testing.T) {
	var now int64
	s, kc := newStore(&now)
	v := state.NewValue(s, state.ValueDescriptor[int]{Name: "v"})
	l := state.NewList(s, state.ListDescriptor[string]{Name: "l", TTL: state.TTLConfig{TTL: time.Second}})
	m := state.NewMap(s, state.MapDescriptor[string, float64]{Name: "m"})
	r := state.NewReducing(s, state.ReducingDescriptor[int]{Name: "r", Reduce: func(a, b int) int { return max(a, b) }})
	a := state.NewAggregating(s, state.AggregatingDescriptor[float64, agg.AvgAcc, float64]{Name: "a", Function: agg.Avg(func(f float64) float64 { return f })})

	kc.Key = "k"
	v.Update(3)
	l.Add("x")
	m.Put("p", 1.5)
	r.Add(4)
	r.Add(2)
	a.Add(1)
	a.Add(2)
	if got, _ := v.Value(); got != 3 {
		t.Errorf("value %d", got)
	}
	if got := l.Get(); !slices.Equal(got, []string{"x"}) {
		t.Errorf("list %v", got)
	}
	if got, _ := m.Get("p"); got != 1.5 {
		t.Errorf("map %v", got)
	}
	if got, _ := r.Get(); got != 4 {
		t.Errorf("reducing %d", got)
	}
	if got, _ := a.Get(); got != 1.5 {
		t.Errorf("aggregating %v", got)
	}
	now = 1000
	if got := l.Get(); got != nil {
		t.Errorf("list after its TTL: %v", got)
	}
}

func TestDeclarationPanics(t *testing.T) {
	var now int64
	s, _ := newStore(&now)
	state.NewValue(s, state.ValueDescriptor[int]{Name: "x"})
	for name, declare := range map[string]func(){
		"other type":        func() { state.NewValue(s, state.ValueDescriptor[string]{Name: "x"}) },
		"no reduce":         func() { state.NewReducing(s, state.ReducingDescriptor[int]{Name: "r"}) },
		"no function":       func() { state.NewAggregating(s, state.AggregatingDescriptor[int, int64, int64]{Name: "a"}) },
		"no codec":          func() { state.NewList(s, state.ListDescriptor[any]{Name: "l"}) },
		"bad TTL":           func() { state.NewMap(s, state.MapDescriptor[int, int]{Name: "m", TTL: state.TTLConfig{TTL: -1}}) },
		"map on value name": func() { state.NewMap(s, state.MapDescriptor[int, int]{Name: "x"}) },
	} {
		func() {
			defer func() {
				r := recover()
				err, ok := r.(error)
				if !ok {
					t.Errorf("%s: panic value %v is not an error", name, r)
					return
				}
				if !strings.HasPrefix(err.Error(), "state: declaring ") {
					t.Errorf("%s: panic %q does not say which state", name, err)
				}
				if strings.HasPrefix(name, "other") && !errors.Is(err, istate.ErrIncompatibleTable) {
					t.Errorf("%s: %v does not wrap ErrIncompatibleTable", name, err)
				}
			}()
			declare()
		}()
	}
}

// Example declares keyed state as a user function does in Open and uses it
// for two keys.
func Example() {
	// The runtime makes the store; a test makes one on a heap backend.
	kc := &istate.KeyContext[string]{}
	s := istate.NewStore(heap.New(istate.KeyGroupRange{Start: 0, End: 1}, 1), kc, nil, nil)

	count := state.NewValue(s, state.ValueDescriptor[int64]{Name: "count"})
	seen := state.NewMap(s, state.MapDescriptor[string, bool]{Name: "seen"})

	for _, rec := range []struct{ user, page string }{{"ann", "/a"}, {"bob", "/a"}, {"ann", "/b"}, {"ann", "/a"}} {
		kc.Key = rec.user // the runtime sets the key (and its key group) per record
		if seen.Contains(rec.page) {
			continue
		}
		seen.Put(rec.page, true)
		n, _ := count.Value()
		count.Update(n + 1)
	}
	for _, user := range []string{"ann", "bob"} {
		kc.Key = user
		n, _ := count.Value()
		fmt.Println(user, n)
	}
	// Output:
	// ann 2
	// bob 1
}
