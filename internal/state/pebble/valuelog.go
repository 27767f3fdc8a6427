package pebble

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"sync/atomic"

	lsm "github.com/cockroachdb/pebble/v2"

	"github.com/eddystream/eddy/internal/state/hashlog"
)

// The entries of value tables (kinds "value[…]") are kept in a value log
// (package hashlog) beside the DB, not in Pebble: a point read or write of
// state larger than the memory budget is then one hash lookup and one
// record read at a known offset, where a Pebble Get searches every level.
// Map tables, timers and the metadata stay in Pebble, whose ordered scans
// they need. The log's segments live in the DB's directory and travel with
// its checkpoints (see Checkpoint); its index and active segment are
// reserved in the block cache, like the object caches (see logReservation).

// tablePrefixLen is the length of a table prefix: key group (2 bytes) and
// table id (4 bytes).
const tablePrefixLen = 6

// isValueKind reports whether tables of kind keep their entries in the
// value log.
func isValueKind(kind string) bool { return strings.HasPrefix(kind, "value[") }

// markTable records the table id as one of the value log's, if its kind is
// a value table's.
func (b *Backend) markTable(id uint32, kind string) {
	if !isValueKind(kind) {
		return
	}
	for uint32(len(b.logTables)) <= id {
		b.logTables = append(b.logTables, false)
	}
	b.logTables[id] = true
}

// logTable reports whether table id keeps its entries in the value log.
func (b *Backend) logTable(id uint32) bool {
	return id < uint32(len(b.logTables)) && b.logTables[id]
}

// where says which store holds the keys starting with prefix: the value
// log, Pebble, or both (a prefix shorter than a table prefix).
func (b *Backend) where(prefix []byte) (log, db bool) {
	if len(prefix) < tablePrefixLen {
		return true, true
	}
	in := b.logTable(binary.BigEndian.Uint32(prefix[2:6]))
	return in, !in
}

// inLog reports whether key is a value table's entry, kept in the log.
func (b *Backend) inLog(key []byte) bool {
	return len(key) >= tablePrefixLen && b.logTable(binary.BigEndian.Uint32(key[2:6]))
}

// openLog opens an empty value log for the backend's key groups.
func (b *Backend) openLog() error {
	l, err := hashlog.Open(b.dir, b.kgs.Start, b.kgs.End, b.logOptions())
	if err != nil {
		return fmt.Errorf("pebble: %s: %w", b.dir, err)
	}
	b.vlog = l
	return nil
}

// loadLog opens the value log of the checkpoint files in dir for the key
// groups [start, end): writable when dir is the backend's (the caller then
// gives it the backend's options, SetOptions, which reserves its memory),
// read-only for a rescale source.
func (b *Backend) loadLog(dir string, start, end int, readOnly bool) (*hashlog.Log, error) {
	l, err := hashlog.Load(dir, start, end, hashlog.Options{SegmentSize: int(b.popts.MemTableSize)}, readOnly)
	if err != nil {
		return nil, fmt.Errorf("pebble: checkpoint directory %s: %w: download the checkpoint again, or restore from an earlier one", dir, err)
	}
	return l, nil
}

// logOptions returns the options of the backend's value log: segments of a
// memtable's size, memory reserved in the block cache.
func (b *Backend) logOptions() hashlog.Options {
	return hashlog.Options{SegmentSize: int(b.popts.MemTableSize), OnMemory: b.res.add}
}

// logReservation reserves the value log's memory in the shared block cache,
// in steps of reserveStep bytes, so that the log, the object caches, the
// memtables and the cached blocks stay within the budget together.
type logReservation struct {
	bytes    int64        // the log's memory
	seen     atomic.Int64 // bytes, for Budget on other goroutines
	releases []func()     // one per reserved step
}

const reserveStep = 1 << 20

func (r *logReservation) add(d int64) {
	r.bytes += d
	r.seen.Store(r.bytes)
	for int64(len(r.releases))*reserveStep < r.bytes {
		r.releases = append(r.releases, reserveBlocks(reserveStep))
	}
	for n := len(r.releases); n > 0 && int64(n-2)*reserveStep >= r.bytes; n-- {
		r.releases[n-1]()
		r.releases = r.releases[:n-1]
	}
}

// releaseAll returns every reserved step.
func (r *logReservation) releaseAll() {
	for _, f := range r.releases {
		f()
	}
	r.releases, r.bytes = nil, 0
	r.seen.Store(0)
}

// logFail panics with a *kv.BackendError for a failure of the value log.
func logFail(op string, err error) {
	if err != nil {
		fail("value log "+op, err)
	}
}

// scanMerged calls fn for the keys starting with prefix in the value log
// and in Pebble, merged in key order, until fn returns false. Both are
// streamed: the log visits its entries key group by key group, sorted, and
// a Pebble iterator is advanced to each log key.
func (b *Backend) scanMerged(prefix []byte, fn func(key, value []byte) bool) {
	lo, hi := bounds(prefix)
	it, err := b.db.NewIter(&lsm.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		fail("scan", err)
	}
	defer it.Close()
	ok := it.First()
	stopped := false
	// drain calls fn for the Pebble keys below k (all if k is nil).
	drain := func(k []byte) bool {
		for ; ok && (k == nil || bytes.Compare(it.Key(), k) < 0); ok = it.Next() {
			v, err := it.ValueAndErr()
			if err != nil {
				fail("scan", err)
			}
			if !fn(it.Key(), v) {
				return false
			}
		}
		return true
	}
	logFail("scan", b.vlog.Scan(prefix, func(k, v []byte) bool {
		if !drain(k) || !fn(k, v) {
			stopped = true
			return false
		}
		return true
	}))
	if !stopped {
		drain(nil)
	}
	if err := it.Error(); err != nil {
		fail("scan", err)
	}
}

// logGroup is the number of value log writes a batch applies together
// (hashlog.Log.SetBatch overlaps their cache misses).
const logGroup = 64

// logWrites holds the value log writes of a write batch until logGroup of
// them are there, a delete comes, or the batch commits. The object caches
// write entries back through batches and do not read them back before the
// commit.
type logWrites struct {
	arena      []byte
	ends       []int // per write: end of its key, end of its value in arena
	keys, vals [][]byte
}

func (w *logWrites) set(b *Backend, key, value []byte) {
	w.arena = append(w.arena, key...)
	w.ends = append(w.ends, len(w.arena))
	w.arena = append(w.arena, value...)
	w.ends = append(w.ends, len(w.arena))
	if len(w.ends) >= 2*logGroup {
		w.flush(b)
	}
}

func (w *logWrites) delete(b *Backend, key []byte) {
	w.flush(b)
	logFail("cache write", b.vlog.Delete(key))
}

// flush applies the held writes.
func (w *logWrites) flush(b *Backend) {
	if len(w.ends) == 0 {
		return
	}
	w.keys, w.vals = w.keys[:0], w.vals[:0]
	start := 0
	for i := 0; i < len(w.ends); i += 2 {
		w.keys = append(w.keys, w.arena[start:w.ends[i]])
		w.vals = append(w.vals, w.arena[w.ends[i]:w.ends[i+1]])
		start = w.ends[i+1]
	}
	err := b.vlog.SetBatch(w.keys, w.vals)
	w.arena, w.ends = w.arena[:0], w.ends[:0]
	logFail("cache write", err)
}
