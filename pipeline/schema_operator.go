package pipeline

import (
	"fmt"
	"maps"
	"slices"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/types"
	"github.com/eddystream/eddy/state"
)

// sinkTable is the schema operator's state of one sink table: the schema
// the sink table has (or will have once it applies what the operator sent
// it), and the last schema seen of each source table routed to it.
//
// A sinkTable once stored in the state is never changed in place, its
// Sources map included: the heap backend keeps the stored value itself,
// and a checkpoint encodes the values it froze at the barrier on another
// goroutine while the operator goes on. A change replaces the map
// (withSource, withoutSource) and stores the new value.
type sinkTable struct {
	Sink    *Schema            `json:"sink"`
	Sources map[string]*Schema `json:"sources"`
}

// withSource returns the sources with src's schema set to s, in a new map.
func (st *sinkTable) withSource(src string, s *Schema) map[string]*Schema {
	m := maps.Clone(st.Sources)
	if m == nil {
		m = map[string]*Schema{}
	}
	m[src] = s
	return m
}

// withoutSource returns the sources without src, in a new map.
func (st *sinkTable) withoutSource(src string) map[string]*Schema {
	m := maps.Clone(st.Sources)
	delete(m, src)
	return m
}

// schemaOperator applies 'schema.change.behavior' to the events of the
// sink tables of one subtask. Its input is keyed by sink table, so that a
// table's events stay in order.
type schemaOperator struct {
	behavior Behavior
	// applies are the types of schema change the sink applies (nil: all);
	// the sink table keeps its schema for the others.
	applies SchemaChangeTypes
	tables  state.Value[sinkTable]
	arena   *types.Arena
	// cache holds the decoded state of the sink tables seen, with the
	// source schemas (as the source shares them) known to be current.
	cache map[string]*cachedTable
}

// cachedTable is a sink table's state as last stored (never changed in
// place, see sinkTable), and the source schemas known to be current.
type cachedTable struct {
	st      sinkTable
	current map[*Schema]bool
}

// Open declares the operator's state.
func (o *schemaOperator) Open(ctx *eddy.KeyedContext[string, Event]) error {
	o.tables = state.NewValue(ctx.Store(), state.ValueDescriptor[sinkTable]{Name: "pipeline-schemas", Codec: state.JSONCodec[sinkTable]()})
	o.arena = types.NewArena(0)
	o.cache = map[string]*cachedTable{}
	return nil
}

// routed is an event on its way to a sink table: the source table it came
// from and its event renamed to the sink table.
type routed struct {
	Source TableID
	Event  Event
}

// ProcessElement handles an event routed to the sink table of the
// current key.
func (o *schemaOperator) ProcessElement(ctx *eddy.KeyedContext[string, Event], r routed) error {
	return o.process(ctx.Key(), r, ctx.Emit)
}

// process handles an event of sink table key, emitting what the sink gets
// with emit.
func (o *schemaOperator) process(key string, r routed, emit func(Event)) error {
	e := r.Event
	c := o.cache[key]
	if c == nil {
		st, ok := o.tables.Value()
		if !ok {
			st = sinkTable{Sources: map[string]*Schema{}}
		}
		c = &cachedTable{st: st, current: map[*Schema]bool{}}
		o.cache[key] = c
	}
	st := &c.st
	if e.Schema != nil && !c.current[e.Schema] {
		src := r.Source.String()
		last := st.Sources[src]
		if last == nil || last.Version < e.Schema.Version || (last.Version == e.Schema.Version && !last.Same(e.Schema)) {
			if err := o.evolve(emit, st, r, last); err != nil {
				return err
			}
			st.Sources = st.withSource(src, e.Schema)
			o.tables.Update(*st)
		}
		c.current[e.Schema] = true
	}
	switch e.Kind {
	case DataChange:
		row, err := convertRow(e.Schema, st.Sink, e.Change.Row, o.arena)
		if err != nil {
			return fmt.Errorf("pipeline: a row of %s for %s: %w", r.Source, e.Table, err)
		}
		emit(Event{Kind: DataChange, Table: e.Table, Schema: st.Sink, Change: changelog.Change[types.Row]{Kind: e.Change.Kind, Row: row}})
	case TruncateTable, DropTable:
		if e.Kind == DropTable && o.behavior != Exception {
			// A table created again under the name starts its schema
			// versions anew: it is then compared with the sink table as a
			// table that joins it, not with the schema it had.
			if _, ok := st.Sources[r.Source.String()]; ok {
				st.Sources = st.withoutSource(r.Source.String())
				clear(c.current)
				o.tables.Update(*st)
			}
		}
		switch o.behavior {
		case Exception:
			return fmt.Errorf("pipeline: %s of %s (%s): 'schema.change.behavior' is exception", e.Kind, r.Source, e.DDL)
		case Evolve, TryEvolve:
			name := TruncateTableType
			if e.Kind == DropTable {
				name = DropTableType
			}
			if !o.applies.Applies(name) {
				break
			}
			emit(Event{Kind: e.Kind, Table: e.Table, Schema: st.Sink, DDL: e.DDL, Tolerant: o.behavior == TryEvolve})
			if e.Kind == DropTable {
				delete(o.cache, key)
				o.tables.Clear()
			}
		}
	}
	return nil
}

