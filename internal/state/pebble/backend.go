// Package pebble is the Pebble state backend: keyed state kept as encoded
// bytes in an embedded LSM (github.com/cockroachdb/pebble/v2), so that state
// can be larger than memory, checkpoints are incremental (SST files are
// immutable and uploaded once) and rescaling moves key-group ranges of files
// instead of records.
//
// # Value tables
//
// The entries of value tables (kinds "value[…]": value, list, reducing and
// aggregating state) are not in Pebble but in a value log beside it
// (internal/state/hashlog): records appended to segment files in the DB's
// directory, found through an in-memory hash index per key group. A read of
// state larger than the memory budget is then one index lookup and one
// record read at a known offset, where a Pebble Get searches a memtable and
// every level of the LSM (several iterator setups, bloom filter and index
// lookups, and a data block copied and checksummed). Map tables, timers and
// the metadata, which need ordered scans, stay in Pebble. Scan and
// DeletePrefix over a prefix shorter than a table prefix cover both,
// merged in key order. The log's segments are immutable files and travel
// with checkpoints as SSTs do (IsShared); a restore replays them to rebuild
// the index.
//
// # Keys
//
// Data keys are built by the typed tables of package kv (internal/state/kv):
//
//	key group (2 bytes BE) | table id (4 bytes BE) | key | namespace [| user key]
//
// Key groups are below state.MaxKeyGroups = 0x8000, so the keys from 0xFFFF on
// are reserved for the backend's metadata: the format version, the max
// parallelism, the key-group range and the table registry (name → id, kind).
// They travel with every checkpoint, so table ids survive restores.
//
// # Durability
//
// Writes go to the memtable with no write-ahead log (Options.DisableWAL):
// state is made durable by checkpoints, never by the local directory. After a
// failure the backend is rebuilt from the last checkpoint (Restore or
// Rescale), so a WAL would only double the bytes written. Checkpoint flushes
// the memtables first, so a checkpoint holds every write made to Pebble
// before it; writes still in the object caches (see below) reach Pebble at
// FlushCaches, to be called before Checkpoint.
// Consequently a directory left by a crashed or closed backend holds an
// arbitrary prefix of its writes and is never reopened: Open requires an
// empty directory. For the same reason the DB writes its files without
// waiting for the device (localFS): the files a checkpoint keeps are made
// durable by checkpoint storage, which copies them and syncs the copies.
//
// # Memory
//
// All backends of the process share one block cache (a pebble.Cache) of
// B = Options.MemoryBudget bytes (default: DefaultMemoryBudget) and one
// table-file cache. B is split three ways, all of it accounted in the block
// cache.
//
// Object caches: 5B/8 is reserved in the block cache (Cache.Reserve) when it
// is made, for the write-back caches of decoded entries that the typed tables
// of package kv keep in front of each backend (see kv.CacheHost and "Object
// caches" below). Each backend's caches hold at most C = 5B / (8·n) bytes,
// where n = max(Options.Backends, backends open now); a backend asks again
// now and then, so when more open, the earlier ones shrink to their new share
// at their next eviction. Sizes are estimates: encoded key and value lengths
// plus kv.CacheEntryOverhead per entry. The object caches get the larger
// share because a byte there is worth more than a byte of cached block: a hit
// skips Pebble and the decoding, while a data block holds mostly keys other
// than the one read, which reads spread over state larger than the budget
// seldom ask for (at 5x the budget the cached blocks hold under a tenth of
// the data).
//
// Memtables: Pebble charges every memtable it allocates to the block cache
// as a reservation too. Each backend gets memtables of
//
//	S = clamp(B / (16·n), 1 MiB, 64 MiB)
//
// and holds at most T+1 of them, where T = 2 is MemTableStopWritesThreshold
// (a mutable memtable plus one being flushed; writes stall beyond) and +1
// counts the flushed memtable Pebble keeps for recycling; n = max(
// Options.Backends, backends open when this one opens, itself included).
// With Options.Backends set to the number of backends the process holds at
// once, memtables take at most 3B/16. They take little in practice: the
// object caches write their entries back in large sorted batches, which
// are ingested as SSTs (NewSortedBatch), so memtables hold only the smaller
// writes (flushes before a scan, timers, direct writes), and Pebble grows a
// DB's memtables from 256 KiB to S only as they fill.
//
// Cached blocks take what the reservations leave: at least 3B/16 (and
// about 3B/8 when memtables are small), which holds the index and filter
// blocks (about 1% of the state for 200-byte entries) and some data
// blocks.
//
// Value logs: each backend's value log holds its hash index (about 11 bytes
// per value-table entry) and its active segment (S bytes) in memory,
// reserved in the block cache in steps of 1 MiB. A log may take B/(4n) of
// the blocks' part; beyond that its object caches shrink by the excess,
// down to a quarter of their share. An index larger than that (a great many
// small entries per byte of budget) goes beyond B.
//
// So object caches, memtables and blocks stay within B by construction,
// whatever the number of backends, as long as the reservations alone fit in
// B: if more backends open than Options.Backends says, later ones get
// smaller memtables and the total stays bounded as long as
// 5B/8 + n·(T+1)·S ≤ B, i.e. up to about B/8 MiB backends.
//
// Outside B: the Go heap beyond the object caches' estimates (iterators,
// values being decoded, decoded values larger than their encoding, a
// sorted batch up to S/2 before it spills to its SST), the write buffers of
// open files (256 KiB each, see localFS), table readers of open files (a
// few KiB each, at most 4096 files), the OS page cache (on Linux table
// files are read through read-only mappings, whose pages count in the RSS
// as file pages, RssFile, which the kernel drops as it needs; elsewhere
// with pread, not counted in RSS), and the C allocator's overhead on
// cache blocks and memtables (glibc malloc keeps freed blocks: measured
// +30% of B at B = 256 MiB, +58% at 64 MiB, +33% with MALLOC_ARENA_MAX=2
// in the environment).
//
// # Object caches
//
// Table reads that hit an object cache do not encode, decode or touch
// Pebble, and table writes stay in the cache, dirty, until they are written
// back: when a Scan covers them (Scan flushes the cached entries under its
// prefix first, so snapshots by key group and the tables' own Range,
// Entries and IsEmpty see every write), at FlushCaches, which the owner
// must call before Checkpoint, and when the cache is full. A full cache
// evicts clean entries (CLOCK) as long as it has enough of them; when it
// has not, it writes back every dirty entry in one sorted batch and then
// evicts. A cache of state larger than itself thus writes back about C
// bytes at a time, which becomes one SST in L0 rather than memtable
// inserts: fewer, larger L0 files, and less compaction (entries of value
// tables go to the value log, in groups whose index and record reads
// overlap). Set, Delete and DeletePrefix drop the cached entries they
// overwrite; Get reads the store only.
//
// # Concurrency
//
// A Backend belongs to one subtask and is used on that subtask's goroutine
// only, like every state.Backend; Checkpoint must be called there too (at the
// barrier, with no write in flight). The files Checkpoint leaves are hard
// links that later writes and compactions do not touch, so uploading them can
// proceed on another goroutine. Pebble's own flushes and compactions run on
// background goroutines. Open, Restore and Rescale may run concurrently
// (also on the same source checkpoints), as may Close of different backends;
// Budget is safe for concurrent use.
package pebble

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"

	lsm "github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/hashlog"
	"github.com/eddystream/eddy/internal/state/kv"
)

