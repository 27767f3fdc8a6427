package eddy

import (
	"reflect"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// ChangelogNormalize turns an upsert changelog into a retract changelog, as
// Flink's ChangelogNormalize does. g must be keyed by the stream's unique
// key (GroupBy on the key columns): each +I or +U replaces the row of its
// key and each -D removes it, the -D possibly carrying only the key fields,
// as upsert sources (CDC, compacted topics) produce them.
//
// The operator keeps the last row of each key and emits: +I for a key's
// first row; -U of the old row then +U of the new one when a key's row
// changes; nothing when an upsert leaves the row as it was (rows are
// compared with ==, or reflect.DeepEqual for types without ==); -D of the
// whole row for a deletion. A deletion of a key with no row (never seen, or
// expired by StateTTL) changes nothing and is counted as a retraction
// without state (RetractionsWithoutState). A -U in the input is a deletion
// of its key's row. The output can feed any operator that needs whole rows
// in its retractions (GroupAggregate, TopN, joins).
//
// The state lives in the environment's state backend, is checkpointed, and
// is redistributed by key group when the job is rescaled. Options:
// StateTTL.
func ChangelogNormalize[K comparable, T any](g *KeyedStream[K, changelog.Change[T]], opts ...TableOption) *Stream[changelog.Change[T]] {
	env := g.s.env
	cfg := tableOptions(env, "ChangelogNormalize", []string{"StateTTL"}, opts)
	logic := ops.NormalizeLogic[T]{Equal: rowEqual[T](), TTL: cfg.ttl}
	out := keyedNode[K, changelog.Change[T], changelog.Change[T]](g, "ChangelogNormalize", func(ctx *runtime.Context, outs map[string]any) (runtime.Input[changelog.Change[T]], error) {
		return ops.NewNormalize(ctx, g.spec, env.backendFactory(), logic, outs)
	})
	mode := changelog.ModeOf(changelog.Insert, changelog.UpdateBefore, changelog.UpdateAfter)
	if in := g.s.ChangelogMode(); in.Contains(changelog.Delete) || in.Contains(changelog.UpdateBefore) {
		mode |= changelog.ModeOf(changelog.Delete)
	}
	return out.withMode(mode)
}

// rowEqual returns == on T if values of T can be compared, and
// reflect.DeepEqual otherwise.
func rowEqual[T any]() func(a, b T) bool {
	if eq := equalFunc[T](); eq != nil {
		return eq
	}
	return func(a, b T) bool { return reflect.DeepEqual(a, b) }
}