// evolve brings the sink table's schema up to date with a new schema of
// one of its source tables, as the behaviour says, and emits what the sink
// must apply.
func (o *schemaOperator) evolve(emit func(Event), st *sinkTable, r routed, last *Schema) error {
	e := r.Event
	if st.Sink == nil {
		sink := &Schema{Columns: e.Schema.Columns, PrimaryKey: e.Schema.PrimaryKey, Version: 1}
		st.Sink = sink
		emit(Event{Kind: CreateTable, Table: e.Table, Schema: sink, DDL: e.DDL})
		return nil
	}
	var changes []SchemaChange
	if last == nil {
		// Another source table joins the sink table: what it has that the
		// sink table lacks is added.
		for _, c := range Diff(st.Sink, e.Schema, nil) {
			if c.Kind != DropColumn {
				changes = append(changes, c)
			}
		}
	} else {
		changes = Diff(last, e.Schema, renamesOf(e))
	}
	if len(changes) == 0 {
		return nil
	}
	if o.behavior == Exception {
		return fmt.Errorf("pipeline: the schema of %s changed (%s; %s): 'schema.change.behavior' is exception; set it to lenient or evolve to follow the change", r.Source, describe(changes), e.DDL)
	}
	if o.behavior == Ignore {
		return nil
	}
	var apply []SchemaChange
	fields := append([]types.Field(nil), st.Sink.Columns.Fields()...)
	key := st.Sink.PrimaryKey
	index := func(name string) int {
		for i, f := range fields {
			if f.Name == name {
				return i
			}
		}
		return -1
	}
	for _, c := range changes {
		lenient := o.behavior == Lenient
		// Lenient turns a dropped or renamed column into changes of other
		// types, which are filtered by theirs (keepNullable, the added
		// column); the others are filtered by their own type.
		converted := lenient && (c.Kind == DropColumn || c.Kind == RenameColumn)
		if !converted && !o.applies.Applies(c.Kind.typeName()) {
			continue
		}
		switch c.Kind {
		case AddColumn:
			if i := index(c.Column); i >= 0 {
				if !Widens(c.Type, fields[i].Type) {
					return fmt.Errorf("pipeline: %s adds column %s %s, which sink table %s has as %s", r.Source, c.Column, c.Type, e.Table, fields[i].Type)
				}
				continue
			}
			fields = append(fields, types.F(c.Column, c.Type.Nullable()))
			c.Type, c.Position = c.Type.Nullable(), len(fields)-1
		case DropColumn:
			i := index(c.Column)
			if i < 0 {
				continue
			}
			if lenient {
				// The column stays, NULL from then on: it must take NULL.
				if nullable := o.keepNullable(fields, i, key); nullable != nil {
					apply = append(apply, *nullable)
				}
				continue
			}
			if slices.Contains(key, c.Column) {
				return fmt.Errorf("pipeline: %s drops column %s, part of the primary key of sink table %s", r.Source, c.Column, e.Table)
			}
			fields = append(fields[:i], fields[i+1:]...)
		case RenameColumn:
			i := index(c.Column)
			if i < 0 {
				continue
			}
			if lenient {
				if nullable := o.keepNullable(fields, i, key); nullable != nil {
					apply = append(apply, *nullable)
				}
				if index(c.NewName) < 0 && o.applies.Applies(AddColumnType) {
					t := fields[i].Type.Nullable()
					fields = append(fields, types.F(c.NewName, t))
					apply = append(apply, SchemaChange{Kind: AddColumn, Column: c.NewName, Type: t, Position: len(fields) - 1})
				}
				continue
			}
			fields[i].Name = c.NewName
			key = renameKey(key, c.Column, c.NewName)
		case AlterColumnType:
			i := index(c.Column)
			if i < 0 {
				continue
			}
			if lenient && !Widens(fields[i].Type, c.Type) {
				return fmt.Errorf("pipeline: %s changes column %s from %s to %s, which loses values; 'schema.change.behavior' lenient applies only widening changes: use evolve to apply it",
					r.Source, c.Column, fields[i].Type, c.Type)
			}
			fields[i].Type = c.Type
		}
		apply = append(apply, c)
	}
	if len(apply) == 0 {
		return nil
	}
	rt, err := types.NewRowType(fields...)
	if err != nil {
		return fmt.Errorf("pipeline: sink table %s: %w", e.Table, err)
	}
	st.Sink = &Schema{Columns: rt, PrimaryKey: key, Version: st.Sink.Version + 1}
	emit(Event{Kind: AlterTable, Table: e.Table, Schema: st.Sink, Changes: apply, DDL: e.DDL, Tolerant: o.behavior == TryEvolve})
	return nil
}

