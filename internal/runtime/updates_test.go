package runtime

import (
	"testing"

	"github.com/eddystream/eddy/changelog"
)

// kindedRow is a record type of its own that carries a change kind.
type kindedRow struct {
	k changelog.Kind
	v int
}

func (r kindedRow) RowKind() changelog.Kind { return r.k }

// TestUpdateBeforeOf checks which record types are told apart as -U.
func TestUpdateBeforeOf(t *testing.T) {
	if UpdateBeforeOf[int]() != nil || UpdateBeforeOf[*changelog.Change[int]]() != nil {
		t.Fatal("types without a change kind have a -U test")
	}
	c := UpdateBeforeOf[changelog.Change[string]]()
	if !c(changelog.Of(changelog.UpdateBefore, "x")) || c(changelog.Of(changelog.UpdateAfter, "x")) {
		t.Fatal("changelog.Change: -U not told apart")
	}
	k := UpdateBeforeOf[kindedRow]()
	if !k(kindedRow{k: changelog.UpdateBefore}) || k(kindedRow{k: changelog.Delete}) {
		t.Fatal("a Kinded type: -U not told apart")
	}
}

// TestWritersKeepUpdatesInOneBatch sends a changelog full of updates through
// every kind of exchange, with batches of 4 records: no batch may end with a
// -U unless the input did, and the +U after a -U must follow it in the same
// batch (rebalancing sends it to the same subtask).
func TestWritersKeepUpdatesInOneBatch(t *testing.T) {
	var in []changelog.Change[int]
	for i := range 200 {
		if i%3 == 0 {
			in = append(in, changelog.Of(changelog.Insert, i))
			continue
		}
		in = append(in, changelog.Of(changelog.UpdateBefore, i), changelog.Of(changelog.UpdateAfter, i))
	}
	for _, mode := range []Partitioning{Forward, Rebalance, Hash, Broadcast} {
		p := 3
		if mode == Forward {
			p = 1
		}
		outs := testChannels(p)
		var hash func(changelog.Change[int]) uint64
		if mode == Hash {
			hash = func(c changelog.Change[int]) uint64 { return uint64(c.Row) * 0x9E3779B97F4A7C15 }
		}
		w := newWriter(mode, outs, newBatchPool[changelog.Change[int]](4), 4, hash, 128, nil)
		// Input batches of 7 records: some of them end between the halves
		// of an update, as the input of an exchange never does; the writer
		// must still not cut a batch there.
		writeAll(t, w, in, 7)
		seen := 0
		for i, ch := range outs {
			for len(ch.ch) > 0 {
				b := (<-ch.ch).payload.(*Batch[changelog.Change[int]])
				for j, c := range b.Data {
					seen++
					if c.Kind != changelog.UpdateBefore {
						continue
					}
					if j+1 == len(b.Data) {
						t.Fatalf("%v: a batch of subtask %d ends with %v", mode, i, c)
					}
					if n := b.Data[j+1]; n != changelog.Of(changelog.UpdateAfter, c.Row) {
						t.Fatalf("%v: %v is followed by %v in a batch of subtask %d", mode, c, n, i)
					}
				}
			}
		}
		want := len(in)
		if mode == Broadcast {
			want *= p
		}
		if seen != want {
			t.Fatalf("%v: %d records sent, want %d", mode, seen, want)
		}
	}
}