// FormatVersion is the version of the backend's on-disk layout (key layout
// and metadata keys) that this code writes and reads.
const FormatVersion = 2

// Options configures a backend.
type Options struct {
	// MemoryBudget bounds the block cache, memtables and object caches of
	// all backends of the process, in bytes (see the package comment). 0
	// means DefaultMemoryBudget(). The first backend to open fixes the
	// budget until every backend is closed; a backend that asks for another
	// non-zero budget meanwhile fails to open.
	MemoryBudget int64
	// Backends is the number of backends the process expects to hold open at
	// once (e.g. the keyed subtasks it runs); it sizes the memtables and
	// the object caches. 0 means the number open (when this one opens, for
	// memtables; now, for object caches).
	Backends int
}

// Backend is a state.BytesBackend on a Pebble DB in a local directory.
//
// Concurrency: see the package comment; used on its subtask's goroutine.
type Backend struct {
	db     *lsm.DB
	dir    string
	popts  *lsm.Options
	kgs    state.KeyGroupRange
	maxP   int
	tables map[string]tableInfo
	nextID uint32
	id     string
	from   string // checkpoint directory restored from, if any
	get    []byte // Get's result, reused
	setBuf []byte // Set's copy of a value table's value, reused
	closed bool
	inc    incremental // incremental snapshots (incremental.go)
	// ingests numbers the SSTs of sorted batches (NewSortedBatch).
	ingests uint64

	expect int // Options.Backends: sizes the object cache share
	// cacheOverride replaces the object cache budget if not 0 (negative:
	// no cache); tests set it.
	cacheOverride int64
	// spillOverride replaces the size from which a sorted batch spills to
	// an SST if not 0; tests set it.
	spillOverride int
	// caches are the attached object caches (kv.CacheHost). Written on
	// the subtask's goroutine under cmu; Budget reads them under cmu.
	caches []kv.TableCache
	cmu    sync.Mutex

	// vlog holds the entries of value tables (valuelog.go); logTables
	// marks their ids; res reserves its memory in the block cache.
	vlog      *hashlog.Log
	logTables []bool
	res       logReservation
}

