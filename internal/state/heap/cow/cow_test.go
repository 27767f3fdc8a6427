package cow

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/eddystream/eddy/internal/state/codec"
)

// The copy-on-write tests drive a table with random operations against a
// model while a goroutine encodes a snapshot, then check that the snapshot
// holds the contents at BeginSnapshot and the table the model's. Run them
// with -race: the owner must never write what the encoder reads.

const cowKGs = 16

// cowRange does not start at 0, to catch key group offsets.
var cowRange = kgRange{Start: 3, End: 3 + cowKGs}

func cowKG(k int64) int { return cowRange.Start + int(uint64(k)%cowKGs) }

// acc is a value that shares memory in every way a value can.
type acc struct {
	Accs []int64
	Tags map[string]int
	Ptr  *int64
	Name string
}

// valGen makes and changes values for the copy-on-write tests.
type valGen[V any] struct {
	gen func(r *rand.Rand) V
	// mutate changes v as an operator would, in place where it can, and
	// returns the value to put back. Given the same seed and equal values
	// it makes the same changes.
	mutate func(seed uint64, v V) V
}

var accGen = valGen[acc]{
	gen: func(r *rand.Rand) acc {
		v := acc{Tags: map[string]int{}, Ptr: new(int64), Name: "n"}
		for range 1 + r.IntN(5) {
			v.Accs = append(v.Accs, r.Int64N(100))
		}
		for range 1 + r.IntN(3) {
			v.Tags[fmt.Sprint(r.IntN(5))] = r.IntN(9)
		}
		*v.Ptr = r.Int64N(100)
		return v
	},
	mutate: func(seed uint64, v acc) acc {
		r := rand.New(rand.NewPCG(seed, 0))
		switch r.IntN(4) {
		case 0:
			for i := range v.Accs {
				v.Accs[i] += 1 + r.Int64N(9)
			}
		case 1:
			v.Accs = compact(v.Accs, r.Int64N(100))
		case 2:
			v.Tags[fmt.Sprint(r.IntN(5))]++
			*v.Ptr += 1
		default:
			v.Accs = append(v.Accs, r.Int64N(100))
			v.Name += "x"
		}
		return v
	},
}

// compact keeps the even elements of l in place and appends x.
func compact(l []int64, x int64) []int64 {
	keep := l[:0]
	for _, a := range l {
		if a%2 == 0 {
			keep = append(keep, a)
		}
	}
	return append(keep, x)
}

var listGen = valGen[[]int64]{
	gen: func(r *rand.Rand) []int64 {
		l := make([]int64, 1+r.IntN(5), 8)
		for i := range l {
			l[i] = r.Int64N(100)
		}
		return l
	},
	mutate: func(seed uint64, l []int64) []int64 {
		r := rand.New(rand.NewPCG(seed, 0))
		switch r.IntN(3) {
		case 0:
			for i := range l {
				l[i] += 1 + r.Int64N(9)
			}
			return l
		case 1:
			return compact(l, r.Int64N(100))
		}
		return append(l, r.Int64N(100))
	},
}

var intGen = valGen[int64]{
	gen:    func(r *rand.Rand) int64 { return r.Int64N(1000) },
	mutate: func(seed uint64, v int64) int64 { return v + int64(seed%7) + 1 },
}

// snapshotting is what the tests need of a copy-on-write table: the
// methods of state.ObjectTable, state.AsyncSnapshotter and state.Settler.
type snapshotting interface {
	Kind() string
	AppendKeyGroup(dst []byte, kg int) []byte
	RestoreKeyGroup(kg int, data []byte) error
	DropKeyGroup(kg int)
	Len() int
	BeginSnapshot() (encode func(dst []byte, kg int) []byte, release func())
	Settle()
}

// void is an empty struct, as the void namespace of state is.
type void struct{}

