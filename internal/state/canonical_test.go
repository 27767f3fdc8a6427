package state_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/heap"
	"github.com/eddystream/eddy/internal/state/memtest"
	"github.com/eddystream/eddy/internal/state/pebble"
)

const canonicalMaxP = 8

// canonicalBackends make the backends canonical snapshots move between.
var canonicalBackends = []struct {
	name string
	make func(t *testing.T, kgs state.KeyGroupRange) state.Backend
}{
	{"heap", func(t *testing.T, kgs state.KeyGroupRange) state.Backend { return heap.New(kgs, canonicalMaxP) }},
	{"bytes", func(t *testing.T, kgs state.KeyGroupRange) state.Backend { return memtest.New(kgs, canonicalMaxP) }},
	{"bytes-cached", func(t *testing.T, kgs state.KeyGroupRange) state.Backend {
		return memtest.NewCached(kgs, canonicalMaxP, 1<<20)
	}},
	{"pebble", func(t *testing.T, kgs state.KeyGroupRange) state.Backend {
		b, err := pebble.Open(t.TempDir(), kgs, canonicalMaxP, pebble.Options{MemoryBudget: 32 << 20})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}},
}

// canonicalOp is the keyed state of one subtask of an operator: a value
// table of user state (void namespace), a value table with a namespace, a
// map table, a list and a TTL'd value, and timers of both domains.
type canonicalOp struct {
	kgs    state.KeyGroupRange
	tables *state.KeyedTables
	void   state.ValueTable[string, state.VoidNamespace, string]
	ns     state.ValueTable[string, int64, int64]
	m      state.MapTable[string, state.VoidNamespace, int64, string]
	list   state.ValueTable[string, state.VoidNamespace, []string]
	ttl    state.ValueTable[string, state.VoidNamespace, state.Timed[int64]]
	timers state.Timers[string, int64]
}

