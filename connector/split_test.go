package connector_test

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/connector"
)

func randomSplits(r *rand.Rand, n int) []connector.Split {
	out := make([]connector.Split, n)
	for i := range out {
		id := make([]byte, r.IntN(40))
		for j := range id {
			id[j] = byte(r.IntN(256))
		}
		var state []byte
		if r.IntN(4) > 0 {
			state = make([]byte, r.IntN(300))
			for j := range state {
				state[j] = byte(r.IntN(256))
			}
		}
		out[i] = connector.Split{ID: string(id), State: state}
	}
	return out
}

// same compares splits, taking a nil state as an empty one.
func same(a, b []connector.Split) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || string(a[i].State) != string(b[i].State) {
			return false
		}
	}
	return true
}

func TestSplitEncodingRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		splits := randomSplits(r, r.IntN(6))
		b := connector.EncodeSplits(splits)
		got, err := connector.DecodeSplits(b)
		if err != nil || !same(got, splits) {
			t.Fatalf("round trip of %v: %v, %v", splits, got, err)
		}
		// Every proper prefix of an encoding is an error, not fewer splits.
		for k := 0; k < len(b); k++ {
			if got, err := connector.DecodeSplits(b[:k]); err == nil {
				t.Fatalf("the %d-byte prefix of a %d-byte encoding of %d splits decoded to %d splits", k, len(b), len(splits), len(got))
			}
		}
		// AppendSplit and DecodeSplit one at a time, back to back.
		var one []byte
		for _, s := range splits {
			one = connector.AppendSplit(one, s)
		}
		for _, s := range splits {
			d, n, err := connector.DecodeSplit(one)
			if err != nil || d.ID != s.ID || string(d.State) != string(s.State) {
				t.Fatalf("DecodeSplit: %v %v", d, err)
			}
			one = one[n:]
		}
		if len(one) != 0 {
			t.Fatalf("%d bytes left", len(one))
		}
	}
	if _, err := connector.DecodeSplits([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}); err == nil || !strings.Contains(err.Error(), "truncated or corrupt") {
		t.Errorf("a huge count: %v", err)
	}
	// A decoded state does not alias the encoding.
	b := connector.EncodeSplits([]connector.Split{{ID: "a", State: []byte{1, 2}}})
	got, _ := connector.DecodeSplits(b)
	b[len(b)-1] = 9
	if got[0].State[1] != 2 {
		t.Error("the decoded state aliases the encoding")
	}
}

// enumCtx records what an enumerator does.
type enumCtx struct {
	p        int
	assigned map[int][]string
	noMore   map[int]bool
}

func newEnumCtx(p int) *enumCtx {
	return &enumCtx{p: p, assigned: map[int][]string{}, noMore: map[int]bool{}}
}

func (c *enumCtx) SourceName() string  { return "static" }
func (c *enumCtx) Parallelism() int    { return c.p }
func (c *enumCtx) Checkpointing() bool { return true }
func (c *enumCtx) AssignSplits(subtask int, splits ...connector.Split) {
	for _, s := range splits {
		c.assigned[subtask] = append(c.assigned[subtask], s.ID)
	}
}
func (c *enumCtx) SignalNoMoreSplits(subtask int) { c.noMore[subtask] = true }
func (c *enumCtx) SendEvent(int, []byte)          {}
func (c *enumCtx) CallAsync(fn func() (any, error), h func(any, error) error) {
	v, err := fn()
	_ = h(v, err)
}
func (c *enumCtx) Every(time.Duration, func() error) {}
func (c *enumCtx) Log() *slog.Logger                 { return slog.Default() }

func splitsNamed(n int) []connector.Split {
	out := make([]connector.Split, n)
	for i := range out {
		out[i] = connector.Split{ID: fmt.Sprint("s", i), State: []byte{byte(i)}}
	}
	return out
}

func TestStaticEnumerator(t *testing.T) {
	ctx := newEnumCtx(3)
	calls := 0
	e, err := connector.NewStaticEnumerator(ctx, nil, func(p int) ([]connector.Split, error) {
		calls++
		if p != 3 {
			t.Errorf("discover got parallelism %d", p)
		}
		return splitsNamed(7), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("discover called %d times", calls)
	}
	if err := e.AddReader(0); err != nil {
		t.Fatal(err)
	}
	if err := e.AddReader(1); err != nil {
		t.Fatal(err)
	}
	want := map[int][]string{0: {"s0", "s3", "s6"}, 1: {"s1", "s4"}}
	if !reflect.DeepEqual(ctx.assigned, want) || !ctx.noMore[0] || !ctx.noMore[1] || ctx.noMore[2] {
		t.Fatalf("assigned %v, no more %v", ctx.assigned, ctx.noMore)
	}
	// The splits of reader 2, not yet started, are the state.
	state, err := e.SnapshotState(1)
	if err != nil {
		t.Fatal(err)
	}
	pending, err := connector.DecodeSplits(state)
	if err != nil || !same(pending, []connector.Split{{ID: "s2", State: []byte{2}}, {ID: "s5", State: []byte{5}}}) {
		t.Fatalf("state %v, %v", pending, err)
	}
	if err := e.HandleSplitRequest(0); err != nil {
		t.Error(err)
	}
	if err := e.HandleEvent(1, []byte("x")); err == nil || !strings.Contains(err.Error(), "unexpected event from reader 1") {
		t.Errorf("HandleEvent: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Error(err)
	}

	// Restored at parallelism 2, the pending splits are dealt again and
	// nothing is discovered.
	ctx2 := newEnumCtx(2)
	e2, err := connector.NewStaticEnumerator(ctx2, state, func(int) ([]connector.Split, error) {
		t.Error("discover called on restore")
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := e2.AddReader(i); err != nil {
			t.Fatal(err)
		}
	}
	if want := map[int][]string{0: {"s2"}, 1: {"s5"}}; !reflect.DeepEqual(ctx2.assigned, want) {
		t.Errorf("restored assignment %v, want %v", ctx2.assigned, want)
	}
	// Adding a reader again (a restarted subtask) assigns nothing twice.
	if err := e2.AddReader(0); err != nil {
		t.Fatal(err)
	}
	if len(ctx2.assigned[0]) != 1 {
		t.Errorf("a split assigned twice: %v", ctx2.assigned)
	}
	if s, _ := e2.SnapshotState(2); len(s) != 1 || s[0] != 0 {
		t.Errorf("the state after every assignment is %v, want no splits", s)
	}

	// An empty restored state (a checkpoint without enumerator state) is
	// not a fresh start.
	e3, err := connector.NewStaticEnumerator(newEnumCtx(1), []byte{}, func(int) ([]connector.Split, error) {
		t.Error("discover called for an empty restored state")
		return nil, nil
	})
	if err != nil || e3 == nil {
		t.Fatal(err)
	}
	if _, err := connector.NewStaticEnumerator(newEnumCtx(1), []byte{5, 1}, nil); err == nil || !strings.Contains(err.Error(), `source "static": restoring the enumerator`) {
		t.Errorf("a corrupt state: %v", err)
	}
	boom := errors.New("listing failed")
	if _, err := connector.NewStaticEnumerator(newEnumCtx(1), nil, func(int) ([]connector.Split, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("a discovery error: %v", err)
	}
}
