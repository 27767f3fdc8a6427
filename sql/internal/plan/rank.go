package plan

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/types"
)

// RankRel keeps the rows numbered Start to End of every partition of its
// input in an order, as Flink's Rank does for the Top-N pattern
// (ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) filtered on the row
// number) and its SortLimit for ORDER BY ... LIMIT (a global Top-N). It
// runs as eddy.TopN, or eddy.TopNRanked when the row number is output or
// the range does not start at 1.
type RankRel struct {
	Input Rel
	// PartitionBy are the partition columns; none for a global Top-N.
	PartitionBy []int
	// OrderBy orders the rows of a partition; none keeps the first rows
	// to arrive (LIMIT without ORDER BY).
	OrderBy []types.SortKey
	// Start and End are the row numbers kept, from 1.
	Start, End int64
	// OutputRank appends the row number (BIGINT NOT NULL) to the input's
	// columns, named RankName.
	OutputRank bool
	RankName   string
	// SortLimit describes the relation as ORDER BY ... LIMIT.
	SortLimit bool

	rt *types.RowType
}

func newRankRel(in Rel, partitionBy []int, orderBy []types.SortKey, start, end int64, outputRank bool, rankName string) *RankRel {
	r := &RankRel{Input: in, PartitionBy: partitionBy, OrderBy: orderBy, Start: start, End: end, OutputRank: outputRank, RankName: rankName}
	fs := in.Schema().Fields()
	if outputRank {
		fs = append(fs, types.F(rankName, types.BigInt().NotNull()))
	}
	r.rt = types.MustRowType(dedupNames(fs)...)
	return r
}

func (r *RankRel) Schema() *types.RowType { return r.rt }

// ranked tells whether the rank runs as eddy.TopNRanked.
func (r *RankRel) ranked() bool { return r.OutputRank || r.Start > 1 }

func (r *RankRel) Props() Props {
	in := r.Input.Props()
	p := Props{Mode: changelog.ModeOf(changelog.Insert, changelog.Delete), Rowtime: -1, Proctime: -1}
	switch {
	case r.ranked():
		p.Mode = changelog.Retract
		if r.OutputRank {
			p.UpsertKey = append(append([]int{}, r.PartitionBy...), r.rt.Len()-1)
		}
	case len(r.OrderBy) == 0 && in.Mode.IsInsertOnly():
		// The first rows to arrive are never displaced.
		p.Mode = changelog.InsertOnly
		p.UpsertKey = in.UpsertKey
	default:
		p.UpsertKey = in.UpsertKey
	}
	return p
}

func (r *RankRel) Inputs() []Rel { return []Rel{r.Input} }

// strategy names the state the rank keeps, as Flink's plans do.
func (r *RankRel) strategy() string {
	if r.Input.Props().Mode.IsInsertOnly() {
		return "AppendFastStrategy"
	}
	return "RetractStrategy"
}

func (r *RankRel) Describe() string {
	in := r.Input.Schema()
	if r.SortLimit {
		if len(r.OrderBy) == 0 {
			return fmt.Sprintf("Limit(offset=[%d], fetch=[%d])", r.Start-1, r.End-r.Start+1)
		}
		return fmt.Sprintf("SortLimit(orderBy=[%s], offset=[%d], fetch=[%d], strategy=[%s])", sortKeysString(in, r.OrderBy), r.Start-1, r.End-r.Start+1, r.strategy())
	}
	return fmt.Sprintf("Rank(strategy=[%s], rankType=[ROW_NUMBER], rankRange=[rankStart=%d, rankEnd=%d], partitionBy=[%s], orderBy=[%s], select=[%s])",
		r.strategy(), r.Start, r.End, columnList(in, r.PartitionBy), sortKeysString(in, r.OrderBy), fieldList(r.rt))
}

// columnList renders the names of columns of rt.
func columnList(rt *types.RowType, cols []int) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = types.QuoteIdentifier(rt.Field(c).Name)
	}
	return strings.Join(names, ", ")
}