type tableInfo struct {
	id   uint32
	kind string
}

var (
	_ state.BytesBackend = (*Backend)(nil)
	_ kv.CacheHost       = (*Backend)(nil)
	_ kv.SortedWriteHost = (*Backend)(nil)
)

// Reserved metadata keys: 0xFF 0xFF followed by one letter.
var (
	metaPrefix    = []byte{0xFF, 0xFF}
	keyFormat     = []byte{0xFF, 0xFF, 'v'}
	keyMaxP       = []byte{0xFF, 0xFF, 'p'}
	keyKeyGroups  = []byte{0xFF, 0xFF, 'k'}
	keyTablesFrom = []byte{0xFF, 0xFF, 't'}
	keyTablesTo   = []byte{0xFF, 0xFF, 'u'}
)

var noSync = lsm.NoSync

// indexBlockSize is the size of the index blocks of the tables the DB
// writes (Pebble's default is 4 KiB, past which it partitions the index
// in two levels).
const indexBlockSize = 128 << 10

func checkRange(kgs state.KeyGroupRange, maxP int) error {
	if maxP < 1 || maxP > state.MaxKeyGroups || kgs.Start < 0 || kgs.End < kgs.Start || kgs.End > maxP {
		return fmt.Errorf("pebble: key groups %v do not fit max parallelism %d", kgs, maxP)
	}
	return nil
}

