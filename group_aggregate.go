package eddy

import (
	"fmt"
	"reflect"
	"time"

	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state/heap/cow"
)

// TableOption configures a relational operator (GroupAggregate, Join, TopN,
// Deduplicate, …). An option that does not apply to an operator fails the
// job with an error that says so.
type TableOption func(*tableConfig)

type tableConfig struct {
	ttl           time.Duration
	miniBatch     int
	miniBatchWait time.Duration
	localGlobal   bool
	// expiry holds the expiry functions of a join's rows by side
	// (JoinRowsExpireAt), each a func(X) int64 of the side's row type.
	expiry [2]any
	// output is a join's maker of result functions (JoinOutputReusing), a
	// func(bool) (func(*A, *B) O, func()).
	output any
	// copyKept is a top-N's copy of the rows it keeps (CopyingKeptRows), a
	// func(T) T.
	copyKept any
	set      []string
}

func (c *tableConfig) mark(name string) { c.set = append(c.set, name) }

// StateTTL drops the state of a key (a group, a join key, a partition) that
// has not been updated for d, as Flink's table.exec.state.ttl does: state
// stays bounded when keys go idle, at the price of wrong results for a key
// that comes back after d (its old rows are forgotten; retractions of them
// are counted as RetractionsWithoutState).
func StateTTL(d time.Duration) TableOption {
	return func(c *tableConfig) { c.ttl = d; c.mark("StateTTL") }
}

// MiniBatch buffers up to size input rows, or rows for up to latency, and
// applies them per key at once, as Flink's table.exec.mini-batch does: a hot
// key costs one state access and emits at most one change per batch.
func MiniBatch(size int, latency time.Duration) TableOption {
	return func(c *tableConfig) { c.miniBatch, c.miniBatchWait = size, latency; c.mark("MiniBatch") }
}

// LocalGlobal splits an aggregation in two, as Flink's TWO_PHASE strategy
// does: a local pre-aggregation before the exchange folds each mini-batch's
// rows per group into one partial accumulator, and the global aggregation
// merges partials. It needs MiniBatch, and aggregate functions that merge
// (no views: no Distinct, MinRetract or MaxRetract).
func LocalGlobal() TableOption {
	return func(c *tableConfig) { c.localGlobal = true; c.mark("LocalGlobal") }
}

// tableOptions applies opts and reports options that op does not take.
func tableOptions(env *Environment, op string, allowed []string, opts []TableOption) tableConfig {
	var c tableConfig
	for _, o := range opts {
		o(&c)
	}
	for _, name := range c.set {
		ok := false
		for _, a := range allowed {
			ok = ok || a == name
		}
		if !ok {
			env.fail(fmt.Errorf("eddy: %s does not take the %s option", op, name))
		}
	}
	if c.ttl < 0 || (c.ttl > 0 && c.ttl < time.Millisecond) {
		env.fail(fmt.Errorf("eddy: %s: StateTTL(%v) is invalid; use at least 1ms", op, c.ttl))
	}
	if c.miniBatch < 0 || (c.miniBatch > 0 && c.miniBatchWait <= 0) {
		env.fail(fmt.Errorf("eddy: %s: MiniBatch(%d, %v) is invalid; give a positive size and latency", op, c.miniBatch, c.miniBatchWait))
	}
	return c
}

// Grouped is a row of a GROUP BY result: the group's key and its aggregate.
type Grouped[K comparable, V any] struct {
	Key   K `json:"key"`
	Value V `json:"value"`
}

// partial is a local pre-aggregate of one group: its accumulator and the
// net number of rows folded in.
type partial[K comparable, ACC any] struct {
	Key   K
	Acc   ACC
	Count int64
}