func newCanonicalOp(t *testing.T, b state.Backend) *canonicalOp {
	t.Helper()
	op := &canonicalOp{kgs: b.KeyGroups(), tables: state.NewKeyedTables(b)}
	var err error
	must := func(e error) {
		if e != nil && err == nil {
			err = e
		}
	}
	var e error
	op.void, e = state.NewValueTable[string, state.VoidNamespace, string](b, "void", nil, nil, nil)
	must(e)
	op.ns, e = state.NewValueTable[string, int64, int64](b, "ns", nil, nil, nil)
	must(e)
	op.m, e = state.NewMapTable[string, state.VoidNamespace, int64, string](b, "map", nil, nil, nil, nil)
	must(e)
	op.list, e = state.NewValueTable[string, state.VoidNamespace, []string](b, "list", nil, nil, nil)
	must(e)
	op.ttl, e = state.NewValueTable[string, state.VoidNamespace, state.Timed[int64]](b, "ttl", nil, nil, nil)
	must(e)
	if err != nil {
		t.Fatal(err)
	}
	if bb, ok := b.(state.BytesBackend); ok {
		ts, err := state.NewBytesTimers[string, int64](bb, "timers", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		op.timers = ts
	} else {
		ts := state.NewTimerService[string, int64](op.kgs, nil, nil)
		op.tables.AddExtra("timers", ts)
		op.timers = ts
	}
	return op
}

// fill writes deterministic state for 200 keys spread over every key group.
func (op *canonicalOp) fill() {
	v := state.VoidNamespace{}
	for i := range 200 {
		kg, k := i%canonicalMaxP, fmt.Sprintf("key-%03d", i)
		op.void.Put(kg, k, v, strings.Repeat("v", i%7))
		op.ns.Put(kg, k, int64(i%3), int64(-i))
		op.ns.Put(kg, k, int64(i%3+10), int64(i*i))
		for j := range i % 4 {
			op.m.Put(kg, k, v, int64(j-1), fmt.Sprintf("m%d.%d", i, j))
		}
		if i%5 != 0 {
			op.list.Put(kg, k, v, []string{k, "", fmt.Sprint(i)})
		}
		op.ttl.Put(kg, k, v, state.Timed[int64]{Value: int64(i), Stamp: int64(1000 + i)})
		op.timers.RegisterEventTime(kg, k, int64(i%2), int64(i*10-500))
		if i%3 == 0 {
			op.timers.RegisterProcessingTime(kg, k, 7, int64(i))
			op.timers.RegisterEventTime(kg, k, 3, math.MinInt64+int64(i))
		}
	}
}

// dump describes every entry and timer, sorted; it fires the timers.
func (op *canonicalOp) dump(t *testing.T) []string {
	var out []string
	for kg := op.kgs.Start; kg < op.kgs.End; kg++ {
		op.void.Range(kg, func(k string, _ state.VoidNamespace, v string) bool {
			out = append(out, fmt.Sprintf("void %d %s %q", kg, k, v))
			return true
		})
		op.ns.Range(kg, func(k string, n, v int64) bool {
			out = append(out, fmt.Sprintf("ns %d %s %d %d", kg, k, n, v))
			return true
		})
		op.m.Range(kg, func(k string, _ state.VoidNamespace, uk int64, uv string) bool {
			out = append(out, fmt.Sprintf("map %d %s %d %s", kg, k, uk, uv))
			return true
		})
		op.list.Range(kg, func(k string, _ state.VoidNamespace, l []string) bool {
			out = append(out, fmt.Sprintf("list %d %s %q", kg, k, l))
			return true
		})
		op.ttl.Range(kg, func(k string, _ state.VoidNamespace, v state.Timed[int64]) bool {
			out = append(out, fmt.Sprintf("ttl %d %s %d@%d", kg, k, v.Value, v.Stamp))
			return true
		})
	}
	fire := func(domain string) func(kg int, k string, n, ts int64) error {
		return func(kg int, k string, n, ts int64) error {
			out = append(out, fmt.Sprintf("timer %s %d %s %d %d", domain, kg, k, n, ts))
			return nil
		}
	}
	if err := op.timers.AdvanceWatermark(math.MaxInt64, fire("event")); err != nil {
		t.Fatal(err)
	}
	if err := op.timers.AdvanceProcessingTime(math.MaxInt64, fire("proc")); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// filledHeapSnapshot fills an operator's state on the heap backend, over
// every key group, and returns the key groups, the snapshot take makes of
// the state, and the state's dump.
func filledHeapSnapshot(t *testing.T, take func(*testing.T, *canonicalOp) map[int][]byte) (state.KeyGroupRange, map[int][]byte, []string) {
	t.Helper()
	all := state.KeyGroupRange{Start: 0, End: canonicalMaxP}
	src := newCanonicalOp(t, heap.New(all, canonicalMaxP))
	src.fill()
	snap := take(t, src)
	return all, snap, src.dump(t)
}

// canonicalSnapshot takes a canonical snapshot of op.
func canonicalSnapshot(t *testing.T, op *canonicalOp) map[int][]byte {
	t.Helper()
	encode, err := op.tables.BeginSnapshot(op.kgs, state.SnapshotOptions{Canonical: true})
	if err != nil {
		t.Fatal(err)
	}
	return encode()
}

// TestCanonicalSnapshotsMoveBetweenBackends fills the same state on each
// backend, takes a canonical snapshot, and restores it into every backend,
// split over two subtasks: each restored pair holds exactly what the source
// held, timers included.
func TestCanonicalSnapshotsMoveBetweenBackends(t *testing.T) {
	all := state.KeyGroupRange{Start: 0, End: canonicalMaxP}
	var want []string
	for _, src := range canonicalBackends {
		op := newCanonicalOp(t, src.make(t, all))
		op.fill()
		snap := canonicalSnapshot(t, op)
		for kg, b := range snap {
			if len(b) == 0 {
				t.Fatalf("%s: key group %d has no canonical state", src.name, kg)
			}
		}
		got := op.dump(t)
		if want == nil {
			want = got
		} else if !slices.Equal(got, want) {
			t.Fatalf("%s holds other state than %s:\n%s", src.name, canonicalBackends[0].name, firstDiff(got, want))
		}
		for _, dst := range canonicalBackends {
			t.Run(src.name+" to "+dst.name, func(t *testing.T) {
				var restored []string
				for _, half := range []state.KeyGroupRange{{Start: 0, End: 3}, {Start: 3, End: canonicalMaxP}} {
					op := newCanonicalOp(t, dst.make(t, half))
					part := map[int][]byte{}
					for kg := half.Start; kg < half.End; kg++ {
						part[kg] = snap[kg]
					}
					if err := op.tables.Restore(half, part); err != nil {
						t.Fatal(err)
					}
					restored = append(restored, op.dump(t)...)
				}
				slices.Sort(restored)
				if !slices.Equal(restored, want) {
					t.Fatalf("restored state differs:\n%s", firstDiff(restored, want))
				}
			})
		}
	}
}

// TestCanonicalRestoreChecksKinds: a table declared with other types than
// the snapshot's refuses the restore with ErrIncompatibleTable, on both
// kinds of backend.
func TestCanonicalRestoreChecksKinds(t *testing.T) {
	all, snap, _ := filledHeapSnapshot(t, canonicalSnapshot)
	for _, dst := range canonicalBackends {
		b := dst.make(t, all)
		tables := state.NewKeyedTables(b)
		if _, err := state.NewValueTable[string, state.VoidNamespace, int64](b, "void", nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		err := tables.Restore(all, snap)
		if !errors.Is(err, state.ErrIncompatibleTable) && !strings.Contains(fmt.Sprint(err), "does not declare") {
			t.Fatalf("%s: restore into other types: %v", dst.name, err)
		}
		// Restoring only the table declared, of other types.
		only := map[int][]byte{}
		for kg := range canonicalMaxP {
			only[kg] = onlyTable(t, kg, snap[kg], "void")
		}
		if err := tables.Restore(all, only); !errors.Is(err, state.ErrIncompatibleTable) {
			t.Fatalf("%s: restore of value[string,void,string] into value[string,void,int64]: %v", dst.name, err)
		}
	}
}

// onlyTable returns the canonical snapshot of key group kg cut down to the
// table name, re-encoded from the layout (canonical.go).
func onlyTable(t *testing.T, kg int, b []byte, name string) []byte {
	t.Helper()
	var out []byte
	err := state.EachSection(kg, b, func(section string, data []byte) error {
		if section != state.CanonicalSection {
			return fmt.Errorf("section %q", section)
		}
		var kept []byte
		for len(data) > 0 {
			var fields [3][]byte
			for i := range fields {
				n, m := uvarint(data)
				fields[i], data = data[m:m+n], data[m+n:]
			}
			if string(fields[0]) == name {
				for _, f := range fields {
					kept = appendBytes(kept, f)
				}
			}
		}
		out = state.AppendSection(out, section, kept)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBytesTablesSectionRestoresAnywhere: the section bytes backends wrote
// before the canonical format (tables with counted entries and no kinds)
// restores into an object backend too.
func TestBytesTablesSectionRestoresAnywhere(t *testing.T) {
	all, snap, want := filledHeapSnapshot(t, canonicalSnapshot)
	legacy := map[int][]byte{}
	for kg, b := range snap {
		err := state.EachSection(kg, b, func(_ string, data []byte) error {
			var old []byte
			for len(data) > 0 {
				var fields [3][]byte
				for i := range fields {
					n, m := uvarint(data)
					fields[i], data = data[m:m+n], data[m+n:]
				}
				entries, count := fields[2], 0
				for e := entries; len(e) > 0; count++ {
					for range 2 {
						n, m := uvarint(e)
						e = e[m+n:]
					}
				}
				old = appendBytes(old, fields[0])
				old = appendUvarint(old, count)
				old = append(old, entries...)
			}
			legacy[kg] = state.AppendSection(nil, state.BytesTablesSection, old)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, dst := range canonicalBackends {
		op := newCanonicalOp(t, dst.make(t, all))
		if err := op.tables.Restore(all, legacy); err != nil {
			t.Fatalf("%s: %v", dst.name, err)
		}
		if got := op.dump(t); !slices.Equal(got, want) {
			t.Fatalf("%s: restored state differs:\n%s", dst.name, firstDiff(got, want))
		}
	}
}

func uvarint(b []byte) (n, m int) {
	var x uint64
	var s uint
	for i, c := range b {
		x |= uint64(c&0x7f) << s
		if c < 0x80 {
			return int(x), i + 1
		}
		s += 7
	}
	panic("short uvarint")
}

func appendUvarint(dst []byte, n int) []byte {
	for n >= 0x80 {
		dst = append(dst, byte(n)|0x80)
		n >>= 7
	}
	return append(dst, byte(n))
}

func appendBytes(dst, b []byte) []byte { return append(appendUvarint(dst, len(b)), b...) }

// firstDiff describes the first difference of two sorted lists.
func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("at %d: got %s, want %s", i, got[i], want[i])
		}
	}
	return fmt.Sprintf("got %d entries, want %d", len(got), len(want))
}