// Open creates an empty backend in dir for the key groups kgs of an operator
// with maxParallelism key groups. dir must not exist or be empty: a local
// directory is never reused (see the package comment); to continue from a
// checkpoint use Restore or Rescale.
func Open(dir string, kgs state.KeyGroupRange, maxParallelism int, opts Options) (*Backend, error) {
	if err := checkRange(kgs, maxParallelism); err != nil {
		return nil, err
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("pebble: %s is not empty: Open starts from empty state in a new directory; to continue from a checkpoint use Restore or Rescale", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("pebble: %w", err)
	}
	b, err := openDB(dir, opts, false, false)
	if err != nil {
		return nil, err
	}
	b.kgs, b.maxP = kgs, maxParallelism
	if err := b.writeHeader(); err != nil {
		b.Close()
		return nil, err
	}
	if err := b.openLog(); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// openDB opens the Pebble DB in dir with the process budget. It does not read
// or write the metadata.
func openDB(dir string, opts Options, mustExist, readOnly bool) (*Backend, error) {
	ls, err := acquire(opts)
	if err != nil {
		return nil, err
	}
	po := &lsm.Options{
		Cache:                       ls.cache,
		FileCache:                   ls.fileCache,
		MemTableSize:                ls.memTableSize,
		MemTableStopWritesThreshold: memTableStopWrites,
		L0CompactionThreshold:       l0CompactionThreshold,
		L0StopWritesThreshold:       l0StopWrites,
		DisableWAL:                  true,
		FS:                          fsys,
		BytesPerSync:                1 << 40, // no syncs while writing a file (see localFS)
		ErrorIfNotExists:            mustExist,
		ReadOnly:                    readOnly,
		FormatMajorVersion:          lsm.FormatNewest,
		Logger:                      quietLogger{},
		EventListener: &lsm.EventListener{
			// The read that found the corruption returns it as an error and
			// the backend panics with a *kv.BackendError; Pebble's
			// default would end the process.
			DataCorruption: func(info lsm.DataCorruptionInfo) {
				slog.Error("pebble: data corruption", "path", info.Path, "err", info.Details.Error())
			},
			BackgroundError: func(err error) { quietLogger{}.Errorf("background error: %v", err) },
		},
	}
	po.EnsureDefaults()
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		po.Levels[i].FilterType = lsm.TableFilter
		// Index blocks of up to indexBlockSize: tables up to about 25 MiB
		// (write-back SSTs among them) keep a one-level index, so a point
		// read looks up one index block in the cache instead of two.
		po.Levels[i].IndexBlockSize = indexBlockSize
	}
	db, err := lsm.Open(dir, po)
	if err != nil {
		release()
		return nil, fmt.Errorf("pebble: open %s: %w", dir, err)
	}
	var id [8]byte
	rand.Read(id[:])
	b := &Backend{db: db, dir: dir, popts: po, tables: map[string]tableInfo{}, id: hex.EncodeToString(id[:]), expect: opts.Backends}
	register(b)
	return b, nil
}

// writeHeader stores the format version, max parallelism and key groups.
func (b *Backend) writeHeader() error {
	kv := [][2][]byte{
		{keyFormat, strconv.AppendInt(nil, FormatVersion, 10)},
		{keyMaxP, strconv.AppendInt(nil, int64(b.maxP), 10)},
		{keyKeyGroups, binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, uint32(b.kgs.Start)), uint32(b.kgs.End))},
	}
	for _, e := range kv {
		if err := b.db.Set(e[0], e[1], noSync); err != nil {
			return fmt.Errorf("pebble: %s: write metadata: %w", b.dir, err)
		}
	}
	return nil
}

// header is the metadata of a stored backend.
type header struct {
	format int
	maxP   int
	kgs    state.KeyGroupRange
	tables map[string]tableInfo
	nextID uint32
}

