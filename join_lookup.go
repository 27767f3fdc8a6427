package eddy

import (
	"context"
	"fmt"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// LookupOption configures a LookupJoin.
type LookupOption func(*lookupConfig)

type lookupConfig struct {
	concurrency  int
	cacheRows    int
	cacheTTL     time.Duration
	timeout      time.Duration
	retries      int
	retryBackoff time.Duration
	stats        *LookupStats
	sync         bool
	// output makes the result functions (LookupOutputReusing), a
	// func(bool) (func(T, *R) O, func()).
	output any
	errs   []string
}

// DefaultLookupConcurrency is the number of lookups a LookupJoin subtask
// runs at once unless LookupConcurrency says otherwise.
const DefaultLookupConcurrency = 16

// LookupConcurrency sets how many lookups each subtask of a LookupJoin runs
// at once (DefaultLookupConcurrency if not set; at least 1).
func LookupConcurrency(n int) LookupOption {
	return func(c *lookupConfig) {
		if n < 1 {
			c.errs = append(c.errs, fmt.Sprintf("LookupConcurrency(%d) is invalid; use at least 1", n))
		}
		c.concurrency = n
	}
}

// LookupCache caches the results of lookups in each subtask, as Flink's
// partial lookup cache does: up to maxRows rows in all (a key that finds
// nothing counts as one row; the least recently used keys go first), each
// result for ttl after its lookup (0: until evicted). A cached result may
// be stale: the table may have changed since.
func LookupCache(maxRows int, ttl time.Duration) LookupOption {
	return func(c *lookupConfig) {
		if maxRows < 1 || ttl < 0 || (ttl > 0 && ttl < time.Millisecond) {
			c.errs = append(c.errs, fmt.Sprintf("LookupCache(%d, %v) is invalid; give at least 1 row and a TTL of 0 (none) or at least 1ms", maxRows, ttl))
		}
		c.cacheRows, c.cacheTTL = maxRows, ttl
	}
}

// LookupTimeout bounds each attempt of a lookup: an attempt that takes
// longer fails (its context is cancelled, and its result, if it comes, is
// ignored).
func LookupTimeout(d time.Duration) LookupOption {
	return func(c *lookupConfig) {
		if d <= 0 {
			c.errs = append(c.errs, fmt.Sprintf("LookupTimeout(%v) is invalid; give a positive duration", d))
		}
		c.timeout = d
	}
}

// LookupRetries retries a failed lookup up to n times, pausing backoff
// before each retry. A lookup that still fails fails the job.
func LookupRetries(n int, backoff time.Duration) LookupOption {
	return func(c *lookupConfig) {
		if n < 0 || backoff < 0 {
			c.errs = append(c.errs, fmt.Sprintf("LookupRetries(%d, %v) is invalid; give 0 or more retries and a backoff of 0 or more", n, backoff))
		}
		c.retries, c.retryBackoff = n, backoff
	}
}

// LookupSynchronous says that the lookup function returns at once, without
// waiting on I/O (a table held in memory), as Flink's synchronous
// LookupFunction: the LookupJoin then calls it on its own goroutine, one
// key at a time, instead of on goroutines of their own, and LookupTimeout
// does not apply.
func LookupSynchronous() LookupOption {
	return func(c *lookupConfig) { c.sync = true }
}

// LookupOutputReusing gives a LookupJoin result functions that can write
// their rows into memory they reuse, in place of its result function
// (LookupFuncs.Result, which may then be nil). newResult makes the
// function of every parallel subtask, and is told whether the operators
// reading the join's results keep nothing of them once they have taken a
// batch (reuse): then the join calls rewind after each batch of its input,
// once the results have gone to them, and result may write later results
// into the memory of those it made before (an arena it rewinds).
// Otherwise rewind is never called, and every result must stay valid for
// as long as its readers keep it. T, R and O are the join's input, found
// and result row types; result runs on the subtask's goroutine, with the
// match valid only during the call.
func LookupOutputReusing[T, R, O any](newResult func(reuse bool) (result func(row T, match *R) O, rewind func())) LookupOption {
	return func(c *lookupConfig) { c.output = newResult }
}

// LookupStatsTo makes the LookupJoin count its cache hits, misses and
// lookups in s, which its subtasks share.
func LookupStatsTo(s *LookupStats) LookupOption {
	return func(c *lookupConfig) { c.stats = s }
}

// LookupStats counts what a LookupJoin does (see LookupStatsTo). Its
// methods may be called at any time, from any goroutine.
type LookupStats struct {
	c ops.LookupCounters
}

// Hits returns the number of input changes whose rows came from the cache,
// or from a lookup of the same key already in flight.
func (s *LookupStats) Hits() int64 { return s.c.Hits.Load() }

// Misses returns the number of input changes that started a lookup.
func (s *LookupStats) Misses() int64 { return s.c.Misses.Load() }

// Attempts returns the number of calls of the lookup function, retries
// included.
func (s *LookupStats) Attempts() int64 { return s.c.Attempts.Load() }

// Retries returns the number of calls of the lookup function that followed
// a failed one.
func (s *LookupStats) Retries() int64 { return s.c.Retries.Load() }

// MaxInFlight returns the most lookups one subtask has had in flight at
// once.
func (s *LookupStats) MaxInFlight() int64 { return s.c.MaxInFlight.Load() }

// LookupJoin joins each change of s with the rows an external table holds
// for its key when the change is processed, as SQL's processing-time lookup
// join (`JOIN dim FOR SYSTEM_TIME AS OF s.proctime ON s.key = dim.key`)
// does. lookup returns the table's rows for a key (none if it has none);
// kind says what happens to a change that finds none: InnerJoin drops it,
// LeftJoin emits it with a nil match. fn makes a result row; the pointer is
// valid only during the call.
//
// Lookups run asynchronously, up to LookupConcurrency at once per subtask,
// on goroutines of their own (lookup must be safe for concurrent use), and
// the results keep the order of the input: the results of a change, and
// then the watermarks after it, go out after those of the changes before
// it. The operator runs with the parallelism of its input, chained to it.
// Before a checkpoint barrier passes, it waits for its lookups in flight
// and emits their results, so that a checkpoint holds no lookup and a
// restore repeats none that the checkpoint covers; it keeps no state.
// Options: LookupConcurrency, LookupCache, LookupTimeout, LookupRetries,
// LookupSynchronous, LookupStatsTo. A lookup that fails after its retries fails the job with
// an error that names the key.
//
// A retraction is joined with the rows the table holds when it is
// processed, as in Flink: if the table changed since the row was added,
// the retraction takes back other result rows than the addition made.
// Input changes need whole rows (insert-only or retract streams; use
// ChangelogNormalize on an upsert stream). An insert-only input gives an
// insert-only result, another a retract stream, in which the -U and +U of
// an update come out together.
func LookupJoin[T any, K comparable, R, O any](s *Stream[changelog.Change[T]], key func(T) K, lookup func(ctx context.Context, key K) ([]R, error), kind JoinKind, fn func(row T, match *R) O, opts ...LookupOption) *Stream[changelog.Change[O]] {
	return LookupJoinEach(s, func() LookupFuncs[T, K, R, O] { return LookupFuncs[T, K, R, O]{Key: key, Lookup: lookup, Result: fn} }, kind, opts...)
}

// LookupFuncs are the functions of a lookup join (see LookupJoin): the
// key of an input row, the lookup of a key and the result row of an input
// row and a row found (nil if none). Match, if set, is the rest of the
// join condition: only the rows found that it accepts join the input row,
// and a LeftJoin keeps an input row none of whose rows it accepts, with a
// nil match, once.
type LookupFuncs[T any, K comparable, R, O any] struct {
	Key    func(T) K
	Lookup func(ctx context.Context, key K) ([]R, error)
	Result func(row T, match *R) O
	Match  func(row T, found *R) bool
}

// LookupJoinEach is LookupJoin with functions that newFuncs makes for each
// subtask, which may therefore reuse memory from call to call without
// locks: Key and Result run on the subtask's goroutine, Lookup too with
// LookupSynchronous (and otherwise on goroutines of its own, several at
// once). newFuncs is also called once when the job is built.
func LookupJoinEach[T any, K comparable, R, O any](s *Stream[changelog.Change[T]], newFuncs func() LookupFuncs[T, K, R, O], kind JoinKind, opts ...LookupOption) *Stream[changelog.Change[O]] {
	env := s.env
	cfg := lookupConfig{concurrency: DefaultLookupConcurrency}
	for _, o := range opts {
		o(&cfg)
	}
	for _, e := range cfg.errs {
		env.fail(fmt.Errorf("eddy: LookupJoin after %q: %s", s.node.Name, e))
	}
	if kind != InnerJoin && kind != LeftJoin {
		env.fail(fmt.Errorf("eddy: LookupJoin after %q: a lookup join is an InnerJoin or a LeftJoin, not a %v", s.node.Name, kind))
	}
	newResult, _ := cfg.output.(func(bool) (func(T, *R) O, func()))
	if cfg.output != nil && newResult == nil {
		var t T
		var r R
		var o O
		env.fail(fmt.Errorf("eddy: LookupJoin after %q: LookupOutputReusing was given a %T, but the join's rows are %T, its rows found %T and its results %T; give a func(bool) (func(%T, *%T) %T, func())", s.node.Name, cfg.output, t, r, o, t, r, o))
	}
	if newFuncs == nil {
		env.fail(fmt.Errorf("eddy: LookupJoinEach after %q: no function to make the key, lookup and result functions", s.node.Name))
	} else if f := newFuncs(); f.Key == nil || f.Lookup == nil || (f.Result == nil && newResult == nil) {
		env.fail(fmt.Errorf("eddy: LookupJoin after %q: the key, lookup and result functions must not be nil", s.node.Name))
	}
	checkWholeRows(env, "LookupJoin", s)
	logic := ops.LookupJoinLogic[T, K, R, O]{
		LeftOuter:   kind == LeftJoin,
		Concurrency: cfg.concurrency, CacheRows: cfg.cacheRows, CacheTTL: cfg.cacheTTL,
		Timeout: cfg.timeout, Retries: cfg.retries, RetryBackoff: cfg.retryBackoff, Sync: cfg.sync,
	}
	if cfg.stats != nil {
		logic.Stats = &cfg.stats.c
	}
	name := "LookupJoin"
	if kind == LeftJoin {
		name += " (LEFT JOIN)"
	}
	out := oneInput[changelog.Change[T], changelog.Change[O]](s, name, func(ctx *runtime.Context, outs map[string]any) (runtime.Input[changelog.Change[T]], error) {
		l := logic
		f := newFuncs()
		l.Key, l.Lookup, l.Output, l.Match = f.Key, f.Lookup, f.Result, f.Match
		if newResult != nil {
			l.Output, l.Rewind = newResult(ctx.RecordsReused)
			if !ctx.RecordsReused {
				l.Rewind = nil
			}
		}
		return ops.NewLookupJoin(ctx, l, outs), nil
	})
	out.node.Parallelism = s.node.Parallelism
	if s.ChangelogMode().IsInsertOnly() {
		return out.withMode(changelog.InsertOnly)
	}
	return out.withMode(changelog.Retract)
}
