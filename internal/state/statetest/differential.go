package statetest

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/codec"
)

// DiffMaxParallelism is the max parallelism of the backends Differential
// compares; they own every key group.
const DiffMaxParallelism = maxP

// DiffOptions configures Differential.
type DiffOptions struct {
	// Seed seeds the random sequence of operations.
	Seed uint64
	// Steps is the number of operations.
	Steps int
	// Keys is the number of distinct keys (default 64): fewer keys mean
	// more operations on entries that exist.
	Keys int
	// Check, if not nil, is called after every step, with the step's
	// description, e.g. to check that a cache stays within its budget.
	Check func(t *testing.T, step int, op string)
}

// diffRec is the value of the differential test's table with a void namespace:
// decoded by the reflect codec, with a slice that values must not share.
type diffRec struct {
	A int64
	B []string
}

func (r diffRec) String() string { return fmt.Sprintf("{%d %q}", r.A, r.B) }

// diffTables are the tables Differential declares on a backend.
type diffTables struct {
	v state.ValueTable[int64, int32, string]
	w state.ValueTable[int64, state.VoidNamespace, diffRec]
	m state.MapTable[int64, int32, string, int]
}

func declareDiff(t *testing.T, b state.Backend) *diffTables {
	t.Helper()
	var d diffTables
	var err error
	d.v, err = state.NewValueTable[int64, int32, string](b, "diff-v", nil, nil, nil)
	mustNoErr(t, err)
	d.w, err = state.NewValueTable[int64, state.VoidNamespace, diffRec](b, "diff-w", nil, nil, nil)
	mustNoErr(t, err)
	d.m, err = state.NewMapTable[int64, int32, string, int](b, "diff-m", nil, nil, nil, nil)
	mustNoErr(t, err)
	return &d
}

// dump returns every entry of the tables in key group kg as sorted strings.
func (d *diffTables) dump(kg int) []string {
	var out []string
	d.v.Range(kg, func(k int64, n int32, v string) bool {
		out = append(out, fmt.Sprintf("v %d/%d=%s", k, n, v))
		return true
	})
	d.w.Range(kg, func(k int64, _ state.VoidNamespace, v diffRec) bool {
		out = append(out, fmt.Sprintf("w %d=%v", k, v))
		return true
	})
	d.m.Range(kg, func(k int64, n int32, uk string, uv int) bool {
		out = append(out, fmt.Sprintf("m %d/%d/%s=%d", k, n, uk, uv))
		return true
	})
	slices.Sort(out)
	return out
}

