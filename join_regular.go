package eddy

import (
	"fmt"
	"slices"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// JoinKind says which rows without a match a join keeps, padded with a nil
// pointer for the missing side: none (InnerJoin), those of the left input
// (LeftJoin), of the right input (RightJoin), or of both (FullJoin), as
// SQL's INNER, LEFT, RIGHT and FULL OUTER JOIN do. LeftSemiJoin and
// LeftAntiJoin keep left rows alone: those with a match and those without
// one, as SQL's IN and EXISTS subqueries and their negations do.
type JoinKind int

const (
	// InnerJoin keeps only pairs of matching rows.
	InnerJoin JoinKind = iota
	// LeftJoin also keeps every left row that has no match.
	LeftJoin
	// RightJoin also keeps every right row that has no match.
	RightJoin
	// FullJoin also keeps the rows of both inputs that have no match.
	FullJoin
	// LeftSemiJoin keeps each left row that has at least one match, once
	// (as often as it is in the left table), whatever its number of
	// matches: WHERE EXISTS (...) and WHERE x IN (SELECT ...). The right
	// side of its results is always nil.
	LeftSemiJoin
	// LeftAntiJoin keeps each left row that has no match: WHERE NOT
	// EXISTS (...). The right side of its results is always nil.
	LeftAntiJoin
)

// String returns the SQL name of the join kind.
func (k JoinKind) String() string {
	switch k {
	case InnerJoin:
		return "INNER JOIN"
	case LeftJoin:
		return "LEFT JOIN"
	case RightJoin:
		return "RIGHT JOIN"
	case FullJoin:
		return "FULL OUTER JOIN"
	case LeftSemiJoin:
		return "LEFT SEMI JOIN"
	case LeftAntiJoin:
		return "LEFT ANTI JOIN"
	}
	return fmt.Sprintf("JoinKind(%d)", int(k))
}

func (k JoinKind) valid() bool { return k >= InnerJoin && k <= LeftAntiJoin }

// semi tells whether the kind keeps left rows alone.
func (k JoinKind) semi() bool { return k == LeftSemiJoin || k == LeftAntiJoin }

// JoinSide names an input of a join.
type JoinSide int

const (
	// LeftSide is the first input of a join.
	LeftSide JoinSide = iota
	// RightSide is the second input of a join.
	RightSide
)

// String returns the side's name in Go: "LeftSide" or "RightSide".
func (s JoinSide) String() string {
	switch s {
	case LeftSide:
		return "LeftSide"
	case RightSide:
		return "RightSide"
	}
	return fmt.Sprintf("JoinSide(%d)", int(s))
}

// uniqueKeyOption is the name JoinKeyContainsUniqueKey(s) records.
func (s JoinSide) uniqueKeyOption() string { return "JoinKeyContainsUniqueKey(" + s.String() + ")" }

// JoinKeyContainsUniqueKey declares that the join key of a Join or JoinOn
// contains a unique key of the input side: that input's table holds at
// most one row per join key at any time, as a table joined on its primary
// key does (auctions joined on their id). Flink's planner derives the same
// from a PRIMARY KEY (its join input side "join key contains unique key").
//
// The join keeps that input's one row per key and checks the declaration:
// a row added to a key that holds one already (a second insertion, or an
// insertion without the retraction of the row before) fails the job with
// an error that names the key and both rows. An update (-U then +U)
// replaces the row.
//
// If the input is also insert-only (by its changelog mode: Inserts, or
// AsChangelog with changelog.InsertOnly), its row of a key never changes
// once it is there, and the join keeps the other input's rows only until
// it comes: a row of the other input that arrives first waits in state;
// when the unique row of its key arrives, the waiting rows are joined with
// it (or, for an outer side, found unmatched for good) and dropped; the
// other input's later changes of the key are joined with it as they come,
// and not kept. The state of a key is then its waiting rows, then the
// unique row alone, with its number of matches if its side is outer. The
// results are those of a join that keeps every row, for inputs that keep
// to the declaration; a retraction on the unique, insert-only input fails
// the job. This holds unless the other input is declared unique too, in
// which case each keeps its one row per key.
//
// With StateTTL the unique row expires like all state of its key: rows of
// the other input that come after that wait for a row of their key again,
// and retractions of rows joined before it expired are counted as
// RetractionsWithoutState. A join that keeps only some rows names its
// state apart: a savepoint of it restores only into a join with the same
// declaration, the same insert-only inputs and StateTTL set or not alike;
// the restore of any other fails, naming the state.
func JoinKeyContainsUniqueKey(side JoinSide) TableOption {
	name := side.uniqueKeyOption()
	return func(c *tableConfig) { c.mark(name) }
}

// expiryOption is the name JoinRowsExpireAt(s, ...) records.
func (s JoinSide) expiryOption() string { return "JoinRowsExpireAt(" + s.String() + ")" }

// JoinRowsExpireAt declares when the rows of one input of a Join or JoinOn
// stop being needed: a row x of that side joins no change of the other
// input, addition or retraction, that comes once the join's watermark has
// reached expire(x). X is the row type of the side's changes. The join
// then drops x from its state when the watermark reaches expire(x), with an
// event-time timer per join key, and the results are those of a join that
// keeps every row; a row that arrives with its expiry reached (late) is
// joined with the other input's rows held and not kept. This bounds the
// state of a join whose condition bounds the other input's time column by
// the row's, when that column only grows with the watermark (the
// window_end of a window aggregation's results: eddy's SQL planner
// declares it so).
//
// The side must be insert-only (a retraction of a dropped row would find
// nothing to take back), and the declaration does not combine with
// JoinKeyContainsUniqueKey nor with a semi or anti join. If the other
// input's changes do not keep to the declaration, results that involve
// dropped rows are missed. The join names its state apart: a savepoint of
// it restores only into a join with rows that expire, and the other way
// round.
func JoinRowsExpireAt[X any](side JoinSide, expire func(x X) int64) TableOption {
	name := side.expiryOption()
	return func(c *tableConfig) {
		if side == LeftSide || side == RightSide {
			c.expiry[side] = expire
		}
		c.mark(name)
	}
}

// outputOption is the name JoinOutputReusing records.
const outputOption = "JoinOutputReusing"

// JoinOutputReusing gives a Join or JoinOn result functions that can write
// their rows into memory they reuse, in place of the fn passed to the join.
// newFn makes the function of every parallel subtask, and is told whether
// the operators reading the join's results keep nothing of them once they
// have taken a batch (reuse): then the join calls rewind after each batch
// of its input, once the results have gone to them, and fn may write later
// results into the memory of those it made before (an arena it rewinds).
// Otherwise rewind is never called, and every result must stay valid for
// as long as its readers keep it. fn is bound as Join's is: deterministic,
// with the rows valid only during the call. A and B are the row types of
// the join's inputs and O that of its results. It applies to every kind
// of join; the fn passed to the join may then be nil, with the join's type
// arguments given explicitly (Join[K, A, B, O]), since Go cannot infer O
// from a nil function.
func JoinOutputReusing[A, B, O any](newFn func(reuse bool) (fn func(a *A, b *B) O, rewind func())) TableOption {
	return func(c *tableConfig) {
		c.output = newFn
		c.mark(outputOption)
	}
}

// Join joins two changelogs on their key, as SQL's regular (unbounded)
// join `left JOIN right ON left.key = right.key` does: its result is the
// changelog of the join of the two tables the inputs describe. kind says
// which unmatched rows it keeps (InnerJoin, LeftJoin, RightJoin, FullJoin).
//
// fn makes the result row of a pair of rows; for an unmatched row of an
// outer join, the missing side is a nil pointer. fn is called again with
// the same rows to retract a result, so it must be deterministic: a
// function of its arguments only. The pointers are valid only during the
// call: copy the rows, not the pointers.
//
// Each join key's state holds the rows of both inputs with that key: for
// each distinct row, the number of times it is in its table (and, with
// JoinOn and an outer side, its number of matches). Rows are compared with
// ==, so A and B must be comparable: == on the whole row is the identity of
// a row, and a retraction takes back a row equal to one inserted (turn rows
// with slices or maps into a comparable form with MapRows first). An
// unmatched row of an outer side is emitted padded with nil, retracted (-D)
// when its first match arrives, and emitted padded again when its last
// match goes.
//
// A LeftSemiJoin or LeftAntiJoin emits fn(a, nil) for each left row a in
// its result: a semi join's left rows while they have at least one match,
// an anti join's while they have none. A change of a right row that gives
// a left row its first match, or takes its last, emits or retracts that
// left row; with JoinOn, each left row keeps its number of matches in
// state. They keep every row of both inputs (JoinKeyContainsUniqueKey
// does not apply to them) and name their state apart from the other kinds.
//
// Changelog modes: the inputs must carry whole rows in their retractions
// (insert-only or retract streams); turn an upsert stream into a retract
// one with ChangelogNormalize first. The result is insert-only for an
// InnerJoin or a LeftSemiJoin of two insert-only inputs and a retract
// stream otherwise. An
// update of an input row (a -U followed by its +U, of the same join key)
// comes out as updates of the result rows it is part of, each -U followed
// by its +U; other changes come out as +I and -D.
//
// The state lives in the environment's state backend, one value per join
// key, and is checkpointed and redistributed by key group when the job is
// rescaled. It grows with the inputs' tables: bound it with StateTTL, which
// forgets the rows of a join key when neither input has changed a row of
// that key for the given time (retractions of forgotten rows are counted as
// RetractionsWithoutState, and results that involve them are not
// retracted).
//
// A declaration that the join key contains a unique key of an input
// (JoinKeyContainsUniqueKey) keeps one row per key for it and, if that
// input is insert-only, keeps the other input's rows only until the unique
// row of their key arrives, as a join of bids with their auction needs.
// Options: StateTTL, JoinKeyContainsUniqueKey, JoinRowsExpireAt,
// JoinOutputReusing.
func Join[K comparable, A, B comparable, O any](left *KeyedStream[K, changelog.Change[A]], right *KeyedStream[K, changelog.Change[B]], kind JoinKind, fn func(a *A, b *B) O, opts ...TableOption) *Stream[changelog.Change[O]] {
	return regularJoin(left, right, kind, nil, fn, "Join", opts)
}

// JoinOn is Join with a further join condition, as in SQL's
// `ON left.key = right.key AND on(left, right)`: rows of the same key join
// only if on accepts them, and a row of an outer side is unmatched while
// no row of the other side of its key is accepted with it. on must be
// deterministic. Each row of an outer side keeps its number of matches in
// state, as Flink's outer join state does.
func JoinOn[K comparable, A, B comparable, O any](left *KeyedStream[K, changelog.Change[A]], right *KeyedStream[K, changelog.Change[B]], kind JoinKind, on func(a A, b B) bool, fn func(a *A, b *B) O, opts ...TableOption) *Stream[changelog.Change[O]] {
	if on == nil {
		left.s.env.fail(fmt.Errorf("eddy: JoinOn of %q and %q: the condition is nil; use Join for a join on the key alone", left.s.node.Name, right.s.node.Name))
	}
	return regularJoin(left, right, kind, on, fn, "JoinOn", opts)
}

func regularJoin[K comparable, A, B comparable, O any](left *KeyedStream[K, changelog.Change[A]], right *KeyedStream[K, changelog.Change[B]], kind JoinKind, on func(a A, b B) bool, fn func(a *A, b *B) O, op string, opts []TableOption) *Stream[changelog.Change[O]] {
	env := left.s.env
	cfg := tableOptions(env, op, []string{"StateTTL", LeftSide.uniqueKeyOption(), RightSide.uniqueKeyOption(), LeftSide.expiryOption(), RightSide.expiryOption(), outputOption}, opts)
	if !kind.valid() {
		env.fail(fmt.Errorf("eddy: %s of %q and %q: %v is not a join kind; use InnerJoin, LeftJoin, RightJoin, FullJoin, LeftSemiJoin or LeftAntiJoin", op, left.s.node.Name, right.s.node.Name, kind))
	}
	for _, o := range cfg.set {
		if kind.semi() && o != "StateTTL" && o != outputOption {
			env.fail(fmt.Errorf("eddy: %s (%v) of %q and %q: a semi or anti join keeps every row of both inputs and takes no %s; drop the option", op, kind, left.s.node.Name, right.s.node.Name, o))
			break
		}
	}
	newOut, _ := cfg.output.(func(bool) (func(*A, *B) O, func()))
	switch {
	case cfg.output != nil && newOut == nil:
		var a A
		var b B
		var o O
		env.fail(fmt.Errorf("eddy: %s of %q and %q: %s was given a %T, but the join's rows are %T and %T and its results %T; give a func(bool) (func(*%T, *%T) %T, func())", op, left.s.node.Name, right.s.node.Name, outputOption, cfg.output, a, b, o, a, b, o))
	case fn == nil && newOut == nil:
		env.fail(fmt.Errorf("eddy: %s of %q and %q: the result function is nil", op, left.s.node.Name, right.s.node.Name))
	}
	checkWholeRows(env, op, left.s)
	checkWholeRows(env, op, right.s)
	logic := ops.RegularJoinLogic[A, B, O]{
		LeftOuter:       kind == LeftJoin || kind == FullJoin,
		RightOuter:      kind == RightJoin || kind == FullJoin,
		LeftInsertOnly:  left.s.ChangelogMode().IsInsertOnly(),
		RightInsertOnly: right.s.ChangelogMode().IsInsertOnly(),
		LeftUnique:      slices.Contains(cfg.set, LeftSide.uniqueKeyOption()),
		RightUnique:     slices.Contains(cfg.set, RightSide.uniqueKeyOption()),
		Semi:            kind == LeftSemiJoin,
		Anti:            kind == LeftAntiJoin,
		On:              on, Output: fn, Equal: equalFunc[O](), TTL: cfg.ttl,
	}
	logic.LeftExpiry = joinExpiry[A](env, op, LeftSide, cfg.expiry[LeftSide], logic.LeftInsertOnly, logic.LeftUnique || logic.RightUnique)
	logic.RightExpiry = joinExpiry[B](env, op, RightSide, cfg.expiry[RightSide], logic.RightInsertOnly, logic.LeftUnique || logic.RightUnique)
	name := op
	if kind != InnerJoin {
		name = fmt.Sprintf("%s (%v)", op, kind)
	}
	out := twoKeyed[K, changelog.Change[A], changelog.Change[B], changelog.Change[O]](ConnectKeyed(left, right), name,
		func(ctx *runtime.Context, spec ops.KeySpec[K, ops.Either[changelog.Change[A], changelog.Change[B]]], outs map[string]any) (runtime.Input[ops.Either[changelog.Change[A], changelog.Change[B]]], error) {
			l := logic
			if newOut != nil {
				l.Output, l.Rewind = newOut(ctx.RecordsReused)
				if !ctx.RecordsReused {
					l.Rewind = nil
				}
			}
			return ops.NewRegularJoin(ctx, spec, env.backendFactory(), l, outs)
		})
	if (kind == InnerJoin || kind == LeftSemiJoin) && left.s.ChangelogMode().IsInsertOnly() && right.s.ChangelogMode().IsInsertOnly() {
		return out.withMode(changelog.InsertOnly)
	}
	return out.withMode(changelog.Retract)
}

// joinExpiry returns the expiry function of one side of a join given by
// JoinRowsExpireAt (nil if none), failing the job if it does not fit the
// side.
func joinExpiry[X any](env *Environment, op string, side JoinSide, f any, insertOnly, unique bool) func(X) int64 {
	if f == nil {
		return nil
	}
	expire, ok := f.(func(X) int64)
	switch {
	case !ok:
		var x X
		env.fail(fmt.Errorf("eddy: %s: %s takes a %T, but the rows of that side are %T; give a func(%T) int64", op, side.expiryOption(), f, x, x))
	case expire == nil:
		env.fail(fmt.Errorf("eddy: %s: %s takes a nil function; drop the option or give the rows' expiry", op, side.expiryOption()))
	case !insertOnly:
		env.fail(fmt.Errorf("eddy: %s: %s needs an insert-only input on that side (a retraction of a dropped row would find nothing to take back); drop the option, or declare the input insert-only if it is (AsChangelog with changelog.InsertOnly)", op, side.expiryOption()))
	case unique:
		env.fail(fmt.Errorf("eddy: %s: %s does not combine with JoinKeyContainsUniqueKey; drop one of them", op, side.expiryOption()))
	}
	return expire
}

// checkWholeRows fails the job if s is a changelog whose retractions need
// not carry whole rows (an upsert stream: +U without -U), which a join or
// another operator that matches rows by value cannot take back.
func checkWholeRows[T any](env *Environment, op string, s *Stream[T]) {
	m := s.ChangelogMode()
	if m.Contains(changelog.UpdateAfter) && !m.Contains(changelog.UpdateBefore) {
		env.fail(fmt.Errorf("eddy: %s after %q: the input is an upsert stream %v, whose updates do not retract the old row; turn it into a retract stream with ChangelogNormalize (keyed by its unique key) first", op, s.node.Name, m))
	}
}