// keepNullable makes the column fields[i], which lenient keeps in the sink
// table though the source has it no more, nullable, and returns the change
// that says so; nil if it takes NULL already or is part of the key (whose
// rows then fail, naming the column), or if the sink does not apply
// alter.column.type.
func (o *schemaOperator) keepNullable(fields []types.Field, i int, key []string) *SchemaChange {
	if fields[i].Type.IsNullable() || slices.Contains(key, fields[i].Name) || !o.applies.Applies(AlterColumnTypeType) {
		return nil
	}
	fields[i].Type = fields[i].Type.Nullable()
	return &SchemaChange{Kind: AlterColumnType, Column: fields[i].Name, Type: fields[i].Type}
}

func renameKey(key []string, from, to string) []string {
	out := append([]string(nil), key...)
	for i, k := range out {
		if k == from {
			out[i] = to
		}
	}
	return out
}

// renamesOf returns the renames an AlterTable event states.
func renamesOf(e Event) map[string]string {
	var m map[string]string
	for _, c := range e.Changes {
		if c.Kind == RenameColumn {
			if m == nil {
				m = map[string]string{}
			}
			m[c.Column] = c.NewName
		}
	}
	return m
}

func describe(cs []SchemaChange) string {
	s := ""
	for i, c := range cs {
		if i > 0 {
			s += ", "
		}
		s += c.String()
	}
	return s
}

// convertRow returns row, of schema from, in schema to: columns matched by
// name and cast, NULL for those from lacks.
func convertRow(from, to *Schema, row types.Row, arena *types.Arena) (types.Row, error) {
	if from == to || from.Same(to) {
		return row, nil
	}
	values := make([]types.Value, to.Columns.Len())
	for i, f := range to.Columns.Fields() {
		j, ok := from.Columns.Index(f.Name)
		if !ok {
			if !f.Type.IsNullable() {
				return types.Row{}, fmt.Errorf("column %s is NOT NULL in the sink and the source has no value for it", f.Name)
			}
			continue
		}
		v := types.FieldValue(from.Columns, row, j)
		ft := from.Columns.Field(j).Type
		if v != nil && !ft.EqualIgnoringNullability(f.Type) {
			c, err := types.CastValue(v, ft, f.Type, nil)
			if err != nil {
				return types.Row{}, fmt.Errorf("column %s: %w", f.Name, err)
			}
			v = c
		}
		values[i] = v
	}
	return types.BuildRow(to.Columns, arena, values...)
}
