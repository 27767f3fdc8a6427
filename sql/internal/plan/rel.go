package plan

import (
	"fmt"
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

// builder builds the operators of a plan on an environment. A relation
// used twice (a table scanned by two queries of one statement set, a view
// read twice) is built once.
type builder struct {
	env   *eddy.Environment
	cat   *Catalog
	built map[Rel]*eddy.Stream[Rec]
	scans map[string]*eddy.Stream[Rec]
	// reads counts the scans of each table in the plans being built (see
	// countReads); a table read once may run a Calc in its source.
	reads map[string]int
	// parents counts the relations that read each relation in the plans
	// being built (see countReads).
	parents map[Rel]int
}

func newBuilder(env *eddy.Environment, cat *Catalog) *builder {
	return &builder{env: env, cat: cat, built: map[Rel]*eddy.Stream[Rec]{}, scans: map[string]*eddy.Stream[Rec]{}, reads: map[string]int{}, parents: map[Rel]int{}}
}

// countReads counts the scans of each table under the roots, and the
// readers of each relation.
func (b *builder) countReads(roots []Rel) {
	var walk func(r Rel)
	walk = func(r Rel) {
		if s, ok := r.(*ScanRel); ok {
			b.reads[s.Table.Name]++
		}
		for _, in := range r.Inputs() {
			b.parents[in]++
			walk(in)
		}
	}
	for _, r := range roots {
		walk(r)
	}
}

// stream builds r, once.
func (b *builder) stream(r Rel) (*eddy.Stream[Rec], error) {
	if s, ok := b.built[r]; ok {
		return s, nil
	}
	s, err := r.build(b)
	if err != nil {
		return nil, err
	}
	b.built[r] = s
	return s, nil
}

// Explain renders the plan rooted at r as an indented tree, one operator a
// line with its changelog mode and, when par holds the operator, the
// number of parallel subtasks it runs with (see Script.parallelisms).
func Explain(r Rel, par map[Rel]int) string {
	var sb strings.Builder
	var walk func(r Rel, depth int)
	walk = func(r Rel, depth int) {
		p := r.Props()
		fmt.Fprintf(&sb, "%s%s, changelogMode=%s", strings.Repeat("   ", depth)+"+- ", r.Describe(), modeString(p.Mode))
		if n, ok := par[r]; ok {
			fmt.Fprintf(&sb, ", parallelism=%d", n)
		}
		sb.WriteByte('\n')
		for _, in := range r.Inputs() {
			walk(in, depth+1)
		}
	}
	walk(r, 0)
	return sb.String()
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
