package runtime

import (
	"testing"

	"github.com/eddystream/eddy/internal/state"
)

// TestHashWriterRoutesByKeyGroupRanges checks that the hash exchange sends
// each record to the subtask whose key-group range (state.RangeOf, which
// keyed operators and restores use) holds the record's key group, with the
// key group beside it in the batch, for parallelisms that do and do not
// divide the max parallelism.
func TestHashWriterRoutesByKeyGroupRanges(t *testing.T) {
	hash := func(v uint64) uint64 { return v * 0x9E3779B97F4A7C15 }
	for _, c := range []struct{ p, maxP int }{{1, 128}, {3, 128}, {4, 128}, {7, 10}, {5, 5}} {
		outs := testChannels(c.p)
		w := newWriter(Hash, outs, newBatchPool[uint64](16), 16, hash, c.maxP, nil)
		in := make([]uint64, 1000)
		for v := range in {
			in[v] = uint64(v)
		}
		writeAll(t, w, in, 1000)
		seen := 0
		for i, ch := range outs {
			kgs := state.RangeOf(i, c.p, c.maxP)
			for len(ch.ch) > 0 {
				m := <-ch.ch
				b := m.payload.(*Batch[uint64])
				if len(b.KG) != len(b.Data) {
					t.Fatalf("p=%d maxP=%d: a batch of %d records carries %d key groups", c.p, c.maxP, len(b.Data), len(b.KG))
				}
				for j, v := range b.Data {
					seen++
					kg := state.KeyGroupOf(hash(v), c.maxP)
					if !kgs.Contains(kg) {
						t.Fatalf("p=%d maxP=%d: record %d of key group %d went to subtask %d owning %v", c.p, c.maxP, v, kg, i, kgs)
					}
					if int(b.KG[j]) != kg {
						t.Fatalf("p=%d maxP=%d: record %d of key group %d carries key group %d", c.p, c.maxP, v, kg, b.KG[j])
					}
				}
			}
		}
		if seen != 1000 {
			t.Fatalf("p=%d maxP=%d: %d records routed, want 1000", c.p, c.maxP, seen)
		}
	}
}

// testChannels returns p channels into one gate, each holding up to 10000
// messages, for a writer under test.
func testChannels(p int) []*inChannel {
	g := newGate()
	done := make(chan struct{})
	var outs []*inChannel
	for range p {
		outs = append(outs, g.addChannel(0, 10000, "up", func(any) {}, done))
	}
	g.finish()
	return outs
}

// writeAll sends in through w in batches of n records, then flushes w.
func writeAll[T any](t *testing.T, w *writer[T], in []T, n int) {
	t.Helper()
	for lo := 0; lo < len(in); lo += n {
		b := NewBatch[T](n)
		for _, v := range in[lo:min(lo+n, len(in))] {
			b.Append(v, NoTimestamp)
		}
		if err := w.ProcessBatch(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.flush(); err != nil {
		t.Fatal(err)
	}
}