// Differential runs one random sequence of operations on b and on ref,
// a backend taken to be right (the heap backend, say), both empty and owning
// every key group of DiffMaxParallelism, and fails t at the first result
// that differs. The operations are those of value and map tables (Get, Put,
// Delete, Range and Entries whose callbacks delete or overwrite the entry
// they are given, Clear, IsEmpty), declaring the tables again, and
// DropKeyGroup; if b is a state.BytesBackend, also its own Scan (whose
// count of keys must match ref's entries), direct Set and Delete of a
// table's key, and FlushCaches if b has that method. At the end it compares
// every key group.
func Differential(t *testing.T, b, ref state.Backend, o DiffOptions) {
	t.Helper()
	if b.KeyGroups() != all || ref.KeyGroups() != all {
		t.Fatalf("Differential needs backends of key groups %v", all)
	}
	if o.Keys <= 0 {
		o.Keys = 64
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	got, want := declareDiff(t, b), declareDiff(t, ref)
	bb, _ := b.(state.BytesBackend)
	flusher, _ := b.(interface{ FlushCaches() })
	uks := []string{"a", "b", "c", "dd", "e", "ffff", "g", "h"}
	var vid uint32
	if bb != nil {
		var err error
		vid, err = bb.TableID("diff-v", "value[int64,int32,string]")
		mustNoErr(t, err)
	}
	vkey := func(kg int, k int64, n int32) []byte {
		key := binary.BigEndian.AppendUint32([]byte{byte(kg >> 8), byte(kg)}, vid)
		key = mustCodec[int64](t).Append(key, k)
		return mustCodec[int32](t).Append(key, n)
	}
	for step := 0; step < o.Steps; step++ {
		k := int64(rng.IntN(o.Keys))
		kg := kgOfInt(k)
		n := int32(rng.IntN(3))
		uk := uks[rng.IntN(len(uks))]
		val := rng.IntN(1000)
		var op string
		fail := func(what string, g, w any) {
			t.Helper()
			t.Fatalf("step %d (seed %d), %s: %s = %v, want %v", step, o.Seed, op, what, g, w)
		}
		switch r := rng.IntN(100); {
		case r < 14:
			op = fmt.Sprintf("v.Get(%d, %d)", k, n)
			gv, gok := got.v.Get(kg, k, n)
			wv, wok := want.v.Get(kg, k, n)
			if gv != wv || gok != wok {
				fail("value", fmt.Sprint(gv, gok), fmt.Sprint(wv, wok))
			}
		case r < 26:
			v := fmt.Sprintf("%d-%s", val, strings.Repeat("x", val%40))
			op = fmt.Sprintf("v.Put(%d, %d, %s)", k, n, v)
			got.v.Put(kg, k, n, v)
			want.v.Put(kg, k, n, v)
		case r < 31:
			op = fmt.Sprintf("v.Delete(%d, %d)", k, n)
			got.v.Delete(kg, k, n)
			want.v.Delete(kg, k, n)
		case r < 39:
			op = fmt.Sprintf("w.Get(%d)", k)
			gv, gok := got.w.Get(kg, k, state.VoidNamespace{})
			wv, wok := want.w.Get(kg, k, state.VoidNamespace{})
			if gv.String() != wv.String() || gok != wok {
				fail("value", fmt.Sprint(gv, gok), fmt.Sprint(wv, wok))
			}
		case r < 47:
			// Read, modify a copy, put back: what operators do.
			op = fmt.Sprintf("w.Update(%d, %d)", k, val)
			for _, tb := range []*diffTables{got, want} {
				v, _ := tb.w.Get(kg, k, state.VoidNamespace{})
				nv := diffRec{A: v.A + int64(val), B: append(slices.Clip(v.B), uk)}
				if len(nv.B) > 6 {
					nv.B = nv.B[len(nv.B)-6:]
				}
				tb.w.Put(kg, k, state.VoidNamespace{}, nv)
			}
		case r < 50:
			op = fmt.Sprintf("w.Delete(%d)", k)
			got.w.Delete(kg, k, state.VoidNamespace{})
			want.w.Delete(kg, k, state.VoidNamespace{})
		case r < 58:
			op = fmt.Sprintf("m.Get(%d, %d, %s)", k, n, uk)
			gv, gok := got.m.Get(kg, k, n, uk)
			wv, wok := want.m.Get(kg, k, n, uk)
			if gv != wv || gok != wok {
				fail("value", fmt.Sprint(gv, gok), fmt.Sprint(wv, wok))
			}
		case r < 68:
			op = fmt.Sprintf("m.Put(%d, %d, %s, %d)", k, n, uk, val)
			got.m.Put(kg, k, n, uk, val)
			want.m.Put(kg, k, n, uk, val)
		case r < 72:
			op = fmt.Sprintf("m.Delete(%d, %d, %s)", k, n, uk)
			got.m.Delete(kg, k, n, uk)
			want.m.Delete(kg, k, n, uk)
		case r < 74:
			op = fmt.Sprintf("m.Clear(%d, %d)", k, n)
			got.m.Clear(kg, k, n)
			want.m.Clear(kg, k, n)
		case r < 78:
			op = fmt.Sprintf("m.IsEmpty(%d, %d)", k, n)
			if g, w := got.m.IsEmpty(kg, k, n), want.m.IsEmpty(kg, k, n); g != w {
				fail("empty", g, w)
			}
		case r < 82:
			// The callback deletes or overwrites some entries it is given.
			op = fmt.Sprintf("m.Entries(%d, %d, %d)", k, n, val)
			entries := func(tb *diffTables) []string {
				var out []string
				tb.m.Entries(kg, k, n, func(uk string, uv int) bool {
					out = append(out, fmt.Sprintf("%s=%d", uk, uv))
					switch (uv + val) % 4 {
					case 0:
						tb.m.Delete(kg, k, n, uk)
					case 1:
						tb.m.Put(kg, k, n, uk, uv+1)
					}
					return true
				})
				slices.Sort(out)
				return out
			}
			if g, w := entries(got), entries(want); !slices.Equal(g, w) {
				fail("entries", g, w)
			}
		case r < 86:
			op = fmt.Sprintf("Range(kg %d, %d)", kg, val)
			ranged := func(tb *diffTables) []string {
				var out []string
				tb.v.Range(kg, func(k int64, n int32, v string) bool {
					out = append(out, fmt.Sprintf("v %d/%d=%s", k, n, v))
					switch (int(k) + int(n) + val) % 3 {
					case 0:
						tb.v.Delete(kg, k, n)
					case 1:
						tb.v.Put(kg, k, n, v+"'")
					}
					return true
				})
				tb.w.Range(kg, func(k int64, _ state.VoidNamespace, v diffRec) bool {
					out = append(out, fmt.Sprintf("w %d=%v", k, v))
					if (int(k)+val)%5 == 0 {
						tb.w.Delete(kg, k, state.VoidNamespace{})
					}
					return true
				})
				tb.m.Range(kg, func(k int64, n int32, uk string, uv int) bool {
					out = append(out, fmt.Sprintf("m %d/%d/%s=%d", k, n, uk, uv))
					if (uv+val)%3 == 0 {
						tb.m.Put(kg, k, n, uk, uv+7)
					}
					return true
				})
				slices.Sort(out)
				return out
			}
			if g, w := ranged(got), ranged(want); !slices.Equal(g, w) {
				fail("entries", g, w)
			}
		case r < 88:
			op = fmt.Sprintf("DropKeyGroup(%d)", kg)
			state.DropKeyGroup(b, kg)
			state.DropKeyGroup(ref, kg)
		case r < 90:
			op = "declare again"
			got = declareDiff(t, b)
		case r < 93 && bb != nil:
			// A snapshot's scan must see every write.
			op = fmt.Sprintf("Scan(kg %d)", kg)
			count := 0
			bb.Scan([]byte{byte(kg >> 8), byte(kg)}, func(_, _ []byte) bool {
				count++
				return true
			})
			if w := len(want.dump(kg)); count != w {
				fail("keys", count, w)
			}
		case r < 95 && bb != nil:
			v := fmt.Sprintf("direct-%d", val)
			op = fmt.Sprintf("Set(v %d/%d, %s)", k, n, v)
			bb.Set(vkey(kg, k, n), mustCodec[string](t).Append(nil, v))
			want.v.Put(kg, k, n, v)
		case r < 97 && bb != nil:
			op = fmt.Sprintf("Delete(v %d/%d)", k, n)
			bb.Delete(vkey(kg, k, n))
			want.v.Delete(kg, k, n)
		case flusher != nil:
			op = "FlushCaches"
			flusher.FlushCaches()
		default:
			op = "nothing"
		}
		if o.Check != nil {
			o.Check(t, step, op)
		}
	}
	for kg := all.Start; kg < all.End; kg++ {
		if g, w := got.dump(kg), want.dump(kg); !slices.Equal(g, w) {
			t.Fatalf("at the end, key group %d holds\n%q\nwant\n%q", kg, g, w)
		}
	}
}

// DiffDump returns every entry of the tables Differential declares, in key
// group kg of b, as sorted strings: to compare a backend restored from a
// checkpoint with the reference.
func DiffDump(t *testing.T, b state.Backend, kg int) []string {
	t.Helper()
	return declareDiff(t, b).dump(kg)
}

func mustCodec[T any](t *testing.T) codec.Codec[T] {
	t.Helper()
	c, err := codec.Default[T]()
	mustNoErr(t, err)
	return c
}