// readHeader reads the metadata of the DB in b, checking the format version.
// what names the directory for errors ("checkpoint directory x").
func readHeader(db *lsm.DB, dir string) (header, error) {
	h := header{tables: map[string]tableInfo{}}
	get := func(k []byte) ([]byte, error) {
		v, c, err := db.Get(k)
		if err != nil {
			return nil, err
		}
		v = bytes.Clone(v)
		return v, c.Close()
	}
	v, err := get(keyFormat)
	if errors.Is(err, lsm.ErrNotFound) {
		return h, fmt.Errorf("pebble: %s holds no eddy state (no format version under the reserved keys): it is not a checkpoint of this backend; restore from the checkpoint's own directory", dir)
	} else if err != nil {
		return h, fmt.Errorf("pebble: %s: read format version: %w", dir, err)
	}
	if h.format, err = strconv.Atoi(string(v)); err != nil || h.format != FormatVersion {
		return h, fmt.Errorf("pebble: %s holds state in format version %q, and this build reads only version %d: restore it with an eddy release that reads that version and take a savepoint there (savepoints are portable), or start without this state", dir, v, FormatVersion)
	}
	if v, err = get(keyMaxP); err != nil {
		return h, fmt.Errorf("pebble: %s: read max parallelism: %w", dir, err)
	}
	if h.maxP, err = strconv.Atoi(string(v)); err != nil {
		return h, fmt.Errorf("pebble: %s: bad max parallelism %q", dir, v)
	}
	if v, err = get(keyKeyGroups); err != nil || len(v) != 8 {
		return h, fmt.Errorf("pebble: %s: read key groups: %v", dir, err)
	}
	h.kgs = state.KeyGroupRange{Start: int(binary.BigEndian.Uint32(v)), End: int(binary.BigEndian.Uint32(v[4:]))}
	it, err := db.NewIter(&lsm.IterOptions{LowerBound: keyTablesFrom, UpperBound: keyTablesTo})
	if err != nil {
		return h, fmt.Errorf("pebble: %s: read tables: %w", dir, err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		name := string(it.Key()[len(keyTablesFrom):])
		v := it.Value()
		if len(v) < 4 {
			it.Close()
			return h, fmt.Errorf("pebble: %s: bad entry for table %q", dir, name)
		}
		id := binary.BigEndian.Uint32(v)
		h.tables[name] = tableInfo{id: id, kind: string(v[4:])}
		h.nextID = max(h.nextID, id)
	}
	if err := it.Close(); err != nil {
		return h, fmt.Errorf("pebble: %s: read tables: %w", dir, err)
	}
	return h, nil
}

// KeyGroups returns the key groups the backend holds state for.
func (b *Backend) KeyGroups() state.KeyGroupRange { return b.kgs }

// MaxParallelism returns the total number of key groups of the operator.
func (b *Backend) MaxParallelism() int { return b.maxP }

// Dir returns the directory of the DB.
func (b *Backend) Dir() string { return b.dir }

// InstanceID returns a random id made when the backend was opened. Files a
// backend writes after it opened are unique to it only together with this id
// (Pebble numbers files per DB, and two backends restored from one
// checkpoint number alike), so checkpoint storage should name uploaded files
// with it; see PlanUpload.
func (b *Backend) InstanceID() string { return b.id }

// RestoredFrom returns the checkpoint directory whose shared files the
// backend continues: the directory passed to Restore, or the base that
// Rescale chose among its sources; "" after Open. Only the uploaded files
// of that checkpoint may seed PlanUpload's uploaded set: another source's
// files may carry the same names with other contents.
func (b *Backend) RestoredFrom() string { return b.from }

// DB returns the underlying Pebble DB, for metrics and tests. Writing to it
// bypasses the backend's table registry.
func (b *Backend) DB() *lsm.DB { return b.db }

// Close closes the DB. Unflushed writes are lost (there is no WAL); the
// directory is left for the caller to remove. Close is idempotent.
func (b *Backend) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	unregister(b) // before closing the DB, whose metrics Budget reads
	err := b.db.Close()
	if b.vlog != nil {
		if lerr := b.vlog.Close(); err == nil {
			err = lerr
		}
	}
	b.res.releaseAll()
	release()
	if err != nil {
		return fmt.Errorf("pebble: close %s: %w", b.dir, err)
	}
	return nil
}

// TableID returns the id of the table called name, allocating one on first
// use and storing it under the reserved keys, or an error wrapping
// state.ErrIncompatibleTable if name has another kind.
func (b *Backend) TableID(name, kind string) (uint32, error) {
	if t, ok := b.tables[name]; ok {
		if t.kind != kind {
			return 0, state.IncompatibleTableError(name, t.kind, kind)
		}
		return t.id, nil
	}
	b.nextID++
	if err := b.putTable(name, tableInfo{b.nextID, kind}); err != nil {
		return 0, err
	}
	return b.nextID, nil
}

func (b *Backend) putTable(name string, t tableInfo) error {
	k := append(bytes.Clone(keyTablesFrom), name...)
	v := append(binary.BigEndian.AppendUint32(nil, t.id), t.kind...)
	if err := b.db.Set(k, v, noSync); err != nil {
		return fmt.Errorf("pebble: %s: store table %q: %w", b.dir, name, err)
	}
	b.tables[name] = t
	b.markTable(t.id, t.kind)
	return nil
}

func fail(op string, err error) {
	panic(&kv.BackendError{Op: "pebble " + op, Err: err})
}

