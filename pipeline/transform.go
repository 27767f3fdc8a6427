package pipeline

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/projection"
	"github.com/eddystream/eddy/sql/types"
)

// Metadata columns a transform may read, as Flink CDC names them.
var metadataColumns = []string{"__namespace_name__", "__schema_name__", "__table_name__", "__data_event_type__"}

// transformer applies the transform and route rules to the events of one
// subtask: it projects and filters rows, and renames tables to their sink
// tables.
type transformer struct {
	def *Definition
	// compiled caches, by source schema, the rule's compiled projection and
	// the schema it gives, which stays the same object for the schema
	// operator.
	compiled map[*Schema]*compiled
	// pendingUpdate is set between the -U and the +U of an update: whether
	// the filter kept the -U.
	pendingBefore *types.Row
	beforeKept    bool
}

type compiled struct {
	rule *Transform
	proj *projection.Projection
	out  *Schema
	meta bool // the rule reads metadata columns
	w    *types.RowWriter
}

func newTransformer(def *Definition) *transformer {
	return &transformer{def: def, compiled: map[*Schema]*compiled{}}
}

// route returns the sink table of a source table.
func (t *transformer) route(id TableID) TableID {
	for _, r := range t.def.Routes {
		if r.SourceTable.Matches(id) {
			name := r.SinkTable
			if r.ReplaceSymbol != "" {
				name = strings.ReplaceAll(name, r.ReplaceSymbol, id.Table)
			}
			return ParseTableID(name)
		}
	}
	return id
}

// rule returns the first transform rule that matches a table, nil if none.
func (t *transformer) rule(id TableID) *Transform {
	for i := range t.def.Transforms {
		if t.def.Transforms[i].SourceTable.Matches(id) {
			return &t.def.Transforms[i]
		}
	}
	return nil
}

// compile returns the compiled rule of a source schema, nil if no rule
// matches the table.
func (t *transformer) compile(id TableID, s *Schema) (*compiled, error) {
	if c, ok := t.compiled[s]; ok {
		return c, nil
	}
	r := t.rule(id)
	if r == nil || (r.Projection == "" && r.Filter == "" && r.PrimaryKeys == nil) && !r.SoftDelete {
		t.compiled[s] = nil
		return nil, nil
	}
	in := s.Columns
	text := r.Projection + " " + r.Filter
	meta := false
	for _, m := range metadataColumns {
		if strings.Contains(text, m) {
			meta = true
		}
	}
	if meta {
		fields := append([]types.Field(nil), in.Fields()...)
		for _, m := range metadataColumns {
			fields = append(fields, types.F(m, types.String()))
		}
		var err error
		if in, err = types.NewRowType(fields...); err != nil {
			return nil, fmt.Errorf("pipeline: table %s has a column named as a metadata column: %w", id, err)
		}
	}
	proj := strings.ReplaceAll(r.Projection, `\*`, "*")
	p, err := projection.Compile(in, proj, r.Filter, projection.HiddenColumns(metadataColumns...))
	if err != nil {
		return nil, fmt.Errorf("pipeline: the transform of line %d for table %s: %w", r.Line, id, err)
	}
	key := r.PrimaryKeys
	if key == nil {
		key = s.PrimaryKey
	}
	for _, k := range key {
		if _, ok := p.Type().Index(k); !ok {
			if r.PrimaryKeys != nil {
				return nil, fmt.Errorf("pipeline: the transform of line %d for table %s: primary key column %s is not in the projection (it has %s)",
					r.Line, id, k, strings.Join(p.Type().Names(), ", "))
			}
			// The projection leaves out the source's key: rows have none.
			key = nil
			break
		}
	}
	c := &compiled{rule: r, proj: p, meta: meta, out: &Schema{Columns: p.Type(), PrimaryKey: key, Version: s.Version}}
	if meta {
		c.w = types.NewRowWriter(in, types.NewArena(0))
	}
	t.compiled[s] = c
	return c, nil
}

// apply transforms and routes one event; emit receives what follows.
func (t *transformer) apply(e Event, emit func(routed)) error {
	src := e.Table
	if e.Kind == DataChange && e.Schema == nil {
		return fmt.Errorf("pipeline: the source emitted a row change of %s without its schema; a source gives every row change the schema its row is in", src)
	}
	c, err := t.compile(src, e.Schema)
	if err != nil {
		return err
	}
	out := e
	out.Table = t.route(src)
	if c == nil {
		emit(routed{Source: src, Event: out})
		return nil
	}
	out.Schema = c.out
	if e.Kind != DataChange {
		if e.Kind == AlterTable {
			out.Changes = nil // the schema operator derives the changes of the projection
			for _, ch := range e.Changes {
				if ch.Kind == RenameColumn && c.rule.Projection == "" {
					out.Changes = append(out.Changes, ch)
				}
			}
		}
		emit(routed{Source: src, Event: out})
		return nil
	}
	in := e.Change.Row
	if c.meta {
		for i := 0; i < e.Schema.Columns.Len(); i++ {
			c.w.CopyField(i, in, i)
		}
		n := e.Schema.Columns.Len()
		c.w.SetString(n, src.Namespace)
		c.w.SetString(n+1, src.Schema)
		c.w.SetString(n+2, src.Table)
		c.w.SetString(n+3, e.Change.Kind.String())
		in = c.w.Finish()
	}
	row, keep, err := c.proj.Apply(in)
	if err != nil {
		return fmt.Errorf("pipeline: a row of %s: %w", src, err)
	}
	kind := e.Change.Kind
	// A filter that keeps one half of an update turns it into an insert or
	// a delete, so that the sink never holds a row the filter excludes.
	switch kind {
	case changelog.UpdateBefore:
		t.beforeKept = keep
		if keep {
			r := row
			t.pendingBefore = &r
		}
		return nil
	case changelog.UpdateAfter:
		before, beforeKept := t.pendingBefore, t.beforeKept
		t.pendingBefore, t.beforeKept = nil, false
		switch {
		case beforeKept && keep:
			emitRow(emit, src, out, changelog.UpdateBefore, *before)
		case beforeKept:
			kind, row, keep = changelog.Delete, *before, true
		case keep:
			kind = changelog.Insert
		}
	}
	if !keep {
		return nil
	}
	if kind == changelog.Delete && c.rule.SoftDelete {
		kind = changelog.Insert
	}
	emitRow(emit, src, out, kind, row)
	return nil
}

func emitRow(emit func(routed), src TableID, e Event, kind changelog.Kind, row types.Row) {
	e.Change = changelog.Change[types.Row]{Kind: kind, Row: row}
	emit(routed{Source: src, Event: e})
}
