package eddy

import (
	"fmt"
	"slices"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// Keep says which row of each key Deduplicate keeps.
type Keep uint8

const (
	// KeepFirst keeps the first row of each key.
	KeepFirst Keep = iota
	// KeepLast keeps the last row of each key.
	KeepLast
)

// String returns "first" or "last".
func (k Keep) String() string {
	if k == KeepLast {
		return "last"
	}
	return "first"
}

// UpsertOutput makes Deduplicate with KeepLast emit an upsert stream on the
// key: +I for a key's first row, then +U for each row that replaces it,
// without the -U of the row replaced (Flink's deduplication without
// UPDATE_BEFORE). Upsert sinks (WriteUpserts) need no more.
func UpsertOutput() TableOption {
	return func(c *tableConfig) { c.mark("UpsertOutput") }
}

// has reports whether the option called name was given.
func (c *tableConfig) has(name string) bool { return slices.Contains(c.set, name) }

// Deduplicate keeps one row of each key of an insert-only changelog, as
// SQL's
//
//	SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY key ORDER BY t ASC|DESC) AS rn FROM s) WHERE rn = 1
//
// does, with t the processing time (domain ProcessingTime: rows are ordered
// as they arrive) or the event time (domain EventTime: rows are ordered by
// their timestamps).
//
//   - KeepFirst on processing time emits the first row of each key (+I) and
//     drops the others; its output is insert-only and its state a flag per
//     key.
//   - KeepFirst on event time keeps the row of the earliest timestamp (ties
//     go to the row that arrived first) and emits it (+I) once the watermark
//     passes its timestamp, as Flink's row-time deduplication minds the
//     watermark: a row that arrives later with an earlier timestamp still
//     wins, and the output is insert-only. A row that arrives after its
//     key's row was emitted with an earlier timestamp than that row's is
//     late: it is dropped and counted in LateRecords.
//   - KeepLast emits each key's first row (+I) and every later row as an
//     update of the one before (-U, +U; or +U alone with UpsertOutput). On
//     event time a row replaces the row kept only if its timestamp is not
//     earlier (ties go to the row that arrived last); older rows are
//     dropped.
//
// The input must be insert-only (Inserts, or a stream whose mode says so):
// a row kept for its arrival cannot be taken back. To keep the first or
// last row of a changelog that retracts rows, rank it with TopN and n = 1
// on a time column. On event time the rows need timestamps (a watermark
// strategy at the source).
//
// The state lives in the environment's state backend, is checkpointed, and
// is redistributed by key group when the job is rescaled. Options:
// StateTTL, UpsertOutput (KeepLast only).
func Deduplicate[K comparable, T any](g *KeyedStream[K, changelog.Change[T]], keep Keep, domain TimeDomain, opts ...TableOption) *Stream[changelog.Change[T]] {
	env := g.s.env
	name, allowed := "Deduplicate(KeepFirst)", []string{"StateTTL"}
	if keep == KeepLast {
		name, allowed = "Deduplicate(KeepLast)", append(allowed, "UpsertOutput")
	}
	cfg := tableOptions(env, name, allowed, opts)
	if keep != KeepFirst && keep != KeepLast {
		env.fail(fmt.Errorf("eddy: Deduplicate after %q: keep is %d; use eddy.KeepFirst or eddy.KeepLast", g.s.node.Name, keep))
	}
	if domain != EventTime && domain != ProcessingTime {
		env.fail(fmt.Errorf("eddy: Deduplicate after %q: domain is %d; use eddy.ProcessingTime or eddy.EventTime", g.s.node.Name, domain))
	}
	if in := g.s.ChangelogMode(); !in.IsInsertOnly() {
		env.fail(fmt.Errorf("eddy: Deduplicate after %q: the input is a %s stream, but deduplication needs an insert-only one (a row kept for its arrival cannot be taken back); rank the changelog with eddy.TopN and n = 1 ordered by a time column instead", g.s.node.Name, in.Describe()))
	}
	logic := ops.DedupLogic{KeepLast: keep == KeepLast, EventTime: domain == EventTime, Upsert: cfg.has("UpsertOutput"), TTL: cfg.ttl}
	out := keyedNode[K, changelog.Change[T], changelog.Change[T]](g, "Deduplicate", func(ctx *runtime.Context, outs map[string]any) (runtime.Input[changelog.Change[T]], error) {
		return ops.NewDedup(ctx, g.spec, env.backendFactory(), logic, outs)
	})
	switch {
	case !logic.KeepLast:
		return out.withMode(changelog.InsertOnly)
	case logic.Upsert:
		return out.withMode(changelog.ModeOf(changelog.Insert, changelog.UpdateAfter))
	}
	return out.withMode(changelog.ModeOf(changelog.Insert, changelog.UpdateBefore, changelog.UpdateAfter))
}