// Get returns the value stored under key, or ok=false. The value is valid
// until the next call on the backend (it may point into a mapping of the
// value log). Get reads the store only: it does not see writes still in an
// object cache (call FlushCaches first).
func (b *Backend) Get(key []byte) ([]byte, bool) {
	if b.inLog(key) {
		v, ok, err := b.vlog.Get(key)
		logFail("get", err)
		return v, ok
	}
	v, c, err := b.db.Get(key)
	if err != nil {
		if err == lsm.ErrNotFound {
			return nil, false
		}
		fail("get", err)
	}
	b.get = append(b.get[:0], v...)
	if err := c.Close(); err != nil {
		fail("get", err)
	}
	return b.get, true
}

// Set stores value under key, without syncing. A cached entry of key is
// dropped first.
func (b *Backend) Set(key, value []byte) {
	if b.inLog(key) {
		// value may point into the log (a Get's result), and invalidating
		// may write cached entries back, which may compact the log.
		b.setBuf = append(b.setBuf[:0], value...)
		b.invalidate(key)
		logFail("set", b.vlog.Set(key, b.setBuf))
		return
	}
	b.invalidate(key)
	if err := b.db.Set(key, value, noSync); err != nil {
		fail("set", err)
	}
}

// Delete removes key, in the object caches too.
func (b *Backend) Delete(key []byte) {
	b.invalidate(key)
	if b.inLog(key) {
		logFail("delete", b.vlog.Delete(key))
		return
	}
	if err := b.db.Delete(key, noSync); err != nil {
		fail("delete", err)
	}
}

// DeletePrefix removes every key that starts with prefix with one range
// tombstone, after dropping the cached entries under prefix.
func (b *Backend) DeletePrefix(prefix []byte) {
	b.invalidate(prefix)
	log, db := b.where(prefix)
	if log {
		logFail("delete prefix", b.vlog.DeletePrefix(prefix))
	}
	if !db {
		return
	}
	lo, hi := bounds(prefix)
	if err := b.db.DeleteRange(lo, hi, noSync); err != nil {
		fail("delete prefix", err)
	}
}

// Scan calls fn for each key starting with prefix, in key order, until fn
// returns false. It first writes the dirty cached entries under prefix, then
// reads a consistent view taken when it starts: writes fn makes are not
// visited.
func (b *Backend) Scan(prefix []byte, fn func(key, value []byte) bool) {
	for _, c := range b.caches {
		c.Flush(prefix)
	}
	switch log, db := b.where(prefix); {
	case log && db:
		b.scanMerged(prefix, fn)
		return
	case log:
		logFail("scan", b.vlog.Scan(prefix, fn))
		return
	}
	lo, hi := bounds(prefix)
	it, err := b.db.NewIter(&lsm.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		fail("scan", err)
	}
	closed := false
	defer func() {
		if !closed {
			it.Close() // fn panicked
		}
	}()
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			fail("scan", err)
		}
		if !fn(it.Key(), v) {
			break
		}
	}
	closed = true
	if err := it.Close(); err != nil {
		fail("scan", err)
	}
}

// CacheBudget returns the bytes the backend's object caches may hold: its
// share of the process budget (see the package comment), which shrinks as
// more backends open.
func (b *Backend) CacheBudget() int64 {
	if b.cacheOverride != 0 {
		return max(b.cacheOverride, 0)
	}
	share, logShare := cacheShare(b.expect)
	// A value log larger than its share of the blocks' part takes the
	// excess from the object caches, down to a quarter of their share.
	return max(share-max(b.res.bytes-logShare, 0), share/4)
}

// AttachCache registers an object cache of the typed tables (see
// kv.CacheHost): Scan flushes it, Set, Delete and DeletePrefix drop what
// they overwrite from it, and FlushCaches flushes it.
func (b *Backend) AttachCache(c kv.TableCache) {
	b.cmu.Lock()
	b.caches = append(b.caches, c)
	b.cmu.Unlock()
}

// Caches returns the attached object caches.
func (b *Backend) Caches() []kv.TableCache { return b.caches }

// FlushCaches writes every dirty entry of the object caches to Pebble, in
// one batch per cache. Call it before Checkpoint (which flushes only the
// memtables), on the subtask's goroutine.
func (b *Backend) FlushCaches() {
	for _, c := range b.caches {
		c.Flush(nil)
	}
}

