package eddy

import (
	"fmt"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// TemporalJoin joins each change of the probe changelog with the version
// of a versioned table valid at the change's event time, as SQL's
// `probe JOIN versions FOR SYSTEM_TIME AS OF probe.time ON probe.key =
// versions.key` does (Flink's event-time temporal join): the price of an
// order at the time of the order, not the latest one.
//
// versions is the versioned table's changelog, keyed by its primary key
// (the join key): an upsert or retract stream with event timestamps, in
// which an insertion or update at time t makes its row the key's version
// from t on, and a deletion at t ends the key's row (the last change at
// one time wins). A probe change at time t joins the latest change of its
// key at or before t if that change is an insertion or update; kind says
// what happens to a probe change that finds no version: InnerJoin drops
// it, LeftJoin emits it with a nil version. fn makes the result row; the
// pointer is valid only during the call.
//
// Results go out once the watermark (the smaller of both inputs') passes
// the probe change's time, so that every version up to it has arrived;
// they carry the probe change's time and kind, and are final: a later
// version does not change them. Both inputs need event timestamps (a
// watermark strategy with a timestamp extractor on their sources); a
// record without one fails the job with an error that says so. Probe
// changes wait in state until the watermark passes them, and each key
// keeps its versions from the one valid at the watermark on; older ones
// are deleted. A probe change that arrives behind the watermark (late)
// joins the versions still kept, as in Flink.
//
// Changelog modes: the probe input must carry whole rows in its
// retractions (insert-only or retract; use ChangelogNormalize on an upsert
// stream); an insert-only probe input gives an insert-only result, another
// a retract stream. An update of a probe row (its -U and +U, at one time)
// comes out as an update of the result row, the -U followed by the +U, when
// both find a version or the join is a LeftJoin; other changes come out as
// +I and -D. The state
// is checkpointed and redistributed by key group when the job is
// rescaled.
func TemporalJoin[K comparable, A, B, O any](probe *KeyedStream[K, changelog.Change[A]], versions *KeyedStream[K, changelog.Change[B]], kind JoinKind, fn func(a A, b *B) O) *Stream[changelog.Change[O]] {
	env := probe.s.env
	if kind != InnerJoin && kind != LeftJoin {
		env.fail(fmt.Errorf("eddy: TemporalJoin of %q and %q: a temporal join is an InnerJoin or a LeftJoin, not a %v", probe.s.node.Name, versions.s.node.Name, kind))
	}
	if fn == nil {
		env.fail(fmt.Errorf("eddy: TemporalJoin of %q and %q: the result function is nil", probe.s.node.Name, versions.s.node.Name))
	}
	checkWholeRows(env, "TemporalJoin", probe.s)
	logic := ops.TemporalJoinLogic[A, B, O]{
		LeftOuter: kind == LeftJoin,
		Output:    func(a *A, b *B) O { return fn(*a, b) },
	}
	name := "TemporalJoin"
	if kind == LeftJoin {
		name += " (LEFT JOIN)"
	}
	out := twoKeyed[K, changelog.Change[A], changelog.Change[B], changelog.Change[O]](ConnectKeyed(probe, versions), name,
		func(ctx *runtime.Context, spec ops.KeySpec[K, ops.Either[changelog.Change[A], changelog.Change[B]]], outs map[string]any) (runtime.Input[ops.Either[changelog.Change[A], changelog.Change[B]]], error) {
			return ops.NewTemporalJoin(ctx, spec, env.backendFactory(), logic, outs)
		})
	if probe.s.ChangelogMode().IsInsertOnly() {
		return out.withMode(changelog.InsertOnly)
	}
	return out.withMode(changelog.Retract)
}