// sortKeysString renders sort keys as Flink's plans do: "price DESC".
func sortKeysString(rt *types.RowType, keys []types.SortKey) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		s := types.QuoteIdentifier(rt.Field(k.Field).Name)
		if k.Descending {
			s += " DESC"
		} else {
			s += " ASC"
		}
		switch k.Nulls {
		case types.NullsFirst:
			s += " NULLS FIRST"
		case types.NullsLast:
			s += " NULLS LAST"
		}
		parts[i] = s
	}
	return strings.Join(parts, ", ")
}

// cloneRows copies every row out of the arena it was written in, for
// operators that keep rows in state: a kept row must not pin a chunk
// shared with other rows. The rows before it may then be in reused
// memory (eddy.MapRowsCopying).
func cloneRows(s *eddy.Stream[Rec]) *eddy.Stream[Rec] {
	return eddy.MapRowsCopying(s, func() func(types.Row) types.Row {
		return types.Row.Clone
	})
}

func (r *RankRel) build(b *builder) (*eddy.Stream[Rec], error) {
	if r.End < r.Start || r.End > 1<<31-1 {
		return nil, fmt.Errorf("%s: keeping rows %d to %d is not supported", r.Describe(), r.Start, r.End)
	}
	in := r.Input.Schema()
	mode := r.Input.Props().Mode
	var opts []eddy.TableOption
	var built, s *eddy.Stream[Rec]
	var err error
	if mode.IsInsertOnly() && regularJoinBelow(r.Input) {
		// A top-N over a join keeps few of its rows: it copies those
		// it keeps, and the join, if they are chained (below), writes
		// its results into memory it uses again.
		if built, err = b.stream(r.Input); err != nil {
			return nil, err
		}
		s = eddy.AsChangelog(built, mode)
		opts = append(opts, eddy.CopyingKeptRows(types.Row.Clone))
	} else {
		var owned bool
		if built, owned, err = b.keptStream(r.Input); err != nil {
			return nil, err
		}
		s = eddy.AsChangelog(built, mode)
		if !owned {
			s = cloneRows(s)
		}
	}
	less := func(a, b types.Row) bool { return false }
	if len(r.OrderBy) > 0 {
		cmp := types.NewRowComparator(in, r.OrderBy...)
		less = func(a, b types.Row) bool { return cmp.Compare(a, b) < 0 }
	}
	if g, ok := b.intKeyedBy(built, s, in, r.PartitionBy); ok {
		return rankBy[int64](r, less, opts)(g), nil
	}
	return keyedBy(b, r.Input, s, r.PartitionBy, partitionedBy[*eddy.Stream[Rec]]{
		int: rankBy[int64](r, less, opts), nullable: rankBy[nullableInt](r, less, opts),
		pair: rankBy[intPair](r, less, opts), encoded: anyEncoding(rankBy[string](r, less, opts)),
	}), nil
}

// rankBy returns the Top-N of r over its input partitioned by keys of
// type K, in the order less.
func rankBy[K comparable](r *RankRel, less func(a, b types.Row) bool, opts []eddy.TableOption) func(*eddy.KeyedStream[K, Rec]) *eddy.Stream[Rec] {
	return func(g *eddy.KeyedStream[K, Rec]) *eddy.Stream[Rec] {
		if !r.ranked() {
			out := eddy.TopN(g, int(r.End), less, opts...)
			if p := r.Props(); p.Mode.IsInsertOnly() {
				out = eddy.AsChangelog(out, p.Mode)
			}
			return out
		}
		return r.numbered(eddy.TopNRanked(g, int(r.End), less, opts...))
	}
}