// cacheBytes returns the estimated bytes the object caches hold. It is
// safe for concurrent use.
func (b *Backend) cacheBytes() int64 {
	b.cmu.Lock()
	defer b.cmu.Unlock()
	var n int64
	for _, c := range b.caches {
		n += c.Bytes()
	}
	return n
}

// invalidate drops the cached entries under prefix before a direct write.
func (b *Backend) invalidate(prefix []byte) {
	for _, c := range b.caches {
		c.Invalidate(prefix)
	}
}

// NewWriteBatch returns an empty Pebble batch, committed without syncing.
func (b *Backend) NewWriteBatch() kv.WriteBatch { return &batch{be: b, b: b.db.NewBatch()} }

// batch is a kv.WriteBatch on a Pebble batch. Entries of value tables go
// to the value log in groups (logWrites), all of them by Commit.
type batch struct {
	be  *Backend
	b   *lsm.Batch
	log logWrites
}

func (w *batch) Set(key, value []byte) {
	if w.be.inLog(key) {
		w.log.set(w.be, key, value)
		return
	}
	if err := w.b.Set(key, value, nil); err != nil {
		fail("cache write", err)
	}
}

func (w *batch) Delete(key []byte) {
	if w.be.inLog(key) {
		w.log.delete(w.be, key)
		return
	}
	if err := w.b.Delete(key, nil); err != nil {
		fail("cache write", err)
	}
}

func (w *batch) Commit() {
	w.log.flush(w.be)
	err := w.b.Commit(noSync)
	if cerr := w.b.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fail("cache write", err)
	}
}

// NewSortedBatch returns an empty batch for writes in strictly increasing
// key order (kv.SortedWriteHost). Up to half a memtable of writes it is
// a Pebble batch; beyond, it writes them to an SST in the DB's directory,
// which Commit ingests. An ingested SST lands in L0 (or lower, where it
// overlaps nothing) with a sequence number above every earlier write, so it
// is the same as the batch, without the memtable inserts and without the
// batch held in memory until a flush.
func (b *Backend) NewSortedBatch() kv.WriteBatch {
	spillAt := int(b.popts.MemTableSize / 2)
	if b.spillOverride != 0 {
		spillAt = b.spillOverride
	}
	return &sortedBatch{b: b, small: b.db.NewBatch(), spillAt: spillAt}
}

// sortedBatch is the batch of NewSortedBatch.
type sortedBatch struct {
	b       *Backend
	small   *lsm.Batch // until the batch spills, nil after
	spillAt int        // the batch size in bytes from which it spills
	w       *sstable.Writer
	path    string
	log     logWrites
}

func (s *sortedBatch) Set(key, value []byte) {
	if s.b.inLog(key) {
		s.log.set(s.b, key, value)
		return
	}
	if s.w != nil {
		if err := s.w.Set(key, value); err != nil {
			s.fail(err)
		}
		return
	}
	if err := s.small.Set(key, value, nil); err != nil {
		fail("cache write", err)
	}
	s.maybeSpill()
}

func (s *sortedBatch) Delete(key []byte) {
	if s.b.inLog(key) {
		s.log.delete(s.b, key)
		return
	}
	if s.w != nil {
		if err := s.w.Delete(key); err != nil {
			s.fail(err)
		}
		return
	}
	if err := s.small.Delete(key, nil); err != nil {
		fail("cache write", err)
	}
	s.maybeSpill()
}

// fail removes the SST being written and panics with err.
func (s *sortedBatch) fail(err error) {
	if s.w != nil {
		s.w.Close()
	}
	fsys.Remove(s.path)
	fail("cache write-back to "+s.path, err)
}

