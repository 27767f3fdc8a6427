package plan

import (
	"strings"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/types"
)

// Rec is the record of every stream of a SQL job: a change of a row.
type Rec = changelog.Change[types.Row]

// Props are the properties of a relation that the planner derives.
type Props struct {
	// Mode is the kinds of change the relation's stream carries.
	Mode changelog.Mode
	// UpsertKey holds the columns that key an upsert stream.
	UpsertKey []int
	// Rowtime is the column that is the event-time attribute (the records'
	// timestamps), -1 if none; Proctime the processing-time attribute.
	Rowtime, Proctime int
}

// Rel is a relational operator of a plan: the relation it computes has a
// schema and properties, and it builds as operators on an environment.
type Rel interface {
	Schema() *types.RowType
	Props() Props
	Inputs() []Rel
	// Describe is the operator's line in EXPLAIN.
	Describe() string
	build(b *builder) (*eddy.Stream[Rec], error)
}

// builder builds the operators of a plan on an environment. Relations
// with one key (see reuse) are built once: a table scanned by two queries
// of one statement set, a view read twice, two equal branches of a query.
type builder struct {
	env   *eddy.Environment
	cat   *Catalog
	reuse *reuse
	// built holds the stream of every relation built, by key.
	built map[int]*eddy.Stream[Rec]
	// parents counts the relations that read each relation in the plans
	// being built, by key (see countReads).
	parents map[int]int
	// keeps holds, by key, the relations whose only reader keeps their
	// rows in state (keptStream): those that can write each row into
	// memory of its own do, and say so in owned.
	keeps map[int]bool
	// owned holds the streams whose rows are each in memory of their own,
	// never written again.
	owned map[*eddy.Stream[Rec]]bool
	// intKeyed holds the streams whose subtasks hold the rows of their int64
	// key (the streams out of joins keyed by one integer column), with
	// the columns that hold the key (intKeyedBy).
	intKeyed map[*eddy.Stream[Rec]]intKeyCols
}

func newBuilder(env *eddy.Environment, cat *Catalog) *builder {
	return &builder{env: env, cat: cat, reuse: newReuse(cat), built: map[int]*eddy.Stream[Rec]{}, parents: map[int]int{},
		keeps: map[int]bool{}, owned: map[*eddy.Stream[Rec]]bool{}, intKeyed: map[*eddy.Stream[Rec]]intKeyCols{}}
}

// keptStream builds r for a reader that keeps r's rows in state, and
// reports whether each of the stream's rows is in memory of its own
// already; if not, the reader copies them (cloneRows), so that a kept row
// holds on to no memory of others. A relation read by that reader alone
// is asked to write its rows so (keepsRows).
func (b *builder) keptStream(r Rel) (*eddy.Stream[Rec], bool, error) {
	k := b.reuse.key(r)
	if b.parents[k] == 1 {
		b.keeps[k] = true
	}
	s, err := b.stream(r)
	if err != nil {
		return nil, false, err
	}
	return s, b.owned[s], nil
}

// keepsRows reports whether r's only reader keeps r's rows in state, so
// that r had better write each row into memory of its own.
func (b *builder) keepsRows(r Rel) bool { return b.keeps[b.reuse.key(r)] }

// countReads counts the readers of each relation under the roots, by key
// (reuse.readers): a relation read by more than one relation is not
// folded into one of them (a Calc into its source, a projection into a
// join). It takes every root of the job at once.
func (b *builder) countReads(roots []Rel) {
	for k, n := range b.reuse.readers(roots) {
		b.parents[k] += n
	}
}

// readers returns the number of relations that read r in the plans being
// built.
func (b *builder) readers(r Rel) int { return b.parents[b.reuse.key(r)] }

// lookup returns the stream built for r's key, if any.
func (b *builder) lookup(r Rel) (*eddy.Stream[Rec], bool) {
	s, ok := b.built[b.reuse.key(r)]
	return s, ok
}

// stream builds r, once for every relation of its key.
func (b *builder) stream(r Rel) (*eddy.Stream[Rec], error) {
	k := b.reuse.key(r)
	if s, ok := b.built[k]; ok {
		return s, nil
	}
	s, err := r.build(b)
	if err != nil {
		return nil, err
	}
	b.built[k] = s
	return s, nil
}

// modeString prints a mode as Flink's EXPLAIN CHANGELOG_MODE does.
func modeString(m changelog.Mode) string {
	return strings.NewReplacer("[", "[", "]", "]").Replace(m.String())
}

// fieldList renders the names of a schema's fields.
func fieldList(rt *types.RowType) string {
	names := rt.Names()
	for i, n := range names {
		names[i] = types.QuoteIdentifier(n)
	}
	return strings.Join(names, ", ")
}