// numbered returns the rows of ranked from row number Start, with their
// numbers if OutputRank.
func (r *RankRel) numbered(ranked *eddy.Stream[changelog.Change[eddy.Ranked[types.Row]]]) *eddy.Stream[Rec] {
	if r.Start > 1 {
		start := r.Start
		ranked = eddy.FilterRowsEach(ranked, func() func(eddy.Ranked[types.Row]) bool {
			return func(x eddy.Ranked[types.Row]) bool { return x.Rank >= start }
		})
	}
	if !r.OutputRank {
		return eddy.MapRowsEach(ranked, func() func(eddy.Ranked[types.Row]) types.Row {
			return func(x eddy.Ranked[types.Row]) types.Row { return x.Row }
		})
	}
	rt := r.rt
	// The rows with their rank numbers go into memory used again for
	// each batch when the readers keep none of them.
	return eddy.MapRowsReusing(ranked, func(reuse bool) (func(eddy.Ranked[types.Row]) types.Row, func()) {
		a := newOutputArena(reuse)
		return func(x eddy.Ranked[types.Row]) types.Row { return a.AppendInt64(rt, x.Row, x.Rank) }, a.Rewind
	})
}

// DedupRel keeps the first or the last row of every key of an insert-only
// input in the order of a time attribute, as Flink's Deduplicate does for
// ROW_NUMBER() OVER (PARTITION BY key ORDER BY time ASC|DESC) = 1. It
// runs as eddy.Deduplicate.
type DedupRel struct {
	Input Rel
	Key   []int
	// KeepLast keeps the last row (ORDER BY time DESC).
	KeepLast bool
	// EventTime orders by the rowtime attribute, else by processing time.
	EventTime bool
}

func (d *DedupRel) Schema() *types.RowType { return d.Input.Schema() }

func (d *DedupRel) Props() Props {
	in := d.Input.Props()
	key := append([]int{}, d.Key...)
	if d.KeepLast {
		return Props{Mode: changelog.ModeOf(changelog.Insert, changelog.UpdateBefore, changelog.UpdateAfter), UpsertKey: key, Rowtime: -1, Proctime: -1}
	}
	// The first row of a key is emitted once and never changes: the rows
	// keep their time attributes.
	return Props{Mode: changelog.InsertOnly, UpsertKey: key, Rowtime: in.Rowtime, Proctime: in.Proctime}
}

func (d *DedupRel) Inputs() []Rel { return []Rel{d.Input} }

func (d *DedupRel) Describe() string {
	keep, order := "FirstRow", "PROCTIME"
	if d.KeepLast {
		keep = "LastRow"
	}
	if d.EventTime {
		order = "ROWTIME"
	}
	return fmt.Sprintf("Deduplicate(keep=[%s], key=[%s], order=[%s])", keep, columnList(d.Input.Schema(), d.Key), order)
}

func (d *DedupRel) build(b *builder) (*eddy.Stream[Rec], error) {
	var s *eddy.Stream[Rec]
	var err error
	owned := true
	if d.KeepLast || d.EventTime {
		s, owned, err = b.keptStream(d.Input)
	} else {
		s, err = b.stream(d.Input)
	}
	if err != nil {
		return nil, err
	}
	s = eddy.AsChangelog(s, d.Input.Props().Mode)
	if !owned {
		s = cloneRows(s)
	}
	keep, domain := eddy.KeepFirst, eddy.ProcessingTime
	if d.KeepLast {
		keep = eddy.KeepLast
	}
	if d.EventTime {
		domain = eddy.EventTime
	}
	return keyedBy(b, d.Input, s, d.Key, partitionedBy[*eddy.Stream[Rec]]{
		int: dedupBy[int64](keep, domain), nullable: dedupBy[nullableInt](keep, domain),
		pair: dedupBy[intPair](keep, domain), encoded: anyEncoding(dedupBy[string](keep, domain)),
	}), nil
}

// dedupBy returns the deduplication, keeping the row keep in the time
// domain, of rows partitioned by keys of type K.
func dedupBy[K comparable](keep eddy.Keep, domain eddy.TimeDomain) func(*eddy.KeyedStream[K, Rec]) *eddy.Stream[Rec] {
	return func(g *eddy.KeyedStream[K, Rec]) *eddy.Stream[Rec] { return eddy.Deduplicate(g, keep, domain) }
}
