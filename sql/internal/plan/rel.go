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
}

func newBuilder(env *eddy.Environment, cat *Catalog) *builder {
	return &builder{env: env, cat: cat, reuse: newReuse(cat), built: map[int]*eddy.Stream[Rec]{}, parents: map[int]int{}}
}

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