// GroupAggregate computes f over every group of an unbounded changelog, as
// SQL's GROUP BY does: each change of a row updates its group's aggregate,
// and the result is the changelog of the result table (+I for a new group,
// -U/+U when a group's value changes, -D when its last row is retracted).
// If the input retracts rows, f must be able to take them back
// (agg.CanRetract): agg.Count, agg.Sum and agg.Avg can, agg.MinRetract and
// agg.MaxRetract keep their values in state to do so, agg.Distinct and
// agg.Filter wrap others, and agg.Combine2-4 compute several at once.
//
// The group state lives in the environment's state backend, is
// checkpointed and redistributed by key group like any keyed state. Options:
// StateTTL, MiniBatch, LocalGlobal.
func GroupAggregate[K comparable, T, ACC, OUT any](g *KeyedStream[K, changelog.Change[T]], f agg.Function[T, ACC, OUT], opts ...TableOption) *Stream[changelog.Change[Grouped[K, OUT]]] {
	return groupAggregate(g, f, "GroupAggregate", func(key K, acc ACC) Grouped[K, OUT] {
		return Grouped[K, OUT]{Key: key, Value: f.Result(acc)}
	}, equalFunc[Grouped[K, OUT]](), opts)
}

// GroupAggregateRows is GroupAggregate whose result rows row makes from a
// group's key and accumulator, in one step, instead of pairing the key with
// f's result (a row of the key's fields followed by the results', say). The
// rows compare with == to tell whether a group's row changed (byte for
// byte if they hold numbers only, as GroupAggregate's do), so R is a
// comparable type whose value does not change once row returns it (a
// struct of numbers and strings; not a pointer to memory row reuses, nor
// an interface, whose == may panic). If f is an agg.ResultKeeper, row
// must read acc only through what f's Result shows of it: an input that
// leaves the result as it is makes no row.
func GroupAggregateRows[K comparable, T, ACC, OUT any, R comparable](g *KeyedStream[K, changelog.Change[T]], f agg.Function[T, ACC, OUT], row func(key K, acc ACC) R, opts ...TableOption) *Stream[changelog.Change[R]] {
	// Rows of plain memory compare as GroupAggregate's do, byte for byte.
	equal := func(a, b R) bool { return a == b }
	if plainMemory(reflect.TypeFor[R]()) {
		equal = equalFunc[R]()
	}
	return groupAggregate(g, f, "GroupAggregateRows", row, equal, opts)
}

// groupAggregate builds GroupAggregate and GroupAggregateRows (api, which
// errors name), whose output rows row makes and equal compares (nil: rows
// that cannot be compared, emitted whether or not they changed). Its
// operator is named GroupAggregate either way.
func groupAggregate[K comparable, T, ACC, OUT, R any](g *KeyedStream[K, changelog.Change[T]], f agg.Function[T, ACC, OUT], api string, row func(key K, acc ACC) R, equal func(a, b R) bool, opts []TableOption) *Stream[changelog.Change[R]] {
	env := g.s.env
	cfg := tableOptions(env, api, []string{"StateTTL", "MiniBatch", "LocalGlobal"}, opts)
	in := g.s.ChangelogMode()
	retracts := !in.IsInsertOnly()
	views := agg.NumViews(f)
	if isUpsert(in) {
		env.fail(fmt.Errorf("eddy: %s after %q: the input carries +U without -U (%s): its updates do not retract the rows they replace, and its deletions may carry only key fields; normalise it first with eddy.ChangelogNormalize on its unique key", api, g.s.node.Name, in.Describe()))
	}
	if retracts && !agg.CanRetract(f) {
		env.fail(fmt.Errorf("eddy: %s after %q: the input is a %s stream, but %T cannot take rows back; use aggregates that can (agg.Count, agg.Sum, agg.Avg, agg.MinRetract, agg.MaxRetract, or agg.WithRetract)", api, g.s.node.Name, in.Describe(), f))
	}
	if cfg.localGlobal && (cfg.miniBatch == 0 || views > 0) {
		env.fail(fmt.Errorf("eddy: %s after %q: LocalGlobal needs MiniBatch and an aggregate without views (no Distinct, MinRetract or MaxRetract)", api, g.s.node.Name))
	}
	logic := ops.GroupAggLogic[K, T, ACC, R]{
		Create: f.Create, Merge: f.Merge, Views: views, InsertOnly: !retracts,
		Add:   func(acc ACC, row T, _ agg.Views) ACC { return f.Add(acc, row) },
		Row:   row,
		Equal: equal,
		// A group's row of numbers and strings does not change with its
		// accumulator: the operator keeps the last one it emitted.
		StableRows: !cow.MayShare(reflect.TypeFor[R]()),
		TTL:        cfg.ttl, MiniBatch: cfg.miniBatch, MiniBatchInterval: cfg.miniBatchWait,
	}
	// Resolve once what the function can do, so that a row costs one call.
	vf, isView := f.(agg.ViewFunction[T, ACC, OUT])
	r, isRetracting := f.(agg.Retracting[T, ACC])
	switch {
	case isView && views > 0:
		logic.Add = func(acc ACC, row T, v agg.Views) ACC { return vf.AddWith(acc, row, v, 0) }
		if agg.CanRetract(f) {
			logic.Retract = func(acc ACC, row T, v agg.Views) ACC { return vf.RetractWith(acc, row, v, 0) }
		}
	case isRetracting && agg.CanRetract(f):
		logic.Retract = func(acc ACC, row T, _ agg.Views) ACC { return r.Retract(acc, row) }
	case agg.CanRetract(f):
		logic.Retract = func(acc ACC, row T, v agg.Views) ACC { return agg.RetractWith(f, acc, row, v, 0) }
	}
	if cfg.localGlobal {
		return localGlobal(g, f, logic, cfg)
	}
	// A function that tells when an input leaves its result as it is
	// saves making the group's row for that input.
	if k, ok := f.(agg.ResultKeeper[T, ACC]); ok && equal != nil {
		logic.Keeps = k.KeepsResult
	}
	// The operator owns the accumulator it reads from its state: a function
	// that can change one in place need not copy it (agg.Mutating).
	if m, ok := f.(agg.Mutating[T, ACC]); ok {
		logic.Add = func(acc ACC, row T, v agg.Views) ACC { return m.AddInPlace(acc, row, v, 0) }
		if logic.Retract != nil {
			logic.Retract = func(acc ACC, row T, v agg.Views) ACC { return m.RetractInPlace(acc, row, v, 0) }
		}
	}
	out := keyedNode[K, changelog.Change[T], changelog.Change[R]](g, "GroupAggregate", func(ctx *runtime.Context, outs map[string]any) (runtime.Input[changelog.Change[T]], error) {
		return ops.NewGroupAgg(ctx, g.spec, env.backendFactory(), logic, outs)
	})
	return out.withMode(changelog.Retract)
}

