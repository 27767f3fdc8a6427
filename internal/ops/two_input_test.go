package ops

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/eddystream/eddy/internal/ops/opstest"
	"github.com/eddystream/eddy/internal/runtime"
)

type either = Either[opstest.Record, opstest.Record]

// kgRecorder is an Input of Either that keeps the key groups of every batch
// it receives (nil for a batch without them).
type kgRecorder struct{ kgs [][]uint16 }

func (r *kgRecorder) ProcessBatch(b *runtime.Batch[either]) error {
	var kg []uint16
	if len(b.KG) > 0 {
		kg = slices.Clone(b.KG)
	}
	r.kgs = append(r.kgs, kg)
	return nil
}
func (r *kgRecorder) ProcessWatermark(int64) error { return nil }
func (r *kgRecorder) EndInput() error              { return nil }

// sendTo sends records of key to input i of b, with the key groups kgs if
// there are any.
func sendTo(b *runtime.Built, i int, key string, kgs ...uint16) error {
	batch := runtime.NewBatch[opstest.Record](len(kgs))
	for range max(len(kgs), 1) {
		batch.Append(opstest.Record{Key: key, Val: 1}, 1)
	}
	batch.KG = append(batch.KG, kgs...)
	return b.Inputs[i].(runtime.Input[opstest.Record]).ProcessBatch(batch)
}

// TestTwoInputsCarryTheExchangeKeyGroups checks that both inputs of a
// two-input operator hand the operator over Either the key groups the hash
// exchange sent with each batch, and none for a batch that came without
// them (the buffer is reused between batches).
func TestTwoInputsCarryTheExchangeKeyGroups(t *testing.T) {
	rec := &kgRecorder{}
	b := TwoInputs[opstest.Record, opstest.Record](rec)
	for _, s := range []struct {
		in  int
		kgs []uint16
	}{{0, []uint16{5, 7}}, {1, []uint16{9}}, {0, nil}, {1, []uint16{3, 4, 5}}, {1, nil}} {
		if err := sendTo(b, s.in, "a", s.kgs...); err != nil {
			t.Fatal(err)
		}
	}
	want := [][]uint16{{5, 7}, {9}, nil, {3, 4, 5}, nil}
	if len(rec.kgs) != len(want) {
		t.Fatalf("the operator received %d batches, want %d", len(rec.kgs), len(want))
	}
	for i := range want {
		if !slices.Equal(rec.kgs[i], want[i]) {
			t.Errorf("batch %d reached the operator with key groups %v, want %v", i, rec.kgs[i], want[i])
		}
	}
}

// TestKeyedTwoInputOperatorUsesTheExchangeKeyGroups checks that a keyed
// operator over two inputs (a keyed process over Either, as connected keyed
// streams and interval joins run) takes each record's key group from the
// batch of either input: a key that hashes outside the key groups of
// subtask 0 of 2 is processed under key group 5 when the exchange sent it,
// and refused when the batch carries no key groups, so the key is hashed.
func TestKeyedTwoInputOperatorUsesTheExchangeKeyGroups(t *testing.T) {
	outside := keyOutside()
	h := opstest.New("co-process")
	ctx := runtime.NewContext("co-process", 0, 2, opstest.MaxParallelism, func() int64 { return 0 }, func(int64, func(int64) error) {})
	type seen struct {
		right bool
		kg    int
		key   string
	}
	var got []seen
	logic := KeyedProcessLogic[string, either, int]{Process: func(c *KeyedContext[string, int], e either) error {
		kc := c.Store().KeyContext()
		got = append(got, seen{e.IsRight, kc.KG, kc.Key})
		return nil
	}}
	p, err := NewKeyedProcess(ctx, EitherKeySpec(recordKey(), recordKey()), h.Backend, logic,
		map[string]any{"": runtime.Input[int](&sink[int]{})})
	if err != nil {
		t.Fatal(err)
	}
	b := TwoInputs[opstest.Record, opstest.Record](p)
	// send sends a record of the outside key to input in, with the key
	// groups kgs, and returns what the operator panicked with.
	send := func(in int, kgs ...uint16) (refused any) {
		defer func() { refused = recover() }()
		if err := sendTo(b, in, outside, kgs...); err != nil {
			t.Fatal(err)
		}
		return nil
	}
	for in := range 2 {
		if r := send(in, 5); r != nil {
			t.Errorf("input %d with key group 5 from the exchange: the operator hashed the key and refused it: %v", in, r)
		}
	}
	want := []seen{{false, 5, outside}, {true, 5, outside}}
	if !slices.Equal(got, want) {
		t.Fatalf("with key group 5 from the exchange on both inputs, the operator processed %v, want %v", got, want)
	}
	for in := range 2 {
		if r := send(in); r == nil || !strings.Contains(fmt.Sprint(r), "reached subtask 0 owning [0,64)") {
			t.Errorf("input %d without key groups: recovered %v, want the hashed key group refused", in, r)
		}
	}
}

// sink is an Input that drops what it receives.
type sink[T any] struct{}

func (sink[T]) ProcessBatch(*runtime.Batch[T]) error { return nil }
func (sink[T]) ProcessWatermark(int64) error         { return nil }
func (sink[T]) EndInput() error                      { return nil }
