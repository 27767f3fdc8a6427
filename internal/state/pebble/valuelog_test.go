package pebble

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	lsm "github.com/cockroachdb/pebble/v2"

	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/hashlog"
	"github.com/eddystream/eddy/internal/state/memtest"
)

// smallSegOpts gives memtables, and so value log segments, of 1 MiB: the
// budget of the package's tests shared by 4 backends.
var smallSegOpts = Options{MemoryBudget: testBudget, Backends: 4}

// openSmall opens a backend whose value log has 1 MiB segments.
func openSmall(t testing.TB, kgs state.KeyGroupRange, maxP int) *Backend {
	t.Helper()
	b, err := Open(t.TempDir(), kgs, maxP, smallSegOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if got := b.vlog.SegmentSize(); got != 1<<20 {
		t.Fatalf("value log segments of %d bytes, want 1 MiB", got)
	}
	return b
}

// rawKey returns the key of table id in key group kg with the rest suffix.
func rawKey(kg int, id uint32, suffix string) []byte {
	return append(binary.BigEndian.AppendUint32(kgKey(kg), id), suffix...)
}

// tableID declares a table on b.
func tableID(t testing.TB, b *Backend, name, kind string) uint32 {
	t.Helper()
	id, err := b.TableID(name, kind)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// kvPair is one entry of a model.
type kvPair struct{ k, v string }

// sortedModel returns the entries of model whose keys start with prefix,
// in key order.
func sortedModel(model map[string]string, prefix []byte) []kvPair {
	var out []kvPair
	for k, v := range model {
		if strings.HasPrefix(k, string(prefix)) {
			out = append(out, kvPair{k, v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].k < out[j].k })
	return out
}

// scanAll returns what b.Scan(prefix) visits, checking that keys strictly
// increase.
func scanAll(t *testing.T, b *Backend, prefix []byte) []kvPair {
	t.Helper()
	var out []kvPair
	b.Scan(prefix, func(k, v []byte) bool {
		if n := len(out); n > 0 && out[n-1].k >= string(k) {
			t.Errorf("Scan(%x): key %x after %x", prefix, k, out[n-1].k)
		}
		out = append(out, kvPair{string(k), string(v)})
		return true
	})
	return out
}

// checkScan compares b.Scan(prefix) with the model.
func checkScan(t *testing.T, b *Backend, model map[string]string, prefix []byte) {
	t.Helper()
	got, want := scanAll(t, b, prefix), sortedModel(model, prefix)
	if !slices.Equal(got, want) {
		t.Errorf("Scan(%x): %d entries, want %d", prefix, len(got), len(want))
		for i := 0; i < max(len(got), len(want)) && i < 5; i++ {
			var g, w kvPair
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w {
				t.Errorf("  #%d: got %x=%.20q, want %x=%.20q", i, g.k, g.v, w.k, w.v)
			}
		}
	}
}

// checkPlacement checks that the value log holds exactly the model's keys
// of value tables and Pebble exactly the others.
func checkPlacement(t *testing.T, b *Backend, model map[string]string) {
	t.Helper()
	inLog := 0
	for k := range model {
		if b.inLog([]byte(k)) {
			inLog++
		}
	}
	if n := b.vlog.Len(); n != inLog {
		t.Errorf("value log holds %d keys, want %d", n, inLog)
	}
	it, err := b.db.NewIter(&lsm.IterOptions{UpperBound: metaPrefix})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if b.inLog(it.Key()) {
			t.Errorf("Pebble holds key %x of a value table", it.Key())
		}
		n++
	}
	if want := len(model) - inLog; n != want {
		t.Errorf("Pebble holds %d data keys, want %d", n, want)
	}
}

// Value and map tables with interleaved ids, in key groups on both sides of
// a first-byte boundary: scans of every prefix length merge the value log
// and Pebble in key order.
func TestValueLogMergedScan(t *testing.T) {
	const maxP = 512
	kgs := state.KeyGroupRange{Start: 250, End: 262}
	b := openSmall(t, kgs, maxP)
	m1 := tableID(t, b, "m1", "map[x]")
	v1 := tableID(t, b, "v1", "value[x]")
	m2 := tableID(t, b, "m2", "map[x]")
	v2 := tableID(t, b, "v2", "value[y]")
	if !(m1 < v1 && v1 < m2 && m2 < v2) {
		t.Fatalf("ids m1=%d v1=%d m2=%d v2=%d do not interleave", m1, v1, m2, v2)
	}
	const undeclared = 9 // raw keys of no declared table: Pebble's
	tables := []uint32{m1, v1, m2, v2, undeclared}
	suffixes := []string{"", "\x00", "a", "a\x00", "ab", "b", "\x7f", "\xff", "\xff\xff", "\xff\xff\xff"}
	for i := range 10 {
		suffixes = append(suffixes, fmt.Sprintf("k%03d", i*7%10))
	}
	model := map[string]string{}
	for kg := kgs.Start; kg < kgs.End; kg++ {
		for _, id := range tables {
			for i, s := range suffixes {
				k := rawKey(kg, id, s)
				v := "val:" + hex.EncodeToString(k)
				if i == 1 {
					v = "" // empty values too
				}
				b.Set(k, []byte(v))
				model[string(k)] = v
			}
		}
	}
	checkPlacement(t, b, model)
	prefixes := [][]byte{
		nil, {0x00}, {0x01}, {0x02}, kgKey(250), kgKey(255), kgKey(256), kgKey(261), kgKey(300),
		kgKey(257)[:1],
		append(kgKey(258), 0), append(kgKey(258), 0, 0), append(kgKey(258), 0, 0, 0),
		rawKey(259, v1, ""), rawKey(259, m1, ""), rawKey(259, v2, ""), rawKey(259, undeclared, ""),
		rawKey(259, v1, "a"), rawKey(259, m2, "a"), rawKey(259, v1, "\xff"), rawKey(259, 77, ""),
	}
	for _, p := range prefixes {
		checkScan(t, b, model, p)
	}

	// Stopping early, at every position of a key group and at some of the
	// whole backend.
	stops := func(prefix []byte, every int) {
		want := sortedModel(model, prefix)
		for n := 1; n <= len(want); n += every {
			var got []kvPair
			b.Scan(prefix, func(k, v []byte) bool {
				got = append(got, kvPair{string(k), string(v)})
				return len(got) < n
			})
			if !slices.Equal(got, want[:n]) {
				t.Errorf("Scan(%x) stopped after %d: got %d entries, differ", prefix, n, len(got))
			}
		}
	}
	stops(kgKey(256), 1)
	stops(nil, 37)
	stops([]byte{0x01}, 11)

	// fn Sets or Deletes the key it is given (values large enough to seal
	// segments during the scan) and Gets other keys; the scan visits the
	// entries present when it started.
	before := sortedModel(model, nil)
	var visited []kvPair
	i := 0
	big := strings.Repeat("z", 4<<10)
	probe := string(rawKey(261, v2, "b"))
	b.Scan(nil, func(k, v []byte) bool {
		visited = append(visited, kvPair{string(k), string(v)})
		switch i % 3 {
		case 0:
			b.Delete(k)
			delete(model, string(k))
		case 1:
			nv := big + string(k)
			b.Set(k, []byte(nv))
			model[string(k)] = nv
		}
		i++
		if pv, ok := b.Get([]byte(probe)); ok != hasKey(model, probe) || (ok && string(pv) != model[probe]) {
			t.Fatalf("Get(%x) during the scan = %.20q, %v; want %.20q", probe, pv, ok, model[probe])
		}
		return true
	})
	if !slices.Equal(visited, before) {
		t.Errorf("scan with writes visited %d entries, want the %d present at its start", len(visited), len(before))
	}
	checkScan(t, b, model, nil)
	checkPlacement(t, b, model)
	for _, p := range prefixes {
		checkScan(t, b, model, p)
	}

	// DeletePrefix of a key group, of a table in a key group, of a first
	// byte.
	dropPrefix := func(prefix []byte) {
		b.DeletePrefix(prefix)
		for k := range model {
			if strings.HasPrefix(k, string(prefix)) {
				delete(model, k)
			}
		}
		checkScan(t, b, model, nil)
		checkPlacement(t, b, model)
	}
	dropPrefix(kgKey(257))
	if n := len(scanAll(t, b, kgKey(257))); n != 0 {
		t.Errorf("%d keys left in key group 257", n)
	}
	if len(sortedModel(model, kgKey(256))) == 0 || len(sortedModel(model, kgKey(258))) == 0 {
		t.Fatal("neighbouring key groups emptied")
	}
	dropPrefix(rawKey(258, v1, ""))
	dropPrefix(rawKey(258, m2, ""))
	dropPrefix(rawKey(259, v2, "k"))
	dropPrefix([]byte{0x00})
	for _, p := range prefixes {
		checkScan(t, b, model, p)
	}
	// The deletes and overwrites survive a checkpoint: the restored log,
	// replayed from the segments, holds the same entries.
	ck := filepath.Join(t.TempDir(), "ck")
	if _, err := b.Checkpoint(ck); err != nil {
		t.Fatal(err)
	}
	r, err := Restore(ck, kgs, maxP, smallSegOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	checkScan(t, r, model, nil)
	checkPlacement(t, r, model)
	for _, p := range prefixes {
		checkScan(t, r, model, p)
	}
	dropPrefix(nil)
	if len(model) != 0 {
		t.Fatalf("model holds %d keys after DeletePrefix(nil)", len(model))
	}
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

// Get of value-table keys: the value, in the active segment and in sealed
// ones; values written back from Get; missing keys.
func TestValueLogGet(t *testing.T) {
	kgs := state.KeyGroupRange{Start: 0, End: 4}
	b := openSmall(t, kgs, 4)
	v := tableID(t, b, "v", "value[x]")
	m := tableID(t, b, "m", "map[x]")
	val := func(i, round int) string {
		return fmt.Sprintf("%06d/%d/", i, round) + strings.Repeat(string(rune('a'+i%26)), 300)
	}
	key := func(i int) []byte { return rawKey(i%4, v, fmt.Sprintf("k%06d", i)) }
	const n = 10000 // about 3 MiB: sealed segments and an active one
	for i := range n {
		b.Set(key(i), []byte(val(i, 0)))
	}
	b.Set(rawKey(1, m, "x"), []byte("in pebble"))
	for i := range n {
		got, ok := b.Get(key(i))
		if !ok || string(got) != val(i, 0) {
			t.Fatalf("Get(%x) = %.20q, %v", key(i), got, ok)
		}
		// The slice holds until the next call: read it again after other
		// work that does not call the backend.
		_ = bytes.Count(got, []byte("a"))
		if string(got) != val(i, 0) {
			t.Fatalf("Get(%x) changed before the next call: %.20q", key(i), got)
		}
	}
	if got, ok := b.Get(rawKey(1, m, "x")); !ok || string(got) != "in pebble" {
		t.Errorf("Get of a map-table key = %q, %v", got, ok)
	}
	// Values from Get written back under the same key and under other
	// keys, while segments seal and compact.
	other := func(i int) []byte { return rawKey(i%4, v, fmt.Sprintf("c%06d", i)) }
	for round := 1; round <= 4; round++ {
		for i := range n {
			got, ok := b.Get(key(i))
			if !ok {
				t.Fatalf("round %d: %x missing", round, key(i))
			}
			b.Set(key(i), got)
			got, _ = b.Get(key(i))
			b.Set(other(i), got)
		}
		for i := range n {
			for _, k := range [][]byte{key(i), other(i)} {
				if got, ok := b.Get(k); !ok || string(got) != val(i, 0) {
					t.Fatalf("round %d: Get(%x) = %.20q, %v, want %.20q", round, k, got, ok, val(i, 0))
				}
			}
		}
	}
	// Missing keys: never written, deleted, deleted by prefix, of another
	// table.
	b.Delete(key(5))
	b.DeletePrefix(rawKey(2, v, ""))
	for _, k := range [][]byte{rawKey(0, v, "nope"), key(5), key(2), key(6), rawKey(3, v, ""), rawKey(1, m, "nope"), rawKey(1, 99, "x")} {
		if got, ok := b.Get(k); ok {
			t.Errorf("Get(%x) of a missing key = %.20q, true", k, got)
		}
	}
	if got, ok := b.Get(key(7)); !ok || len(got) == 0 {
		t.Errorf("Get(%x) after deletes = %.20q, %v", key(7), got, ok)
	}
}

// segFiles returns the number and total size of the value log's segment
// files in dir.
func segFiles(t *testing.T, dir string) (n int, bytes int64) {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "vlog-*.seg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range m {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		bytes += st.Size()
	}
	return len(m), bytes
}

// liveLogBytes returns the bytes of the live records of b's value log.
func liveLogBytes(t *testing.T, b *Backend) int64 {
	t.Helper()
	var n int64
	uv := func(x int) int64 { return int64(len(binary.AppendUvarint(nil, uint64(x)))) }
	if err := b.vlog.Scan(nil, func(k, v []byte) bool {
		n += 4 + uv(len(k)) + uv(len(v)) + int64(len(k)+len(v))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// delSome deletes the entries of keys [from, to) for which del holds from
// the value table "v" of b (as fill declares it), skipping keys outside b's
// key groups.
func delSome(t testing.TB, b state.Backend, from, to int64, del func(int64) bool) {
	t.Helper()
	vt, err := state.NewValueTable[int64, state.VoidNamespace, string](b, "v", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k := from; k < to; k++ {
		if kg := kgOf(k, b.MaxParallelism()); b.KeyGroups().Contains(kg) && del(k) {
			vt.Delete(kg, k, state.VoidNamespace{})
		}
	}
}

// A checkpoint of several segments restored for half its key groups, then
// written over and over: compaction moves the loaded records that are
// still live, the segment files stay within a few times the live bytes,
// deletes (before the checkpoint and after the restore) stay deleted, and
// the state checkpoints and restores again.
func TestValueLogRestoreSubsetThenWrite(t *testing.T) {
	const maxP = 16
	const keys = 24000
	all := state.KeyGroupRange{Start: 0, End: maxP}
	val := func(c byte) string { return strings.Repeat(string(c), 200) }
	// before is what the checkpoint holds; round is what the restored
	// backend does next: the keys below keys/2 are written again, and a
	// part of those above (which keep their loaded records) deleted.
	before := func(b state.Backend) {
		fill(t, b, 0, keys, val('a'))
		delSome(t, b, 0, keys, func(k int64) bool { return k%7 == 0 })
	}
	const rounds = 8
	round := func(b state.Backend, r int) {
		fill(t, b, 0, keys/2, val(byte('b'+r)))
		delSome(t, b, keys/2, keys, func(k int64) bool { return k%11 == int64(r) })
		if r == rounds-1 {
			// Some deleted keys come back.
			fill(t, b, keys/2, keys/2+700, val('Z'))
		}
	}
	modelOf := func(kgs state.KeyGroupRange, upTo int) map[int][]string {
		m := memtest.New(kgs, maxP)
		before(m)
		for r := range upTo {
			round(m, r)
		}
		return contents(t, m)
	}

	b := openSmall(t, all, maxP)
	before(b)
	ck := filepath.Join(t.TempDir(), "ck")
	files, err := b.Checkpoint(ck)
	if err != nil {
		t.Fatal(err)
	}
	if segs := logSegments(files); len(segs) < 4 {
		t.Fatalf("checkpoint holds %d segments, want several: %v", len(segs), files)
	}
	b.Close()

	half := state.KeyGroupRange{Start: 0, End: maxP / 2}
	r, err := Restore(ck, half, maxP, smallSegOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !equalContents(contents(t, r), modelOf(half, 0)) {
		t.Fatal("restored contents differ")
	}
	segSize := int64(r.vlog.SegmentSize())
	// The rounds write about 9 MiB through write-backs of a small object
	// cache.
	r.cacheOverride = 256 << 10
	for i := range rounds {
		round(r, i)
		r.FlushCaches()
		n, size := segFiles(t, r.Dir())
		live := liveLogBytes(t, r)
		t.Logf("round %d: %d segment files, %d bytes, %d live", i, n, size, live)
		if size > 4*live+4*segSize {
			t.Errorf("round %d: %d segment files of %d bytes for %d live bytes (segments of %d)", i, n, size, live, segSize)
		}
	}
	want := modelOf(half, rounds)
	if !equalContents(contents(t, r), want) {
		t.Fatal("contents differ after writing")
	}

	// Checkpoint again: the whole range and a subset restore.
	root := t.TempDir()
	ck2, ck3 := filepath.Join(root, "ck2"), filepath.Join(root, "ck3")
	for _, d := range []string{ck2, ck3} {
		if _, err := r.Checkpoint(d); err != nil {
			t.Fatal(err)
		}
	}
	r2, err := Restore(ck2, half, maxP, smallSegOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if !equalContents(contents(t, r2), want) {
		t.Error("contents differ after a second checkpoint and restore")
	}
	sub := state.KeyGroupRange{Start: 3, End: 7}
	r3, err := Restore(ck3, sub, maxP, smallSegOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer r3.Close()
	if !equalContents(contents(t, r3), modelOf(sub, rounds)) {
		t.Error("contents of a subset differ after a second checkpoint and restore")
	}
	// The restored backend writes on, and round-trips once more.
	r2.cacheOverride = 256 << 10
	m := memtest.New(half, maxP)
	before(m)
	for i := range rounds {
		round(m, i)
	}
	for _, be := range []state.Backend{r2, m} {
		fill(t, be, 0, keys, val('z'))
		delSome(t, be, 0, keys, func(k int64) bool { return k%3 == 0 })
	}
	want = contents(t, m)
	if !equalContents(contents(t, r2), want) {
		t.Error("contents differ after writing to the second restore")
	}
	ck4 := filepath.Join(root, "ck4")
	if _, err := r2.Checkpoint(ck4); err != nil {
		t.Fatal(err)
	}
	r4, err := Restore(ck4, half, maxP, smallSegOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer r4.Close()
	if !equalContents(contents(t, r4), want) {
		t.Error("contents differ after a third checkpoint and restore")
	}
}

// dumpTables returns every data entry of b as "table/hex(key group and
// rest)" → value, with tables named, so that backends with other table
// ids compare.
func dumpTables(t *testing.T, b *Backend) map[string]string {
	t.Helper()
	names := map[uint32]string{}
	for name, id := range b.TableIDs() {
		names[id] = name
	}
	out := map[string]string{}
	b.Scan(nil, func(k, v []byte) bool {
		name, ok := names[binary.BigEndian.Uint32(k[2:6])]
		if !ok {
			t.Errorf("key %x of no declared table", k)
			return true
		}
		out[name+"/"+hex.EncodeToString(k[:2])+hex.EncodeToString(k[6:])] = string(v)
		return true
	})
	return out
}

// Two sources that declare their tables in different orders, so that one
// name has other ids, rescaled into one backend and into ranges with
// either source as the base: the entries of value and map tables, by
// table name, are the union.
func TestValueLogRescaleRenumbers(t *testing.T) {
	const maxP = rescaleMaxP
	decls := [][][2]string{
		{{"m", "map[x]"}, {"v", "value[x]"}, {"w", "value[y]"}, {"n", "map[y]"}, {"only-a", "value[a]"}},
		{{"w", "value[y]"}, {"n", "map[y]"}, {"only-c", "value[c]"}, {"v", "value[x]"}, {"m", "map[x]"}},
	}
	root := t.TempDir()
	want := map[string]string{}
	var cks []string
	for i, d := range decls {
		b := openSmall(t, state.RangeOf(i, 2, maxP), maxP)
		for _, tb := range d {
			id := tableID(t, b, tb[0], tb[1])
			kgs := b.KeyGroups()
			for kg := kgs.Start; kg < kgs.End; kg++ {
				for j := range 40 {
					rest := fmt.Sprintf("key%03d", j*13%40)
					v := fmt.Sprintf("%s/%d/%d/", tb[0], kg, j) + strings.Repeat("p", j*50)
					b.Set(rawKey(kg, id, rest), []byte(v))
					want[tb[0]+"/"+hex.EncodeToString(kgKey(kg))+hex.EncodeToString([]byte(rest))] = v
				}
			}
		}
		if i == 0 {
			b.db.Flush()
		}
		ck := filepath.Join(root, fmt.Sprint("src", i))
		if _, err := b.Checkpoint(ck); err != nil {
			t.Fatal(err)
		}
		cks = append(cks, ck)
	}
	inRange := func(kgs state.KeyGroupRange) map[string]string {
		out := map[string]string{}
		for k, v := range want {
			_, rest, _ := strings.Cut(k, "/")
			kgBytes, _ := hex.DecodeString(rest[:4])
			if kgs.Contains(int(binary.BigEndian.Uint16(kgBytes))) {
				out[k] = v
			}
		}
		return out
	}
	for i, kgs := range []state.KeyGroupRange{
		{Start: 0, End: maxP},  // base: source 0 (equal overlaps)
		{Start: 8, End: maxP},  // base: source 1, source 0 renumbered
		{Start: 0, End: 24},    // base: source 0, source 1 renumbered
		{Start: 16, End: maxP}, // source 1 alone
	} {
		nb, err := Rescale(filepath.Join(root, fmt.Sprint("new", i)), cks, kgs, maxP, smallSegOpts)
		if err != nil {
			t.Fatal(err)
		}
		got, w := dumpTables(t, nb), inRange(kgs)
		if len(got) != len(w) {
			t.Errorf("rescale to %v: %d entries, want %d", kgs, len(got), len(w))
		}
		for k, v := range w {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("rescale to %v: %s = %.20q, %v; want %.20q", kgs, k, g, ok, v)
				break
			}
		}
		// Value tables' entries are in the log, map tables' in Pebble.
		model := map[string]string{}
		nb.Scan(nil, func(k, v []byte) bool { model[string(k)] = string(v); return true })
		checkPlacement(t, nb, model)
		// Point reads through the renumbered ids.
		ids := nb.TableIDs()
		for _, name := range []string{"v", "w", "only-a", "only-c", "m"} {
			kg := kgs.End - 1
			rest := "key007"
			k := name + "/" + hex.EncodeToString(kgKey(kg)) + hex.EncodeToString([]byte(rest))
			wv, wok := w[k]
			gv, gok := nb.Get(rawKey(kg, ids[name], rest))
			if gok != wok || string(gv) != wv {
				t.Errorf("rescale to %v: Get %s = %.20q, %v; want %.20q, %v", kgs, k, gv, gok, wv, wok)
			}
		}
		nb.Close()
	}
}

// 1 → 2 → 3 through the package's rescale helper: value tables survive.
func TestValueLogRescaleChain(t *testing.T) {
	b := open(t, state.KeyGroupRange{Start: 0, End: rescaleMaxP}, rescaleMaxP)
	fill(t, b, 0, rescaleKeys, "a")
	extra, err := state.NewValueTable[int64, state.VoidNamespace, int64](b, "extra", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k := int64(0); k < 100; k++ {
		extra.Put(kgOf(k, rescaleMaxP), k, state.VoidNamespace{}, -k)
	}
	checkOwned(t, b)
	olds := []*Backend{b}
	for _, p := range []int{2, 3} {
		news := rescale(t, olds, p)
		for _, nb := range news {
			checkOwned(t, nb)
			if nb.vlog.Len() == 0 {
				t.Errorf("backend of %v: empty value log", nb.KeyGroups())
			}
		}
		olds = news
	}
}

// logSegments returns the value log's sealed segments among the files of a
// checkpoint.
func logSegments(files []string) []string {
	var segs []string
	for _, f := range files {
		if strings.HasPrefix(f, "vlog-") && strings.HasSuffix(f, ".seg") {
			segs = append(segs, f)
		}
	}
	return segs
}

// logParts returns the parts of the value log's active segment among the
// files of a checkpoint, by offset.
func logParts(files []string) []string {
	var parts []string
	for _, f := range files {
		if strings.HasPrefix(f, "vlog-") && strings.HasSuffix(f, ".part") {
			parts = append(parts, f)
		}
	}
	offset := func(name string) int {
		n, _ := strconv.Atoi(strings.Split(name, ".")[1])
		return n
	}
	slices.SortFunc(parts, func(a, b string) int { return offset(a) - offset(b) })
	return parts
}

// copyDir copies the files of a checkpoint, so that it can be damaged
// without touching the files it shares with the backend.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if err := copyFile(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

// The value log's files in a checkpoint: segments and the parts of the
// active segment, shared; a missing or damaged segment or part fails
// Restore with an error, not a panic; the checkpoint restores, and the
// restored backend's next checkpoint holds the parts it was restored from,
// byte for byte, and a new one.
func TestValueLogCheckpointFiles(t *testing.T) {
	kgs := state.KeyGroupRange{Start: 0, End: 4}
	b := openSmall(t, kgs, 4)
	fill(t, b, 0, 14000, strings.Repeat("s", 200)) // about 3.5 MiB of records
	delSome(t, b, 0, 14000, func(k int64) bool { return k%5 == 0 })
	root := t.TempDir()
	if _, err := b.Checkpoint(filepath.Join(root, "ck0")); err != nil { // the first part
		t.Fatal(err)
	}
	fill(t, b, 14000, 14100, strings.Repeat("t", 200))
	ck := filepath.Join(root, "ck")
	files, err := b.Checkpoint(ck)
	if err != nil {
		t.Fatal(err)
	}
	segs, parts := logSegments(files), logParts(files)
	if len(segs) < 2 || len(parts) < 2 {
		t.Fatalf("checkpoint files %v: want several segments and parts", files)
	}
	for _, f := range files {
		if strings.HasPrefix(f, "vlog-") && !IsShared(f) {
			t.Errorf("IsShared(%s) = false", f)
		}
	}
	if got := PlanUpload(files, map[string]string{segs[0]: "x/" + segs[0], parts[0]: "x/" + parts[0]}); got.Reuse[segs[0]] != "x/"+segs[0] || got.Reuse[parts[0]] != "x/"+parts[0] || len(got.Reuse) != 2 {
		t.Errorf("PlanUpload does not reuse an uploaded segment and part: %+v", got)
	}
	want := contents(t, b)

	// A segment or a part missing: the file list names it.
	for _, name := range []string{segs[1], parts[0], parts[len(parts)-1]} {
		c1 := filepath.Join(root, "c1-"+name)
		copyDir(t, ck, c1)
		data, _ := os.ReadFile(filepath.Join(c1, name))
		os.Remove(filepath.Join(c1, name))
		_, err = Restore(c1, kgs, 4, smallSegOpts)
		if err == nil || !strings.Contains(err.Error(), c1) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "download every file") {
			t.Errorf("restore without %s: %v", name, err)
		}
		// Put back, the checkpoint restores.
		os.WriteFile(filepath.Join(c1, name), data, 0o644)
		if r, err := Restore(c1, kgs, 4, smallSegOpts); err != nil {
			t.Errorf("restore with %s put back: %v", name, err)
		} else {
			if !equalContents(contents(t, r), want) {
				t.Errorf("restore with %s put back: contents differ", name)
			}
			r.Close()
		}
	}

	// A damaged byte in a record, in a header; a segment or part cut short
	// and listed so.
	for _, file := range []string{segs[len(segs)/2], parts[0], parts[len(parts)-1]} {
		for _, c := range []struct {
			name   string
			damage func(data []byte) []byte
		}{
			{"record", func(d []byte) []byte { d[len(d)/2] ^= 0x10; return d }},
			{"last record", func(d []byte) []byte { d[len(d)-1] ^= 0x01; return d }},
			{"header", func(d []byte) []byte { d[3] ^= 0x01; return d }},
			{"sequence", func(d []byte) []byte { d[9] ^= 0x01; return d }},
			{"truncated", func(d []byte) []byte { return d[:len(d)-7] }},
		} {
			if (c.name == "header" || c.name == "sequence") && file != segs[len(segs)/2] && file != parts[0] {
				continue // a part after the first has no header
			}
			what := file + ": " + c.name
			dir := filepath.Join(root, "damaged-"+file+"-"+strings.ReplaceAll(c.name, " ", "-"))
			copyDir(t, ck, dir)
			path := filepath.Join(dir, file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, c.damage(data), 0o644); err != nil {
				t.Fatal(err)
			}
			if c.name == "truncated" {
				relist(t, dir, file, int64(len(data)-7))
			}
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("%s damaged: Restore panicked: %v", what, p)
					}
				}()
				r, err := Restore(dir, kgs, 4, smallSegOpts)
				if err == nil {
					r.Close()
					t.Errorf("%s damaged: Restore succeeded", what)
					return
				}
				t.Logf("%s damaged: %v", what, err)
				if !errors.Is(err, hashlog.ErrCorrupt) || !strings.Contains(err.Error(), dir) {
					t.Errorf("%s damaged: %v (want hashlog.ErrCorrupt, naming %s)", what, err, dir)
				}
			}()
		}
	}
	if n := Budget().Backends; n != 1 {
		t.Errorf("%d backends open after failed restores, want 1", n)
	}

	// Restored, written a little and checkpointed again: the parts it was
	// restored from are in the new checkpoint as they were, with a new one
	// after them, and only the new part is to upload.
	rdir := filepath.Join(root, "restored")
	copyDir(t, ck, rdir)
	r, err := Restore(rdir, kgs, 4, smallSegOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !equalContents(contents(t, r), want) {
		t.Error("restored contents differ")
	}
	delSome(t, r, 0, 200, func(k int64) bool { return k%5 == 1 })
	fill(t, r, 14100, 14120, strings.Repeat("u", 200))
	want2 := contents(t, r)
	ck2 := filepath.Join(root, "ck2")
	files2, err := r.Checkpoint(ck2)
	if err != nil {
		t.Fatal(err)
	}
	parts2 := logParts(files2)
	if !slices.Equal(logSegments(files2), segs) || len(parts2) != len(parts)+1 || !slices.Equal(parts2[:len(parts)], parts) {
		t.Fatalf("checkpoint of the restored backend: segments %q, parts %q; want the segments %q and parts %q it was restored from and one new part", logSegments(files2), parts2, segs, parts)
	}
	for _, p := range parts {
		a, _ := os.ReadFile(filepath.Join(ck, p))
		b, _ := os.ReadFile(filepath.Join(ck2, p))
		if !bytes.Equal(a, b) {
			t.Errorf("part %s differs between the checkpoint and the restored backend's next one", p)
		}
	}
	uploaded := map[string]string{}
	for _, f := range files {
		if IsShared(f) {
			uploaded[f] = "x/" + f
		}
	}
	plan := PlanUpload(files2, uploaded)
	for _, f := range plan.Upload {
		if IsShared(f) && strings.HasPrefix(f, "vlog-") && f != parts2[len(parts2)-1] {
			t.Errorf("the restored backend's checkpoint uploads %s again", f)
		}
	}
	r2, err := Restore(ck2, kgs, 4, smallSegOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if !equalContents(contents(t, r2), want2) {
		t.Error("contents of the restored backend's checkpoint differ")
	}
}

// dropListed removes name from the file list of the checkpoint in dir.
func dropListed(t *testing.T, dir, name string) {
	t.Helper()
	list, err := os.ReadFile(filepath.Join(dir, FileList))
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.Split(string(list), "\n") {
		if !strings.HasPrefix(l, name+" ") {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, FileList), []byte(strings.Join(kept, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// relist records size as the size of name in the file list of dir.
func relist(t *testing.T, dir, name string, size int64) {
	t.Helper()
	dropListed(t, dir, name)
	f, err := os.OpenFile(filepath.Join(dir, FileList), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "%s %d\n", name, size)
	f.Close()
}

// A Restore that fails on a damaged segment leaves the checkpoint usable:
// once the segment is downloaded again, the same directory restores.
func TestValueLogRestoreRetryAfterDamage(t *testing.T) {
	kgs := state.KeyGroupRange{Start: 0, End: 4}
	b := openSmall(t, kgs, 4)
	fill(t, b, 0, 8000, strings.Repeat("s", 200))
	root := t.TempDir()
	ck := filepath.Join(root, "ck")
	files, err := b.Checkpoint(ck)
	if err != nil {
		t.Fatal(err)
	}
	want := contents(t, b)
	segs := logSegments(files)
	for i, c := range []struct {
		sub state.KeyGroupRange
		at  func(n int) int // the byte to damage
	}{
		{kgs, func(n int) int { return n / 2 }},                             // a record
		{kgs, func(int) int { return 3 }},                                   // the header
		{state.KeyGroupRange{Start: 1, End: 3}, func(int) int { return 3 }}, // a subset of key groups
	} {
		sub := c.sub
		dir := filepath.Join(root, fmt.Sprint("retry", i))
		copyDir(t, ck, dir)
		path := filepath.Join(dir, segs[0])
		good, _ := os.ReadFile(path)
		bad := slices.Clone(good)
		bad[c.at(len(bad))] ^= 0x10
		os.WriteFile(path, bad, 0o644)
		if _, err := Restore(dir, sub, 4, smallSegOpts); err == nil {
			t.Fatalf("restore of %v with a damaged segment succeeded", sub)
		}
		os.WriteFile(path, good, 0o644)
		r, err := Restore(dir, sub, 4, smallSegOpts)
		if err != nil {
			t.Errorf("restore of %v after the damaged segment was replaced: %v", sub, err)
			continue
		}
		got := contents(t, r)
		for kg := range want {
			if sub.Contains(kg) && !slices.Equal(got[kg], want[kg]) {
				t.Errorf("restore of %v after a failed one: key group %d differs", sub, kg)
			}
		}
		r.Close()
	}
}

// The value logs' memory is reported by Budget and, beyond its share,
// taken from the object caches.
func TestValueLogBudget(t *testing.T) {
	if n := Budget().Backends; n != 0 {
		t.Fatalf("%d backends open before the test", n)
	}
	kgs := state.KeyGroupRange{Start: 0, End: 8}
	b := openSmall(t, kgs, 8)
	v := tableID(t, b, "v", "value[x]")
	for i := range 20000 {
		b.Set(rawKey(i%8, v, fmt.Sprint(i)), bytes.Repeat([]byte{'b'}, 100))
	}
	mem := b.vlog.Memory()
	if st := Budget(); st.ValueLogBytes <= 0 || st.ValueLogBytes != mem || b.res.bytes != mem {
		t.Errorf("ValueLogBytes %d, log memory %d, reserved %d", st.ValueLogBytes, mem, b.res.bytes)
	}
	checkSteps := func(b *Backend) {
		t.Helper()
		n := int64(len(b.res.releases))
		if n*reserveStep < b.res.bytes || (n-2)*reserveStep >= b.res.bytes && n > 0 {
			t.Errorf("%d steps of %d bytes reserved for %d bytes", n, reserveStep, b.res.bytes)
		}
	}
	checkSteps(b)

	b2 := openSmall(t, kgs, 8)
	v2 := tableID(t, b2, "v", "value[x]")
	for i := range 5000 {
		b2.Set(rawKey(i%8, v2, fmt.Sprint(i)), []byte("x"))
	}
	if st, want := Budget(), b.vlog.Memory()+b2.vlog.Memory(); st.ValueLogBytes != want || b2.vlog.Memory() <= 0 {
		t.Errorf("ValueLogBytes %d with two backends, want %d", st.ValueLogBytes, want)
	}

	// n = max(Options.Backends, open) = 4.
	n := int64(max(smallSegOpts.Backends, Budget().Backends))
	share := testBudget / 8 * objectCacheEighths / n
	logShare := testBudget / (4 * n)
	if b.res.bytes >= logShare {
		t.Fatalf("log memory %d already beyond its share %d", b.res.bytes, logShare)
	}
	if got := b.CacheBudget(); got != share {
		t.Errorf("CacheBudget() = %d with the log within its share, want %d", got, share)
	}
	// share/2 beyond its share: the object caches give it up.
	d1 := logShare - b.res.bytes + share/2
	b.res.add(d1)
	checkSteps(b)
	if got := b.CacheBudget(); got != share-share/2 {
		t.Errorf("CacheBudget() = %d with the log %d beyond its share, want %d", got, share/2, share-share/2)
	}
	if st, want := Budget(), b.res.bytes+b2.vlog.Memory(); st.ValueLogBytes != want {
		t.Errorf("ValueLogBytes %d, want %d", st.ValueLogBytes, want)
	}
	// Far beyond: a quarter of the share is left.
	d2 := 2 * share
	b.res.add(d2)
	checkSteps(b)
	if got := b.CacheBudget(); got != share/4 {
		t.Errorf("CacheBudget() = %d with the log far beyond its share, want %d", got, share/4)
	}
	b.res.add(-d1 - d2)
	checkSteps(b)
	if got := b.CacheBudget(); got != share || b.res.bytes != b.vlog.Memory() {
		t.Errorf("after undoing: CacheBudget() = %d (want %d), reserved %d, log memory %d", got, share, b.res.bytes, b.vlog.Memory())
	}

	// Closing releases the backend's part; a restored log reports its
	// loaded index.
	b2.Close()
	if st := Budget(); st.ValueLogBytes != b.vlog.Memory() {
		t.Errorf("ValueLogBytes %d after a close, want %d", st.ValueLogBytes, b.vlog.Memory())
	}
	ck := filepath.Join(t.TempDir(), "ck")
	if _, err := b.Checkpoint(ck); err != nil {
		t.Fatal(err)
	}
	r, err := Restore(ck, kgs, 8, smallSegOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.vlog.Len() != 20000 || r.res.bytes != r.vlog.Memory() || r.res.bytes <= 0 {
		t.Errorf("restored log: %d keys, reserved %d, memory %d", r.vlog.Len(), r.res.bytes, r.vlog.Memory())
	}
	if st, want := Budget(), b.vlog.Memory()+r.vlog.Memory(); st.ValueLogBytes != want {
		t.Errorf("ValueLogBytes %d with a restored backend, want %d", st.ValueLogBytes, want)
	}
	r.Close()
	b.Close()
	if st := Budget(); st.ValueLogBytes != 0 || st.Backends != 0 {
		t.Errorf("after closing all: %+v", st)
	}
}

// A checkpoint directory that also holds value log files of a later
// checkpoint of the same backend (files the checkpoint's file list does not
// name, as left by an earlier download into the directory): a sealed
// segment, a part that continues the checkpoint's parts (which the log
// would take for the rest of its active segment), a part of a later
// segment. Restore refuses each, naming it, and leaves the directory as it
// was; without them the checkpoint restores to its state.
func TestValueLogRestoreRefusesUnlistedFiles(t *testing.T) {
	kgs := state.KeyGroupRange{Start: 0, End: 4}
	b := openSmall(t, kgs, 4)
	fill(t, b, 0, 4000, strings.Repeat("1", 200))
	root := t.TempDir()
	ck1, ckNext, ck2 := filepath.Join(root, "ck1"), filepath.Join(root, "ckNext"), filepath.Join(root, "ck2")
	files1, err := b.Checkpoint(ck1)
	if err != nil {
		t.Fatal(err)
	}
	want := contents(t, b)
	fill(t, b, 0, 10, strings.Repeat("2", 200))
	filesNext, err := b.Checkpoint(ckNext)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, b, 0, 4000, strings.Repeat("3", 200))
	delSome(t, b, 2000, 4000, func(k int64) bool { return k%2 == 0 })
	files2, err := b.Checkpoint(ck2)
	if err != nil {
		t.Fatal(err)
	}
	parts1 := logParts(files1)
	if len(parts1) == 0 {
		t.Fatalf("checkpoint %v: want parts", files1)
	}
	var extras []struct{ name, from string }
	for _, f := range logParts(filesNext) {
		if !slices.Contains(files1, f) {
			extras = append(extras, struct{ name, from string }{f, ckNext})
		}
	}
	if len(extras) != 1 || strings.Split(extras[0].name, ".")[0] != strings.Split(parts1[0], ".")[0] {
		t.Fatalf("checkpoints %v then %v: want one new part of the same segment", files1, filesNext)
	}
	for _, f := range append(logSegments(files2), logParts(files2)...) {
		if !slices.Contains(files1, f) && !slices.Contains(filesNext, f) {
			extras = append(extras, struct{ name, from string }{f, ck2})
		}
	}
	if len(logSegments(files2)) <= len(logSegments(files1)) || len(extras) < 3 {
		t.Fatalf("the later checkpoint %v has no segment and part of its own beside %v", files2, files1)
	}
	for i, e := range extras {
		dir := filepath.Join(root, fmt.Sprint("dir", i))
		copyDir(t, ck1, dir)
		if err := copyFile(filepath.Join(e.from, e.name), filepath.Join(dir, e.name)); err != nil {
			t.Fatal(err)
		}
		before := dirSizes(t, dir)
		r, err := Restore(dir, kgs, 4, smallSegOpts)
		if err == nil {
			r.Close()
			t.Fatalf("restore with the unlisted %s succeeded", e.name)
		}
		t.Logf("unlisted %s: %v", e.name, err)
		if !strings.Contains(err.Error(), e.name) || !strings.Contains(err.Error(), dir) {
			t.Errorf("restore with the unlisted %s: %v; want an error naming it and %s", e.name, err, dir)
		}
		if after := dirSizes(t, dir); !maps.Equal(before, after) {
			t.Errorf("a failed restore with the unlisted %s changed %s: %v, then %v", e.name, dir, before, after)
		}
		// Without it, the checkpoint restores.
		os.Remove(filepath.Join(dir, e.name))
		r, err = Restore(dir, kgs, 4, smallSegOpts)
		if err != nil {
			t.Fatalf("restore without the unlisted %s: %v", e.name, err)
		}
		if !equalContents(contents(t, r), want) {
			t.Errorf("restore without the unlisted %s: contents differ from the checkpoint's", e.name)
		}
		r.Close()
	}
}

// dirSizes returns the size of every file in dir by name.
func dirSizes(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = info.Size()
	}
	return out
}
