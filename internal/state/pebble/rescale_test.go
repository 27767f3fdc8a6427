package pebble

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/memtest"
)

const (
	rescaleMaxP = 32
	rescaleKeys = 3000
)

// expected returns the contents fill(0, rescaleKeys, "a") gives the key
// groups kgs.
func expected(t *testing.T, kgs state.KeyGroupRange) map[int][]string {
	m := memtest.New(kgs, rescaleMaxP)
	fill(t, m, 0, rescaleKeys, "a")
	return contents(t, m)
}

// checkOwned checks that b holds exactly the expected contents of its key
// groups and no key outside them, and that its table "extra" holds the keys
// of its key groups below 100.
func checkOwned(t *testing.T, b *Backend) {
	t.Helper()
	if got, want := contents(t, b), expected(t, b.KeyGroups()); !equalContents(got, want) {
		t.Errorf("backend of %v: contents differ (%d vs %d key groups)", b.KeyGroups(), len(got), len(want))
		for kg := range want {
			if len(got[kg]) != len(want[kg]) {
				t.Errorf("  key group %d: %d entries, want %d", kg, len(got[kg]), len(want[kg]))
			}
		}
	}
	b.Scan(nil, func(k, _ []byte) bool {
		if kg := int(k[0])<<8 | int(k[1]); !b.KeyGroups().Contains(kg) {
			t.Fatalf("backend of %v holds a key of key group %d", b.KeyGroups(), kg)
		}
		return true
	})
	extra, err := state.NewValueTable[int64, state.VoidNamespace, int64](b, "extra", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k := int64(0); k < 100; k++ {
		kg := kgOf(k, rescaleMaxP)
		if !b.KeyGroups().Contains(kg) {
			continue
		}
		if v, ok := extra.Get(kg, k, state.VoidNamespace{}); !ok || v != -k {
			t.Errorf("extra[%d] = %d, %v", k, v, ok)
		}
	}
}

// rescale checkpoints olds and builds p new backends from the checkpoints.
func rescale(t *testing.T, olds []*Backend, p int) []*Backend {
	t.Helper()
	root := t.TempDir()
	var cks []string
	for i, b := range olds {
		ck := filepath.Join(root, fmt.Sprintf("old%d", i))
		if _, err := b.Checkpoint(ck); err != nil {
			t.Fatal(err)
		}
		cks = append(cks, ck)
		b.Close()
	}
	var news []*Backend
	for i := range p {
		kgs := state.RangeOf(i, p, rescaleMaxP)
		b, err := Rescale(filepath.Join(root, fmt.Sprintf("new%d", i)), cks, kgs, rescaleMaxP, testOpts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		news = append(news, b)
	}
	return news
}

func TestRescale(t *testing.T) {
	var olds []*Backend
	for i := range 4 {
		b := open(t, state.RangeOf(i, 4, rescaleMaxP), rescaleMaxP)
		if i == 2 {
			// Declared in another order: other table ids, renumbered by
			// Rescale.
			state.NewMapTable[int64, int32, string, int64](b, "m", nil, nil, nil, nil)
		}
		fill(t, b, 0, rescaleKeys, "a")
		if i == 3 {
			b.TableID("only-in-3", "value[x]")
		}
		extra, _ := state.NewValueTable[int64, state.VoidNamespace, int64](b, "extra", nil, nil, nil)
		for k := int64(0); k < 100; k++ {
			if kg := kgOf(k, rescaleMaxP); b.KeyGroups().Contains(kg) {
				extra.Put(kg, k, state.VoidNamespace{}, -k)
			}
		}
		if i%2 == 0 {
			b.db.Flush() // some state in SSTs, some in memtables
		}
		checkOwned(t, b)
		olds = append(olds, b)
	}
	for _, p := range []int{2, 3, 4, 1} {
		t.Logf("rescale %d → %d", len(olds), p)
		news := rescale(t, olds, p)
		for _, b := range news {
			checkOwned(t, b)
			if _, err := b.TableID("only-in-3", "value[x]"); err != nil {
				t.Error(err)
			}
		}
		olds = news
	}
	// The rescaled backend keeps working and checkpoints again.
	b := olds[0]
	fill(t, b, 0, rescaleKeys, "a")
	checkOwned(t, b)
}

func TestRescaleErrors(t *testing.T) {
	root := t.TempDir()
	var cks []string
	for i := range 2 {
		b := open(t, state.RangeOf(i, 2, rescaleMaxP), rescaleMaxP)
		fill(t, b, 0, 100, "a")
		ck := filepath.Join(root, fmt.Sprint(i))
		if _, err := b.Checkpoint(ck); err != nil {
			t.Fatal(err)
		}
		cks = append(cks, ck)
	}
	all := state.KeyGroupRange{Start: 0, End: rescaleMaxP}
	if _, err := Rescale(filepath.Join(root, "n1"), cks[:1], all, rescaleMaxP, testOpts); err == nil || !strings.Contains(err.Error(), "in none of the checkpoints") {
		t.Errorf("rescale with a source missing: %v", err)
	}
	if _, err := Rescale(filepath.Join(root, "n2"), []string{cks[0], cks[0]}, all, rescaleMaxP, testOpts); err == nil || !strings.Contains(err.Error(), "overlaps") {
		t.Errorf("rescale with overlapping sources: %v", err)
	}
	if _, err := Rescale(filepath.Join(root, "n3"), cks, state.KeyGroupRange{Start: 0, End: 64}, 64, testOpts); err == nil || !strings.Contains(err.Error(), "max parallelism") {
		t.Errorf("rescale to another max parallelism: %v", err)
	}
	// A table with different kinds in two sources.
	a := open(t, state.RangeOf(0, 2, rescaleMaxP), rescaleMaxP)
	a.TableID("t", "value[a]")
	c := open(t, state.RangeOf(1, 2, rescaleMaxP), rescaleMaxP)
	c.TableID("t", "value[c]")
	fill(t, a, 0, 100, "a")
	var cks2 []string
	for i, b := range []*Backend{a, c} {
		ck := filepath.Join(root, fmt.Sprint("k", i))
		if _, err := b.Checkpoint(ck); err != nil {
			t.Fatal(err)
		}
		cks2 = append(cks2, ck)
	}
	if _, err := Rescale(filepath.Join(root, "n4"), cks2, all, rescaleMaxP, testOpts); !errors.Is(err, state.ErrIncompatibleTable) {
		t.Errorf("rescale with a table of two kinds: %v", err)
	}
	if n := Budget().Backends; n != 4 {
		t.Errorf("%d backends open after failed rescales, want 4", n)
	}
}

// The base of a rescale keeps its SSTs under their names, so the files
// already uploaded for its checkpoint need not be uploaded again.
func TestRescaleKeepsBaseFiles(t *testing.T) {
	root := t.TempDir()
	var cks []string
	for i := range 2 {
		b := open(t, state.RangeOf(i, 2, rescaleMaxP), rescaleMaxP)
		fill(t, b, 0, rescaleKeys, "a")
		ck := filepath.Join(root, fmt.Sprint("old", i))
		if _, err := b.Checkpoint(ck); err != nil {
			t.Fatal(err)
		}
		cks = append(cks, ck)
	}
	// New subtask 0 of 3 lies within old subtask 0: the base, excised.
	nb, err := Rescale(filepath.Join(root, "new"), cks, state.RangeOf(0, 3, rescaleMaxP), rescaleMaxP, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer nb.Close()
	if nb.RestoredFrom() != cks[0] {
		t.Errorf("RestoredFrom = %q, want %q", nb.RestoredFrom(), cks[0])
	}
	ci, err := ReadCheckpointInfo(cks[0])
	if err != nil {
		t.Fatal(err)
	}
	uploaded := map[string]string{}
	for f := range ci.Files {
		// The SSTs (the value log's segments of key groups the new
		// subtask does not hold may be dropped).
		if IsShared(f) && strings.HasSuffix(f, ".sst") {
			uploaded[f] = "old0/" + f
		}
	}
	files, err := nb.Checkpoint(filepath.Join(root, "new-ck"))
	if err != nil {
		t.Fatal(err)
	}
	plan := PlanUpload(files, uploaded)
	if len(plan.Reuse) == 0 || len(plan.Reuse) != len(uploaded) {
		t.Errorf("reuses %d of the base's %d SSTs: %+v", len(plan.Reuse), len(uploaded), plan)
	}
	// Only the flush of the new metadata is a new SST.
	if got, want := contents(t, nb), expected(t, nb.KeyGroups()); !equalContents(got, want) {
		t.Error("contents differ")
	}
}
