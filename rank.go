package eddy

import (
	"fmt"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// Ranked is a row of a top-N result with its row number in its partition:
// 1 for the first row.
type Ranked[T any] struct {
	Row  T     `json:"row"`
	Rank int64 `json:"rank"`
}

// TopN keeps the first n rows of every partition of a changelog in the order
// less gives, as SQL's
//
//	SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY key ORDER BY …) AS rn FROM t) WHERE rn <= n
//
// does without rn in its result: the output is the changelog of the top-N
// table, in which a row that enters a partition's top n is inserted (+I) and
// a row that leaves it (pushed out by a better row, or retracted) is deleted
// (-D). The partitions are the keys of g (see GroupBy).
//
// less must be a strict weak order. Rows that tie (neither precedes the
// other) are ranked in the order they arrived, except that rows brought back
// into the top by a retraction come in an unspecified order among their
// ties: end less with a unique column for a deterministic result. Rows are
// compared with == to find the row a retraction takes back, as SQL compares
// rows by value.
//
// On an insert-only input (Inserts, or a stream whose mode says so) the state
// of a partition is its top n rows alone, as Flink's AppendOnlyTopN keeps.
// On a retracting input the operator keeps every row of the partition, so
// that a retraction can bring the next row into the top n (Flink's
// RetractableTopN): the first n + max(n, 16) rows in order in one value,
// which is all that a change among them reads and writes, and the rows
// beyond with their counts in a map state, which a change beyond them
// reads and writes one row at a time. When retractions have taken the
// first rows below n, the operator reads the map and moves the next rows
// back. No change rewrites the whole partition. Upsert input (+U without
// -U, -D with key fields only) is refused: normalise it first with
// ChangelogNormalize.
//
// The state lives in the environment's state backend, is checkpointed, and
// is redistributed by key group when the job is rescaled. Options:
// StateTTL.
func TopN[K comparable, T comparable](g *KeyedStream[K, changelog.Change[T]], n int, less func(a, b T) bool, opts ...TableOption) *Stream[changelog.Change[T]] {
	out := topN(g, "TopN", n, less, false, func(row T, _ int64) T { return row }, opts)
	return out.withMode(changelog.ModeOf(changelog.Insert, changelog.Delete))
}

// TopNRanked is TopN with each row's number in its partition in the output,
// as SQL's top-N query that selects rn: its changelog is keyed by (partition,
// rank). When a row enters or leaves the top n, every row whose number
// changes is updated: -U of the row at that number, +U of the row now there
// (the halves of each update travel together). A number newly taken is
// inserted (+I), one left empty is deleted (-D).
func TopNRanked[K comparable, T comparable](g *KeyedStream[K, changelog.Change[T]], n int, less func(a, b T) bool, opts ...TableOption) *Stream[changelog.Change[Ranked[T]]] {
	out := topN(g, "TopNRanked", n, less, true, func(row T, rank int64) Ranked[T] { return Ranked[T]{Row: row, Rank: rank} }, opts)
	return out.withMode(changelog.Retract)
}

func topN[K comparable, T comparable, R any](g *KeyedStream[K, changelog.Change[T]], name string, n int, less func(a, b T) bool, numbered bool, row func(T, int64) R, opts []TableOption) *Stream[changelog.Change[R]] {
	env := g.s.env
	cfg := tableOptions(env, name, []string{"StateTTL", "CopyingKeptRows"}, opts)
	in := g.s.ChangelogMode()
	if n < 1 {
		env.fail(fmt.Errorf("eddy: %s after %q: n = %d; keep at least 1 row per partition", name, g.s.node.Name, n))
	}
	if less == nil {
		env.fail(fmt.Errorf("eddy: %s after %q: no order; give a less function", name, g.s.node.Name))
	}
	if isUpsert(in) {
		env.fail(fmt.Errorf("eddy: %s after %q: the input carries +U without -U (%s): its updates do not retract the rows they replace, and its deletions may carry only key fields; normalise it first with eddy.ChangelogNormalize on its unique key", name, g.s.node.Name, in.Describe()))
	}
	logic := ops.RankLogic[T, R]{N: n, Less: less, Row: row, Numbered: numbered, Retracting: !in.IsInsertOnly(), TTL: cfg.ttl}
	if cfg.copyKept != nil {
		c, ok := cfg.copyKept.(func(T) T)
		if !ok {
			env.fail(fmt.Errorf("eddy: %s after %q: CopyingKeptRows copies %T, not rows of the stream (%T)", name, g.s.node.Name, cfg.copyKept, *new(T)))
		}
		logic.Copy = c
	}
	return keyedNode[K, changelog.Change[T], changelog.Change[R]](g, name, func(ctx *runtime.Context, outs map[string]any) (runtime.Input[changelog.Change[T]], error) {
		return ops.NewRank(ctx, g.spec, env.backendFactory(), logic, outs)
	})
}

// CopyingKeptRows makes a top-N (TopN, TopNRanked) keep and emit copies of
// its input rows, made by copy, rather than the rows themselves: it then
// keeps nothing of its input, and the operator before it may hand it rows
// in memory it reuses for the next ones (MapRowsReusing, JoinOutputReusing)
// when the two are chained (ReinterpretAsKeyed). On an insert-only input a
// row that does not enter the top N is never copied; on a retracting one
// every row is, additions and retractions alike, as the operator keeps
// every row and looks retracted ones up. copy must return a value that
// shares no memory with its argument and, for a retracting input, is equal
// (==) to it; it is a func(T) T for the stream's rows T. The partition key
// the operator keeps must share no memory with the row either.
func CopyingKeptRows[T any](copy func(T) T) TableOption {
	return func(c *tableConfig) { c.copyKept = copy; c.mark("CopyingKeptRows") }
}

// isUpsert reports whether a stream of mode m updates rows by key: it has
// +U without -U (as Flink's ChangelogMode tells upsert from retract).
func isUpsert(m changelog.Mode) bool {
	return m.Contains(changelog.UpdateAfter) && !m.Contains(changelog.UpdateBefore)
}
