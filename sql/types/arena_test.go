package types

import (
	"testing"
	"unsafe"
)

// TestScratchArena checks that a scratch arena writes every row into the
// same memory, each row right when read before the next is written.
func TestScratchArena(t *testing.T) {
	rt := MustRowType(F("id", BigInt()), F("name", String()))
	a := NewScratchArena()
	w := NewRowWriter(rt, a)
	var starts []*byte
	for i, name := range []string{"ab", "a longer name than the first", "c"} {
		w.SetInt64(0, int64(i))
		w.SetString(1, name)
		r := w.Finish()
		if got := r.String(1); got != name {
			t.Fatalf("row %d: name %q, want %q", i, got, name)
		}
		if got := r.Int64(0); got != int64(i) {
			t.Fatalf("row %d: id %d", i, got)
		}
		starts = append(starts, unsafe.StringData(r.b))
	}
	if starts[0] != starts[1] || starts[1] != starts[2] {
		t.Fatal("the rows of a scratch arena are not in the same memory")
	}
}

// TestRecyclingArena checks that a recycling arena hands out new memory
// between rewinds, so that the rows written since the last rewind stay
// valid together, and its chunks again after each rewind, allocating no
// new chunk once it has enough.
func TestRecyclingArena(t *testing.T) {
	rt := MustRowType(F("id", BigInt()), F("name", String()))
	a := NewRecyclingArena(256)
	w := NewRowWriter(rt, a)
	const perRound = 40 // rows of 30–40 bytes: several chunks a round
	var firstRound []*byte
	for round := 0; round < 3; round++ {
		a.Rewind()
		var rows []Row
		var names []string
		for i := 0; i < perRound; i++ {
			name := string(rune('a'+round)) + string(make([]byte, i%7)) + "x"
			w.SetInt64(0, int64(round*perRound+i))
			w.SetString(1, name)
			rows = append(rows, w.Finish())
			names = append(names, name)
		}
		// Every row of the round is intact at the round's end.
		for i, r := range rows {
			if r.Int64(0) != int64(round*perRound+i) || r.String(1) != names[i] {
				t.Fatalf("round %d row %d: (%d, %q), want (%d, %q)", round, i, r.Int64(0), r.String(1), round*perRound+i, names[i])
			}
		}
		if round == 0 {
			for _, r := range rows {
				firstRound = append(firstRound, unsafe.StringData(r.b))
			}
			if len(a.chunks) < 2 {
				t.Fatalf("a round of %d rows took %d chunk(s) of 256 bytes; the test wants several", perRound, len(a.chunks))
			}
			continue
		}
		for i, r := range rows {
			if unsafe.StringData(r.b) != firstRound[i] {
				t.Fatalf("round %d row %d is not where row %d of the first round was", round, i, i)
			}
		}
	}
	if got := len(a.chunks); got > perRound*40/256+2 {
		t.Errorf("the arena holds %d chunks after three equal rounds", got)
	}
	// An arena that is not recycling ignores Rewind.
	plain := NewArena(256)
	pw := NewRowWriter(rt, plain)
	pw.SetInt64(0, 1)
	r1 := pw.Finish()
	plain.Rewind()
	pw.SetInt64(0, 2)
	r2 := pw.Finish()
	if r1.Int64(0) != 1 || r2.Int64(0) != 2 || unsafe.StringData(r1.b) == unsafe.StringData(r2.b) {
		t.Error("Rewind changed a plain arena")
	}
}

// TestOwnArena checks that an arena of NewOwnArena gives every row an
// allocation of its own (a chunked arena allocates none for most rows),
// and that the rows stay as written.
func TestOwnArena(t *testing.T) {
	rt := MustRowType(F("id", BigInt()), F("name", String()))
	for _, c := range []struct {
		name string
		a    *Arena
		want float64
	}{{"own", NewOwnArena(), 1}, {"chunked", NewArena(0), 0}} {
		w := NewRowWriter(rt, c.a)
		var last Row
		i := 0
		allocs := testing.AllocsPerRun(100, func() {
			w.SetInt64(0, int64(i))
			w.SetString(1, "row")
			last = w.Finish()
			i++
		})
		if allocs != c.want {
			t.Errorf("%s arena: %.1f allocations per row, want %.0f", c.name, allocs, c.want)
		}
		if r := last; r.Int64(0) != int64(i-1) || r.String(1) != "row" {
			t.Errorf("%s arena: the last row holds %d, %q", c.name, r.Int64(0), r.String(1))
		}
	}
}

// TestRecyclingArenaBound checks that a recycling arena keeps no more than
// maxRecycledChunks chunks from a burst of rows to the rounds after it,
// and that the rows written after the rewind are intact.
func TestRecyclingArenaBound(t *testing.T) {
	rt := MustRowType(F("id", BigInt()), F("name", String()))
	a := NewRecyclingArena(256)
	w := NewRowWriter(rt, a)
	write := func(n int) []Row {
		var rows []Row
		for i := 0; i < n; i++ {
			w.SetInt64(0, int64(i))
			w.SetString(1, "name of row")
			rows = append(rows, w.Finish())
		}
		return rows
	}
	write(20 * maxRecycledChunks) // rows of ~40 bytes: about 3 chunks for 20 rows
	if len(a.chunks) <= maxRecycledChunks {
		t.Fatalf("the burst took %d chunks; the test wants more than %d", len(a.chunks), maxRecycledChunks)
	}
	a.Rewind()
	if len(a.chunks) != maxRecycledChunks {
		t.Errorf("after the rewind the arena keeps %d chunks; want %d", len(a.chunks), maxRecycledChunks)
	}
	rows := write(40 * maxRecycledChunks)
	for i, r := range rows {
		if r.Int64(0) != int64(i) || r.String(1) != "name of row" {
			t.Fatalf("row %d after the rewind: (%d, %q)", i, r.Int64(0), r.String(1))
		}
	}
}
