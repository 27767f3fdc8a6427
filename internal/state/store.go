package state

import (
	"fmt"
	"time"

	"github.com/eddystream/eddy/internal/state/codec"
)

// KeyContext is the current key of a keyed operator. The operator sets KG and
// Key before it calls user code or fires a timer; handles read them on every
// access.
type KeyContext[K comparable] struct {
	// KG is the key group of Key.
	KG int
	// Key is the key of the record or timer being processed.
	Key K
}

// Store is the keyed state of one subtask of a keyed operator as handles see
// it: a backend, the current key, and a processing-time clock for TTL.
// Handles are declared on it and bind to its current key.
//
// Concurrency: a Store and its handles are used on the subtask's goroutine
// only.
type Store[K comparable] struct {
	backend  Backend
	key      *KeyContext[K]
	clock    func() int64
	keyCodec codec.Codec[K]

	cleaners map[string]bool // names of tables with a cleaner
	cleanup  []cleaner
	cursor   struct{ table, kg int }
}

// cleaner deletes the expired entries of one table with a TTL.
type cleaner interface {
	// cleanupKeyGroup deletes the entries of key group kg that have expired
	// at now and returns how many it visited and deleted.
	cleanupKeyGroup(kg int, now int64) (visited, deleted int)
}

// NewStore returns a store over b whose handles use the key in kc. clock
// returns the processing time in milliseconds; nil means the wall clock.
// keyCodec encodes keys in tables and snapshots; nil means codec.Default[K],
// and NewStore panics if K has none (the runtime chooses K, so that is a bug).
func NewStore[K comparable](b Backend, kc *KeyContext[K], clock func() int64, keyCodec codec.Codec[K]) *Store[K] {
	if clock == nil {
		clock = func() int64 { return time.Now().UnixMilli() }
	}
	if keyCodec == nil {
		c, err := codec.Default[K]()
		if err != nil {
			panic(fmt.Errorf("state: store key: %w", err))
		}
		keyCodec = c
	}
	return &Store[K]{backend: b, key: kc, clock: clock, keyCodec: keyCodec, cleaners: map[string]bool{}}
}

// Backend returns the store's backend.
func (s *Store[K]) Backend() Backend { return s.backend }

// KeyContext returns the current key the store's handles use.
func (s *Store[K]) KeyContext() *KeyContext[K] { return s.key }

// KeyCodec returns the codec of the store's keys.
func (s *Store[K]) KeyCodec() codec.Codec[K] { return s.keyCodec }

// CurrentKey returns the current key, which handles read and write.
func (s *Store[K]) CurrentKey() K { return s.key.Key }

// Now returns the processing time in milliseconds by the store's clock.
func (s *Store[K]) Now() int64 { return s.clock() }

// addCleaner registers the cleaner of the TTL table called name, once.
func (s *Store[K]) addCleaner(name string, c cleaner) {
	if s.cleaners[name] {
		return
	}
	s.cleaners[name] = true
	s.cleanup = append(s.cleanup, c)
}

// CleanupExpired deletes expired entries of the store's tables with a TTL,
// continuing where the previous call stopped, and returns how many it
// deleted. It works a key group of one table at a time and stops once it has
// visited at least maxEntries entries or every key group of every table; a
// key group is finished once started, so it may visit more. The runtime
// calls it periodically, as Flink's incremental cleanup does.
func (s *Store[K]) CleanupExpired(maxEntries int) int {
	kgs := s.backend.KeyGroups()
	if len(s.cleanup) == 0 || kgs.Len() == 0 || maxEntries <= 0 {
		return 0
	}
	now := s.clock()
	visited, deleted := 0, 0
	for range len(s.cleanup) * kgs.Len() {
		v, d := s.cleanup[s.cursor.table].cleanupKeyGroup(kgs.Start+s.cursor.kg, now)
		visited += v
		deleted += d
		if s.cursor.kg++; s.cursor.kg == kgs.Len() {
			s.cursor.kg = 0
			s.cursor.table = (s.cursor.table + 1) % len(s.cleanup)
		}
		if visited >= maxEntries {
			break
		}
	}
	return deleted
}

// valueCleaner cleans a value table of Timed values.
type valueCleaner[K, N comparable, V any] struct {
	t   ValueTable[K, N, Timed[V]]
	ttl ttlPolicy
}

func (c valueCleaner[K, N, V]) cleanupKeyGroup(kg int, now int64) (visited, deleted int) {
	c.t.Range(kg, func(k K, n N, v Timed[V]) bool {
		visited++
		if c.ttl.expired(v.Stamp, now) {
			c.t.Delete(kg, k, n)
			deleted++
		}
		return true
	})
	return visited, deleted
}

// listCleaner cleans a value table of lists of Timed elements.
type listCleaner[K, N comparable, V any] struct {
	t   ValueTable[K, N, []Timed[V]]
	ttl ttlPolicy
}

func (c listCleaner[K, N, V]) cleanupKeyGroup(kg int, now int64) (visited, deleted int) {
	c.t.Range(kg, func(k K, n N, l []Timed[V]) bool {
		visited += len(l)
		kept := unexpired(l, c.ttl, now)
		if d := len(l) - len(kept); d > 0 {
			deleted += d
			if len(kept) == 0 {
				c.t.Delete(kg, k, n)
			} else {
				c.t.Put(kg, k, n, kept)
			}
		}
		return true
	})
	return visited, deleted
}

// unexpired returns the elements of l that have not expired at now, in a new
// slice if any has (so that a slice a caller holds is not changed).
func unexpired[V any](l []Timed[V], ttl ttlPolicy, now int64) []Timed[V] {
	for i, e := range l {
		if ttl.expired(e.Stamp, now) {
			kept := append([]Timed[V](nil), l[:i]...)
			for _, e := range l[i+1:] {
				if !ttl.expired(e.Stamp, now) {
					kept = append(kept, e)
				}
			}
			return kept
		}
	}
	return l
}

// mapCleaner cleans a map table of Timed values.
type mapCleaner[K, N, UK comparable, UV any] struct {
	t   MapTable[K, N, UK, Timed[UV]]
	ttl ttlPolicy
}

func (c mapCleaner[K, N, UK, UV]) cleanupKeyGroup(kg int, now int64) (visited, deleted int) {
	c.t.Range(kg, func(k K, n N, uk UK, uv Timed[UV]) bool {
		visited++
		if c.ttl.expired(uv.Stamp, now) {
			c.t.Delete(kg, k, n, uk)
			deleted++
		}
		return true
	})
	return visited, deleted
}
