package eddy

import (
	"fmt"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// KeyedBySinkKey tells WriteUpserts that the stream's unique key is the sink
// key: no two rows of the stream's table share a sink key at any time, and
// an update keeps its row's sink key or is a deletion plus an insertion.
// That holds for the output of GroupAggregate written under its group key,
// of ChangelogNormalize or Deduplicate under their key, of TopNRanked under
// (partition, rank). WriteUpserts then skips the upsert materializer and its
// state. If the promise is false, the sink may keep a row that the stream
// has deleted, or lose one it still holds.
func KeyedBySinkKey() TableOption {
	return func(c *tableConfig) { c.mark("KeyedBySinkKey") }
}

// WriteUpserts writes a changelog to sink, a sink that applies changes by
// key — an upsert (insert or replace) for +I and +U, a deletion for -D — as
// a key-value store, a database table with a primary key or a compacted
// topic does. key extracts the sink key from a row; the sink should declare
// connector.ChangelogSink with changelog.Upsert (or Retract).
//
// The sink's input is partitioned by the sink key, so that all changes of a
// key reach one writer, in order. The -U half of every update is dropped:
// the +U that follows replaces the row.
//
// A retract stream whose rows are not unique per sink key (its own key is
// another: several rows of its table may map to one sink key at once)
// cannot be written so: a -U or -D of one row would delete the key while
// other rows still hold it. For such streams WriteUpserts adds an upsert
// materializer keyed by the sink key (the problem Flink's
// SinkUpsertMaterializer solves): it keeps the rows of each sink key in
// their arrival order and writes the latest one still in the table (+U), or
// -D when none is left. Since the engine cannot see whether a stream is
// keyed by the sink key, it adds the materializer unless told with
// KeyedBySinkKey, or the stream is insert-only (upserts then apply each
// row in arrival order, which is what the materializer would write). An
// upsert stream (+U without -U) must be keyed by the sink key: its deletions
// may carry only key fields, which the materializer cannot match to rows;
// normalise it with ChangelogNormalize first otherwise.
//
// With a connector.TransactionalSink, each checkpoint's changes commit
// together; otherwise the writer is flushed at every checkpoint and, since
// upserts and deletions by key are idempotent, replaying changes after a
// failure converges to the same table. Options: KeyedBySinkKey, StateTTL
// (for the materializer's state).
func WriteUpserts[T any, K comparable](s *Stream[changelog.Change[T]], name string, key func(T) K, sink connector.Sink[changelog.Change[T]], opts ...TableOption) *Sink {
	env := s.env
	cfg := tableOptions(env, "WriteUpserts", []string{"KeyedBySinkKey", "StateTTL"}, opts)
	in := s.ChangelogMode()
	if c, ok := sink.(connector.ChangelogSink); ok {
		if m := c.ChangelogMode(); !m.Contains(changelog.UpdateAfter) || !m.Contains(changelog.Delete) {
			env.fail(fmt.Errorf("eddy: WriteUpserts to sink %q: the sink applies %s changes, not upserts (+U) and deletions (-D) by key; write to it with eddy.WriteTo", name, m.Describe()))
		}
	}
	materialize := !cfg.has("KeyedBySinkKey") && !in.IsInsertOnly()
	if materialize && isUpsert(in) {
		env.fail(fmt.Errorf("eddy: WriteUpserts to sink %q: %q produces an upsert stream (%s), whose deletions may carry only key fields, so its rows cannot be materialized under another key; if it is keyed by the sink key, say so with eddy.KeyedBySinkKey(), otherwise normalise it first with eddy.ChangelogNormalize on its unique key", name, s.node.Name, in.Describe()))
		materialize = false
	}
	if cfg.ttl > 0 && !materialize {
		env.fail(fmt.Errorf("eddy: WriteUpserts to sink %q: StateTTL applies to the upsert materializer, which this sink does not need (the stream is insert-only or keyed by the sink key); remove the option", name))
	}
	bySinkKey := KeyBy(s, func(c changelog.Change[T]) K { return key(c.Row) })
	var upserts *Stream[changelog.Change[T]]
	if materialize {
		logic := ops.UpsertMaterializeLogic[T]{Equal: rowEqual[T](), TTL: cfg.ttl}
		upserts = keyedNode[K, changelog.Change[T], changelog.Change[T]](bySinkKey, "UpsertMaterialize", func(ctx *runtime.Context, outs map[string]any) (runtime.Input[changelog.Change[T]], error) {
			return ops.NewUpsertMaterialize(ctx, bySinkKey.spec, env.backendFactory(), logic, outs)
		}).withMode(changelog.Upsert)
	} else {
		mode := in &^ changelog.ModeOf(changelog.UpdateBefore)
		if in.Contains(changelog.UpdateBefore) {
			mode |= changelog.ModeOf(changelog.Delete)
		}
		// The filter runs chained to its input, so that it sees the halves
		// of each update together.
		upserts = oneInput[changelog.Change[T], changelog.Change[T]](s, "DropUpdateBefore", func(_ *runtime.Context, outs map[string]any) (runtime.Input[changelog.Change[T]], error) {
			return ops.NewUpsertFilter(key, mainOut[changelog.Change[T]](outs)), nil
		}).withMode(mode)
		upserts.node.Parallelism = s.node.Parallelism
	}
	if ts, ok := sink.(TopologySink[changelog.Change[T]]); ok {
		// The sink partitions its input itself.
		return ts.AddTo(upserts, name)
	}
	sk := WriteTo(upserts, name, sink)
	// The sink receives its input partitioned by the sink key, whatever
	// parallelism it is given.
	e := sk.node.Inputs[0]
	e.Partition, e.Hash = runtime.Hash, bySinkKey.spec.Partitioner()
	return sk
}