// maybeSpill moves the writes of the small batch to an SST once it holds
// spillAt bytes.
func (s *sortedBatch) maybeSpill() {
	if s.small.Len() < s.spillAt {
		return
	}
	s.b.ingests++
	s.path = filepath.Join(s.b.dir, "eddy-writeback-"+strconv.FormatUint(s.b.ingests, 10)+".sst")
	f, err := fsys.Create(s.path, vfs.WriteCategoryUnspecified)
	if err != nil {
		fail("cache write-back", err)
	}
	s.w = sstable.NewWriter(objstorageprovider.NewFileWritable(f), s.b.popts.MakeWriterOptions(0, s.b.db.TableFormat()))
	r := s.small.Reader()
	for {
		kind, k, v, ok, err := r.Next()
		if err == nil && ok {
			switch kind {
			case lsm.InternalKeyKindSet:
				err = s.w.Set(k, v)
			case lsm.InternalKeyKindDelete:
				err = s.w.Delete(k)
			default:
				err = fmt.Errorf("a sorted batch holds a write of kind %v, which it never makes", kind)
			}
		}
		if err != nil {
			s.fail(err)
		}
		if !ok {
			break
		}
	}
	s.small.Close()
	s.small = nil
}

func (s *sortedBatch) Commit() {
	s.log.flush(s.b)
	if s.w == nil {
		err := s.small.Commit(noSync)
		if cerr := s.small.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fail("cache write", err)
		}
		return
	}
	w := s.w
	s.w = nil
	if err := w.Close(); err != nil {
		s.fail(err)
	}
	if err := s.b.db.Ingest(context.Background(), []string{s.path}); err != nil {
		s.fail(fmt.Errorf("ingest: %w", err))
	}
}

// bounds returns [lo, hi) holding exactly the data keys that start with
// prefix; the reserved keys from 0xFFFF on are never included. A nil lo is
// the empty key.
func bounds(prefix []byte) (lo, hi []byte) {
	if len(prefix) == 0 {
		return nil, metaPrefix
	}
	hi = bytes.Clone(prefix)
	for i := len(hi) - 1; i >= 0; i-- {
		if hi[i] != 0xFF {
			hi[i]++
			hi = hi[:i+1]
			if bytes.Compare(hi, metaPrefix) > 0 {
				hi = metaPrefix
			}
			return prefix, hi
		}
	}
	return prefix, metaPrefix
}

// kgKey returns the first key of key group kg; kgKey(MaxKeyGroups) is below
// the reserved keys.
func kgKey(kg int) []byte { return []byte{byte(kg >> 8), byte(kg)} }

// excise removes every data key outside kgs without rewriting files: SSTs
// that straddle the boundary become virtual SSTs over their remaining part.
func (b *Backend) excise(kgs state.KeyGroupRange) error {
	ctx := context.Background()
	spans := []lsm.KeyRange{{Start: kgKey(0), End: kgKey(kgs.Start)}, {Start: kgKey(kgs.End), End: metaPrefix}}
	for _, s := range spans {
		if bytes.Compare(s.Start, s.End) >= 0 {
			continue
		}
		if err := b.db.Excise(ctx, s); err != nil {
			return fmt.Errorf("pebble: %s: drop key groups outside %v: %w", b.dir, kgs, err)
		}
	}
	return nil
}

// sortedTables returns the names of the tables in m sorted by id.
func sortedTables(m map[string]tableInfo) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return m[names[i]].id < m[names[j]].id })
	return names
}

// quietLogger drops Pebble's informational messages, logs errors with
// log/slog, and turns fatal ones (broken invariants) into a panic with a
// *kv.BackendError instead of ending the process: on the subtask's
// goroutine the runtime recovers it and fails the job.
type quietLogger struct{}

func (quietLogger) Infof(string, ...interface{}) {}
func (quietLogger) Errorf(format string, args ...interface{}) {
	slog.Error("pebble: " + fmt.Sprintf(format, args...))
}
func (quietLogger) Fatalf(format string, args ...interface{}) {
	panic(&kv.BackendError{Op: "pebble", Err: fmt.Errorf(format, args...)})
}

// TableIDs returns the id of every table declared on the backend, by name.
func (b *Backend) TableIDs() map[string]uint32 {
	out := make(map[string]uint32, len(b.tables))
	for name, t := range b.tables {
		out[name] = t.id
	}
	return out
}