// localGlobal builds the two phases of a local-global aggregation.
func localGlobal[K comparable, T, ACC, OUT, R any](g *KeyedStream[K, changelog.Change[T]], f agg.Function[T, ACC, OUT], logic ops.GroupAggLogic[K, T, ACC, R], cfg tableConfig) *Stream[changelog.Change[R]] {
	env := g.s.env
	key := g.spec.Key
	local := oneInput[changelog.Change[T], partial[K, ACC]](g.s, "LocalGroupAggregate", func(ctx *runtime.Context, outs map[string]any) (runtime.Input[changelog.Change[T]], error) {
		return ops.NewLocalAgg(ctx, ops.LocalAggLogic[K, changelog.Change[T], ACC, partial[K, ACC]]{
			Key:    key,
			Create: logic.Create,
			Fold: func(acc ACC, c changelog.Change[T]) (ACC, int64) {
				if c.Kind.IsAddition() {
					return f.Add(acc, c.Row), 1
				}
				return logic.Retract(acc, c.Row, nil), -1
			},
			Size: cfg.miniBatch, Interval: cfg.miniBatchWait,
			Partial: func(k K, acc ACC, n int64) partial[K, ACC] { return partial[K, ACC]{Key: k, Acc: acc, Count: n} },
		}, mainOut[partial[K, ACC]](outs)), nil
	})
	// The local phase runs chained to its input, so that the changes of a
	// row reach it in order.
	local.node.Parallelism = g.s.node.Parallelism
	byKey := KeyBy(local, func(p partial[K, ACC]) K { return p.Key })
	out := keyedNode[K, partial[K, ACC], changelog.Change[R]](byKey, "GlobalGroupAggregate", func(ctx *runtime.Context, outs map[string]any) (runtime.Input[partial[K, ACC]], error) {
		return ops.NewGlobalAgg(ctx, byKey.spec, env.backendFactory(), logic, func(p partial[K, ACC]) (ACC, int64) { return p.Acc, p.Count }, outs)
	})
	return out.withMode(changelog.Retract)
}