// mustCodec returns the default codec of T or fails the test.
func mustCodec[T any](t testing.TB) codec.Codec[T] {
	t.Helper()
	c, err := codec.Default[T]()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// cowDriver runs the snapshot cycles common to the value and map tests.
type cowDriver struct {
	t        *testing.T
	r        *rand.Rand
	tbl      snapshotting
	newTable func() snapshotting
	// step applies one random operation to the table and the model.
	step func()
	// contents returns the encoded entries of a table, and the model's.
	contents func(tbl snapshotting) map[string]string
	model    func() map[string]string
}

func (d *cowDriver) run(cycles int) {
	t := d.t
	for range 300 {
		d.step()
	}
	for cycle := range cycles {
		frozen := d.model()
		sizes := make([]int, cowKGs)
		for i := range sizes {
			sizes[i] = len(d.tbl.AppendKeyGroup(nil, cowRange.Start+i))
		}
		encode, release := d.tbl.BeginSnapshot()
		mustPanic(t, "a second BeginSnapshot", func() { d.tbl.BeginSnapshot() })

		half := make(chan struct{})
		done := make(chan [][]byte)
		go func() {
			blobs := make([][]byte, cowKGs)
			for i := range blobs {
				if i == cowKGs/2 {
					<-half
				}
				blobs[i] = encode(nil, cowRange.Start+i)
				runtime.Gosched()
			}
			release()
			done <- blobs
		}()
		var blobs [][]byte
		for i := 0; blobs == nil; i++ {
			d.step()
			if i == 400 {
				close(half)
			}
			if i > 400 {
				select {
				case blobs = <-done:
				default:
				}
			}
		}
		mustPanic(t, "encode after release", func() { encode(nil, cowRange.Start) })
		// Operations after the release settle the snapshot at the first
		// access; in odd cycles, Settle does it first.
		if cycle%2 == 1 {
			d.tbl.Settle()
		}
		// In cycle 2, the next BeginSnapshot finds key groups not settled.
		post := 300
		if cycle == 2 {
			post = 3
		}
		for range post {
			d.step()
		}
		if cycle != 2 {
			d.tbl.Settle()
		}

		for i, b := range blobs {
			if len(b) != sizes[i] {
				t.Errorf("cycle %d: key group %d encodes in %d bytes, AppendKeyGroup made %d", cycle, cowRange.Start+i, len(b), sizes[i])
			}
		}
		fresh := d.newTable()
		for i, b := range blobs {
			if err := fresh.RestoreKeyGroup(cowRange.Start+i, b); err != nil {
				t.Fatal(err)
			}
		}
		if got := d.contents(fresh); !maps.Equal(got, frozen) {
			t.Fatalf("cycle %d: the snapshot holds %d entries that differ from the %d at BeginSnapshot:\n%s", cycle, len(got), len(frozen), diff(got, frozen))
		}
		if got, want := d.contents(d.tbl), d.model(); !maps.Equal(got, want) {
			t.Fatalf("cycle %d: the table holds %d entries that differ from the model's %d:\n%s", cycle, len(got), len(want), diff(got, want))
		}
	}
}

func diff(got, want map[string]string) string {
	var b strings.Builder
	for k, v := range got {
		if w, ok := want[k]; !ok || w != v {
			fmt.Fprintf(&b, "got  %q: %x\n", k, v)
		}
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			fmt.Fprintf(&b, "want %q: %x\n", k, v)
		}
	}
	return b.String()
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

type cowValueTable[N comparable, V any] interface {
	Get(kg int, k int64, n N) (V, bool)
	Put(kg int, k int64, n N, v V)
	Delete(kg int, k int64, n N)
	Range(kg int, fn func(k int64, n N, v V) bool)
	snapshotting
}

// testCOWValue tests the copy-on-write snapshots of a value table.
func testCOWValue[N comparable, V any](t *testing.T, newTable func() cowValueTable[N, V], nsOf func(int64) N, g valGen[V]) {
	vc := mustCodec[V](t)
	nc := mustCodec[N](t)
	enc := func(v V) string { return string(vc.Append(nil, v)) }
	clone := func(v V) V {
		c, _, err := vc.Decode(vc.Append(nil, v))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	type key = pair[int64, N]
	name := func(p key) string { return fmt.Sprintf("%d/%x", p.k, nc.Append(nil, p.n)) }
	r := rand.New(rand.NewPCG(1, 2))
	tbl := newTable()
	model := map[key]V{}
	randKey := func() (int, key) {
		k := r.Int64N(500)
		return cowKG(k), key{k, nsOf(r.Int64N(3))}
	}
	check := func(p key, v V, ok bool) {
		t.Helper()
		mv, mok := model[p]
		if ok != mok || ok && enc(v) != enc(mv) {
			t.Fatalf("%s: got %v, %v; want %v, %v", name(p), v, ok, mv, mok)
		}
	}
	// change mutates v and the model's value of p alike, puts v back unless
	// told not to, and returns whether it did.
	change := func(kg int, p key, v V, put bool) {
		seed := r.Uint64()
		v = g.mutate(seed, v)
		mv := g.mutate(seed, model[p])
		if put {
			tbl.Put(kg, p.k, p.n, v)
			model[p] = mv
		}
	}
	kgLen := func(kg int) int {
		n := 0
		for p := range model {
			if cowKG(p.k) == kg {
				n++
			}
		}
		return n
	}
	step := func() {
		kg, p := randKey()
		switch op := r.IntN(100); {
		case op < 25:
			v := g.gen(r)
			tbl.Put(kg, p.k, p.n, v)
			model[p] = clone(v)
		case op < 35:
			tbl.Delete(kg, p.k, p.n)
			delete(model, p)
		case op < 75:
			v, ok := tbl.Get(kg, p.k, p.n)
			check(p, v, ok)
			if ok {
				change(kg, p, v, r.IntN(4) > 0)
			}
		case op < 85:
			want := kgLen(kg)
			seen := map[key]bool{}
			stop := -1
			if r.IntN(4) == 0 {
				stop = r.IntN(want + 1)
			}
			tbl.Range(kg, func(k int64, n N, v V) bool {
				p := key{k, n}
				if seen[p] {
					t.Fatalf("Range visits %s twice", name(p))
				}
				seen[p] = true
				check(p, v, true)
				switch r.IntN(4) {
				case 0:
					tbl.Delete(kg, k, n)
					delete(model, p)
				case 1:
					change(kg, p, v, true)
				case 2:
					change(kg, p, v, false)
				}
				return len(seen) != stop
			})
			if stop < 0 && len(seen) != want {
				t.Fatalf("Range of key group %d visits %d entries, want %d", kg, len(seen), want)
			}
		case op < 88:
			blob := tbl.AppendKeyGroup(nil, kg)
			n := tbl.Len()
			tbl.DropKeyGroup(kg)
			if got, want := tbl.Len(), n-kgLen(kg); got != want {
				t.Fatalf("Len after dropping key group %d = %d, want %d", kg, got, want)
			}
			if r.IntN(3) > 0 {
				if err := tbl.RestoreKeyGroup(kg, blob); err != nil {
					t.Fatal(err)
				}
			} else {
				for p := range model {
					if cowKG(p.k) == kg {
						delete(model, p)
					}
				}
			}
			fallthrough
		case op < 92:
			if got, want := tbl.Len(), len(model); got != want {
				t.Fatalf("Len = %d, want %d", got, want)
			}
		default:
			v, ok := tbl.Get(kg, p.k, p.n)
			check(p, v, ok)
		}
	}
	contents := func(tbl snapshotting) map[string]string {
		out := map[string]string{}
		for kg := cowRange.Start; kg < cowRange.End; kg++ {
			tbl.(cowValueTable[N, V]).Range(kg, func(k int64, n N, v V) bool {
				out[name(key{k, n})] = enc(v)
				return true
			})
		}
		if tbl.Len() != len(out) {
			t.Fatalf("Len = %d, Range visits %d", tbl.Len(), len(out))
		}
		return out
	}
	d := &cowDriver{
		t: t, r: r, tbl: tbl,
		newTable: func() snapshotting { return newTable() },
		step:     step,
		contents: contents,
		model: func() map[string]string {
			out := map[string]string{}
			for p, v := range model {
				out[name(p)] = enc(v)
			}
			return out
		},
	}
	d.run(4)
}

func TestCOWValueTable(t *testing.T) {
	testCOWValue(t, func() cowValueTable[int64, acc] {
		return NewValueTable("value", cowRange.Start, cowRange.End, mustCodec[int64](t), mustCodec[int64](t), mustCodec[acc](t))
	}, func(n int64) int64 { return n }, accGen)
}

func TestCOWValueTablePlain(t *testing.T) {
	testCOWValue(t, func() cowValueTable[int64, int64] {
		return NewValueTable("value", cowRange.Start, cowRange.End, mustCodec[int64](t), mustCodec[int64](t), mustCodec[int64](t))
	}, func(n int64) int64 { return n }, intGen)
}

func TestCOWVoidTable(t *testing.T) {
	testCOWValue(t, func() cowValueTable[void, []int64] {
		return NewVoidTable("void", cowRange.Start, cowRange.End, mustCodec[int64](t), mustCodec[void](t), codec.List(mustCodec[int64](t)))
	}, func(int64) void { return void{} }, listGen)
}

func TestCOWVoidTableStruct(t *testing.T) {
	testCOWValue(t, func() cowValueTable[void, acc] {
		return NewVoidTable("void", cowRange.Start, cowRange.End, mustCodec[int64](t), mustCodec[void](t), mustCodec[acc](t))
	}, func(int64) void { return void{} }, accGen)
}

type cowMapTable[UV any] interface {
	Get(kg int, k, n, uk int64) (UV, bool)
	Put(kg int, k, n, uk int64, uv UV)
	Delete(kg int, k, n, uk int64)
	Clear(kg int, k, n int64)
	IsEmpty(kg int, k, n int64) bool
	Entries(kg int, k, n int64, fn func(uk int64, uv UV) bool)
	Range(kg int, fn func(k, n, uk int64, uv UV) bool)
	snapshotting
}

// testCOWMap tests the copy-on-write snapshots of a map table.
func testCOWMap[UV any](t *testing.T, g valGen[UV]) {
	vc := mustCodec[UV](t)
	enc := func(v UV) string { return string(vc.Append(nil, v)) }
	clone := func(v UV) UV {
		c, _, err := vc.Decode(vc.Append(nil, v))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	newTable := func() cowMapTable[UV] {
		c := mustCodec[int64](t)
		return NewMapTable("map", cowRange.Start, cowRange.End, c, c, c, vc)
	}
	type key = pair[int64, int64]
	type entry struct {
		p  key
		uk int64
	}
	name := func(e entry) string { return fmt.Sprintf("%d/%d/%d", e.p.k, e.p.n, e.uk) }
	r := rand.New(rand.NewPCG(3, 4))
	tbl := newTable()
	model := map[key]map[int64]UV{}
	randKey := func() (int, key, int64) {
		k := r.Int64N(200)
		return cowKG(k), key{k, r.Int64N(3)}, r.Int64N(6)
	}
	check := func(e entry, v UV, ok bool) {
		t.Helper()
		mv, mok := model[e.p][e.uk]
		if ok != mok || ok && enc(v) != enc(mv) {
			t.Fatalf("%s: got %v, %v; want %v, %v", name(e), v, ok, mv, mok)
		}
	}
	del := func(kg int, e entry) {
		tbl.Delete(kg, e.p.k, e.p.n, e.uk)
		delete(model[e.p], e.uk)
		if len(model[e.p]) == 0 {
			delete(model, e.p)
		}
	}
	change := func(kg int, e entry, v UV, put bool) {
		seed := r.Uint64()
		v = g.mutate(seed, v)
		mv := g.mutate(seed, model[e.p][e.uk])
		if put {
			tbl.Put(kg, e.p.k, e.p.n, e.uk, v)
			model[e.p][e.uk] = mv
		}
	}
	// visit checks an entry that Entries or Range gives and changes it.
	visit := func(kg int, e entry, v UV, seen map[entry]bool) {
		if seen[e] {
			t.Fatalf("%s visited twice", name(e))
		}
		seen[e] = true
		check(e, v, true)
		switch r.IntN(4) {
		case 0:
			del(kg, e)
		case 1:
			change(kg, e, v, true)
		case 2:
			change(kg, e, v, false)
		}
	}
	total := func(pred func(key) bool) int {
		n := 0
		for p, m := range model {
			if pred(p) {
				n += len(m)
			}
		}
		return n
	}
	step := func() {
		kg, p, uk := randKey()
		e := entry{p, uk}
		switch op := r.IntN(100); {
		case op < 25:
			v := g.gen(r)
			tbl.Put(kg, p.k, p.n, uk, v)
			if model[p] == nil {
				model[p] = map[int64]UV{}
			}
			model[p][uk] = clone(v)
		case op < 33:
			del(kg, e)
		case op < 35:
			tbl.Clear(kg, p.k, p.n)
			delete(model, p)
		case op < 65:
			v, ok := tbl.Get(kg, p.k, p.n, uk)
			check(e, v, ok)
			if ok {
				change(kg, e, v, r.IntN(4) > 0)
			}
		case op < 72:
			if got, want := tbl.IsEmpty(kg, p.k, p.n), len(model[p]) == 0; got != want {
				t.Fatalf("IsEmpty(%v) = %v, want %v", p, got, want)
			}
		case op < 80:
			want := len(model[p])
			seen := map[entry]bool{}
			tbl.Entries(kg, p.k, p.n, func(uk int64, v UV) bool {
				visit(kg, entry{p, uk}, v, seen)
				return true
			})
			if len(seen) != want {
				t.Fatalf("Entries of %v visits %d entries, want %d", p, len(seen), want)
			}
		case op < 87:
			want := total(func(q key) bool { return cowKG(q.k) == kg })
			seen := map[entry]bool{}
			stop := -1
			if r.IntN(4) == 0 {
				stop = r.IntN(want + 1)
			}
			tbl.Range(kg, func(k, n, uk int64, v UV) bool {
				visit(kg, entry{key{k, n}, uk}, v, seen)
				return len(seen) != stop
			})
			if stop < 0 && len(seen) != want {
				t.Fatalf("Range of key group %d visits %d entries, want %d", kg, len(seen), want)
			}
		case op < 90:
			blob := tbl.AppendKeyGroup(nil, kg)
			n := tbl.Len()
			tbl.DropKeyGroup(kg)
			if got, want := tbl.Len(), n-total(func(q key) bool { return cowKG(q.k) == kg }); got != want {
				t.Fatalf("Len after dropping key group %d = %d, want %d", kg, got, want)
			}
			if r.IntN(3) > 0 {
				if err := tbl.RestoreKeyGroup(kg, blob); err != nil {
					t.Fatal(err)
				}
			} else {
				for p := range model {
					if cowKG(p.k) == kg {
						delete(model, p)
					}
				}
			}
			fallthrough
		case op < 93:
			if got, want := tbl.Len(), total(func(key) bool { return true }); got != want {
				t.Fatalf("Len = %d, want %d", got, want)
			}
		default:
			v, ok := tbl.Get(kg, p.k, p.n, uk)
			check(e, v, ok)
		}
	}
	contents := func(tbl snapshotting) map[string]string {
		out := map[string]string{}
		for kg := cowRange.Start; kg < cowRange.End; kg++ {
			tbl.(cowMapTable[UV]).Range(kg, func(k, n, uk int64, v UV) bool {
				out[name(entry{key{k, n}, uk})] = enc(v)
				return true
			})
		}
		if tbl.Len() != len(out) {
			t.Fatalf("Len = %d, Range visits %d", tbl.Len(), len(out))
		}
		return out
	}
	d := &cowDriver{
		t: t, r: r, tbl: tbl,
		newTable: func() snapshotting { return newTable() },
		step:     step,
		contents: contents,
		model: func() map[string]string {
			out := map[string]string{}
			for p, m := range model {
				for uk, v := range m {
					out[name(entry{p, uk})] = enc(v)
				}
			}
			return out
		},
	}
	d.run(4)
}

func TestCOWMapTable(t *testing.T)       { testCOWMap(t, listGen) }
func TestCOWMapTableStruct(t *testing.T) { testCOWMap(t, accGen) }
func TestCOWMapTablePlain(t *testing.T)  { testCOWMap(t, intGen) }

// timed is a value with a stamp, as state.Timed is.
type timed[T any] struct {
	Value T
	Stamp int64
}

func TestMayShare(t *testing.T) {
	type plain struct {
		A int
		B string
		C [2]float64
		D struct{ E bool }
	}
	for _, c := range []struct {
		v    any
		want bool
	}{
		{int64(0), false}, {"", false}, {plain{}, false}, {void{}, false},
		{timed[int]{}, false},
		{[]int(nil), true}, {map[int]int(nil), true}, {(*int)(nil), true},
		{acc{}, true}, {timed[[]int]{}, true}, {[1][]int{}, true},
	} {
		if got := MayShare(reflect.TypeOf(c.v)); got != c.want {
			t.Errorf("MayShare(%T) = %v, want %v", c.v, got, c.want)
		}
	}
}

func TestValueTableAllocations(t *testing.T) {
	vt := NewValueTable[int64, void, int64]("k", 0, 4, mustCodec[int64](t), mustCodec[void](t), mustCodec[int64](t))
	for k := range int64(100) {
		vt.Put(int(k%4), k, void{}, k)
	}
	n := testing.AllocsPerRun(1000, func() {
		v, _ := vt.Get(1, 5, void{})
		vt.Put(1, 5, void{}, v+1)
	})
	if n != 0 {
		t.Errorf("Get+Put of an existing entry allocates %v times", n)
	}
}
