package pebble

import (
	"strings"
	"testing"

	"github.com/eddystream/eddy/internal/state"
)

func TestBackendsShareOneCache(t *testing.T) {
	if n := Budget().Backends; n != 0 {
		t.Fatalf("%d backends open before the test", n)
	}
	kgs := state.KeyGroupRange{Start: 0, End: 4}
	var bs []*Backend
	for range 3 {
		bs = append(bs, open(t, kgs, 4))
	}
	st := Budget()
	if st.Backends != 3 || st.Budget != testBudget || st.CacheMaxSize != testBudget {
		t.Errorf("Budget() = %+v", st)
	}
	for i, b := range bs {
		if b.popts.Cache != bs[0].popts.Cache || b.popts.FileCache != bs[0].popts.FileCache {
			t.Errorf("backend %d has its own cache", i)
		}
		// Memtables shrink as backends open: B/(2·n·3) clamped to [1, 64] MiB.
		if want := memTableSize(testBudget, i+1); b.popts.MemTableSize != want {
			t.Errorf("backend %d: memtable size %d, want %d", i, b.popts.MemTableSize, want)
		}
	}
	// Blocks read by every backend land in the one cache.
	for _, b := range bs {
		fill(t, b, 0, 2000, strings.Repeat("x", 100))
		b.FlushCaches()
		b.db.Flush()
		contents(t, b)
	}
	if st := Budget(); st.MemTableBytes == 0 || st.MemTableBytes > st.Budget {
		t.Errorf("memtables take %d bytes of a budget of %d", st.MemTableBytes, st.Budget)
	}
	if st := Budget(); st.CacheSize == 0 || st.CacheMisses == 0 {
		t.Errorf("shared cache unused: %+v", st)
	}
	if _, err := Open(t.TempDir(), kgs, 4, Options{MemoryBudget: 2 * testBudget}); err == nil || !strings.Contains(err.Error(), "differs from the process budget") {
		t.Errorf("open with another budget: %v", err)
	}
	for _, b := range bs {
		b.Close()
	}
	if st := Budget(); st.Backends != 0 || st.Budget != 0 {
		t.Errorf("after closing all: %+v", st)
	}
	// The next first backend may pick another budget.
	b, err := Open(t.TempDir(), kgs, 4, Options{MemoryBudget: 32 << 20, Backends: 4})
	if err != nil {
		t.Fatal(err)
	}
	if Budget().Budget != 32<<20 || b.popts.MemTableSize != memTableSize(32<<20, 4) {
		t.Errorf("budget %d, memtable %d", Budget().Budget, b.popts.MemTableSize)
	}
	b.Close()
}

func TestMemTableSizeFormula(t *testing.T) {
	for _, c := range []struct {
		budget int64
		n      int
		want   uint64
	}{
		{2 << 30, 1, 64 << 20},           // 2 GiB / 16 > 64 MiB: capped
		{1 << 30, 8, (1 << 30) / 128},    // 8 MiB
		{64 << 20, 1, (64 << 20) / 16},   // 4 MiB
		{64 << 20, 100, 1 << 20},         // floor
		{256 << 20, 2, (256 << 20) / 32}, // 8 MiB
	} {
		if got := memTableSize(c.budget, c.n); got != c.want {
			t.Errorf("memTableSize(%d, %d) = %d, want %d", c.budget, c.n, got, c.want)
		}
	}
	if b := DefaultMemoryBudget(); b < minMemoryBudget || b > DefaultMemoryBudgetCap {
		t.Errorf("DefaultMemoryBudget() = %d", b)
	}
}
