package plan

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// SinkRel writes its input into a table: INSERT INTO.
type SinkRel struct {
	Input Rel
	Table *Table
	ct    *connector.Table
	sink  connector.Sink[Rec]
	// mode is what the sink applies; upsert is set when it applies changes
	// by its primary key.
	mode   changelog.Mode
	upsert bool
	// notNull checks the sink's NOT NULL columns that the query may fill
	// with NULL; nil if there are none.
	notNull *notNullEnforcer
	// upsertOpts are the options of an upsert sink's WriteUpserts;
	// materialize says they add an upsert materializer.
	upsertOpts  []eddy.TableOption
	materialize bool
}

func (s *SinkRel) Schema() *types.RowType { return s.ct.Schema }
func (s *SinkRel) Props() Props           { return s.Input.Props() }
func (s *SinkRel) Inputs() []Rel          { return []Rel{s.Input} }

func (s *SinkRel) Describe() string {
	if s.materialize {
		return fmt.Sprintf("Sink(table=[%s], fields=[%s], upsertMaterialize=[true])", s.Table.Name, fieldList(s.ct.Schema))
	}
	return fmt.Sprintf("Sink(table=[%s], fields=[%s])", s.Table.Name, fieldList(s.ct.Schema))
}

func (s *SinkRel) build(b *builder) (*eddy.Stream[Rec], error) {
	in, err := b.stream(s.Input)
	if err != nil {
		return nil, err
	}
	// The plan knows the kinds of change its output carries better than
	// the streams do (a source of VALUES, a Map of changes, say nothing).
	in = eddy.AsChangelog(in, s.Input.Props().Mode)
	if s.notNull != nil {
		in = eddy.AsChangelog(s.notNull.apply(in, s.Table.Name, s.ct.Schema), s.Input.Props().Mode)
	}
	if s.upsert {
		key := types.NewKeyEncoder(s.ct.Schema, s.ct.PrimaryKey...)
		eddy.WriteUpserts(in, s.Table.Name, key.Key, s.sink, s.upsertOpts...)
		return in, nil
	}
	eddy.WriteTo(in, s.Table.Name, s.sink)
	return in, nil
}

// upsertMaterializeKey is the setting that says whether an upsert sink
// keeps the rows of each sink key in an upsert materializer, as Flink's
// option of that name: AUTO (the default) when the query's rows are not
// keyed by the sink's primary key, NONE never, FORCE whenever the query
// retracts rows.
const upsertMaterializeKey = "table.exec.sink.upsert-materialize"

// planUpserts sets the options of the upsert sink's WriteUpserts from the
// settings of cat: whether the query's rows are keyed by the sink key,
// which skips the materializer, and the materializer's state TTL
// (table.exec.state.ttl).
func (s *SinkRel) planUpserts(cat *Catalog) error {
	in := s.Input.Props()
	keyed := sameKey(in.UpsertKey, s.ct.PrimaryKey)
	if isUpsertMode(in.Mode) {
		// An upsert stream's deletions may carry its key alone: it is
		// written under its own key, which must be the sink's, whatever
		// the setting says.
		if !keyed {
			return fmt.Errorf("table sink %s: the query produces an upsert stream (%s) from %s, keyed otherwise than the sink's primary key (%s), and its deletions may carry their key alone, so the sink cannot apply them; key the query by the sink's primary key, or declare the sink's key as the query's",
				s.Table.Name, in.Mode.Describe(), producer(s.Input, in.Mode), strings.Join(keyNames(s.ct.Schema, s.ct.PrimaryKey), ", "))
		}
		s.upsertOpts = []eddy.TableOption{eddy.KeyedBySinkKey()}
		return nil
	}
	switch v := strings.TrimSpace(cat.Settings[upsertMaterializeKey]); {
	case v == "" || strings.EqualFold(v, "AUTO"):
	case strings.EqualFold(v, "NONE"):
		keyed = true
	case strings.EqualFold(v, "FORCE"):
		keyed = false
	default:
		return fmt.Errorf("table sink %s: SET '%s' = '%s': the value is AUTO (materialize the changes when the query's rows are not keyed by the sink's primary key, the default), NONE or FORCE", s.Table.Name, upsertMaterializeKey, v)
	}
	if keyed {
		s.upsertOpts = []eddy.TableOption{eddy.KeyedBySinkKey()}
		return nil
	}
	// A retract stream is materialized, its rows kept for as long as the
	// state TTL says; an insert-only one needs no materializer.
	s.materialize = !in.Mode.IsInsertOnly()
	if v, ok := cat.Settings["table.exec.state.ttl"]; ok && s.materialize {
		d, err := settingDuration("table.exec.state.ttl", v)
		if err != nil {
			return err
		}
		if d > 0 {
			s.upsertOpts = []eddy.TableOption{eddy.StateTTL(d)}
		}
	}
	return nil
}

// keyNames returns the names of the columns key of rt.
func keyNames(rt *types.RowType, key []int) []string {
	names := make([]string, len(key))
	for i, k := range key {
		names[i] = rt.Field(k).Name
	}
	return names
}

func sameKey(a, b []int) bool {
	if len(a) == 0 || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// insert plans INSERT INTO table [(cols)] query.
func (q *queryPlanner) insert(n *parser.Insert) (*SinkRel, error) {
	t, v, err := q.cat.lookup(q.src, n.Table)
	if err != nil {
		return nil, err
	}
	if v != nil {
		return nil, q.errorf(n.Table.Pos, "%s is a view: INSERT INTO a table", v.Name)
	}
	if n.Overwrite {
		return nil, q.errorf(n.Pos, "INSERT OVERWRITE is a batch statement: a streaming job writes with INSERT INTO")
	}
	if len(n.Partition) > 0 {
		return nil, q.errorf(n.Partition[0].Pos, "static partitions (PARTITION (...)) are not supported: select the partition columns in the query")
	}
	r, err := q.query(n.Query, nil)
	if err != nil {
		return nil, err
	}
	ct := t.connectorTable()
	sink, err := connector.OpenTableSink(q.cat.Connectors, t.Connector, t.connectorOptions(), ct)
	if err != nil {
		return nil, q.errorf(n.Table.Pos, "table %s: %v", t.Name, err)
	}
	// The sink's columns: the physical ones (metadata columns written by a
	// sink are not supported yet, virtual ones are skipped).
	target := ct.Schema
	if len(ct.Metadata) > 0 {
		for _, c := range t.Columns {
			if c.Kind == parser.MetadataColumn && !c.Virtual {
				return nil, q.errorf(n.Table.Pos, "table %s: writing metadata column %s is not supported; declare it VIRTUAL", t.Name, c.Name)
			}
		}
	}
	r, err = q.conform(n, r, target)
	if err != nil {
		return nil, err
	}
	s := &SinkRel{Input: r, Table: t, ct: ct, sink: sink, mode: changelog.Retract}
	if s.notNull, err = newNotNullEnforcer(q.cat.Settings, r.Schema(), target, r.Props().Mode); err != nil {
		return nil, q.errorf(n.Pos, "%v", err)
	}
	if cs, ok := sink.(connector.ChangelogSink); ok {
		s.mode = cs.ChangelogMode()
	}
	have := r.Props().Mode
	switch {
	case s.mode.Includes(have):
	case len(ct.PrimaryKey) > 0 && s.mode.Contains(changelog.UpdateAfter) && s.mode.Contains(changelog.Delete):
		s.upsert = true
	default:
		return nil, q.errorf(n.Pos, "table sink %s (connector '%s') takes %s changes, but the query produces a %s stream from %s; %s",
			t.Name, t.Connector, s.mode.Describe(), have.Describe(), producer(r, have), sinkHint(s.mode, len(ct.PrimaryKey) > 0))
	}
	if len(ct.PrimaryKey) > 0 && s.mode.Contains(changelog.UpdateAfter) && !have.IsInsertOnly() {
		s.upsert = true
	}
	if s.upsert {
		if err := s.planUpserts(q.cat); err != nil {
			return nil, q.errorf(n.Pos, "%v", err)
		}
	}
	return s, nil
}

// producer names the operator whose output first carries changes that
// mode has and an insert-only stream has not.
func producer(r Rel, mode changelog.Mode) string {
	for _, in := range r.Inputs() {
		if !in.Props().Mode.IsInsertOnly() {
			return producer(in, in.Props().Mode)
		}
	}
	return r.Describe()
}

func sinkHint(m changelog.Mode, hasKey bool) string {
	if m.IsInsertOnly() {
		if hasKey {
			return "use a connector that applies updates"
		}
		return "declare a PRIMARY KEY on a connector that applies upserts, or write to a connector that takes retractions (print, or filesystem with 'format' = 'debezium-json', 'canal-json' or 'maxwell-json')"
	}
	return "use a connector that applies them"
}

// conform casts the columns of r to the sink's columns, in the order of
// the INSERT's column list (columns not listed are NULL).
func (q *queryPlanner) conform(n *parser.Insert, r Rel, target *types.RowType) (Rel, error) {
	in := r.Schema()
	order := make([]int, target.Len()) // target column -> query column, -1 for NULL
	if len(n.Columns) == 0 {
		if in.Len() != target.Len() {
			return nil, q.errorf(n.Pos, "the query gives %d columns (%s) but %s has %d (%s); list the target columns or select %d",
				in.Len(), strings.Join(in.Names(), ", "), n.Table.Last().Name, target.Len(), strings.Join(target.Names(), ", "), target.Len())
		}
		for i := range order {
			order[i] = i
		}
	} else {
		if len(n.Columns) != in.Len() {
			return nil, q.errorf(n.Pos, "INSERT lists %d columns but the query gives %d", len(n.Columns), in.Len())
		}
		for i := range order {
			order[i] = -1
		}
		for j, c := range n.Columns {
			i, ok := target.Index(c.Name)
			if !ok {
				return nil, q.errorf(c.Pos, "%s has no column %s; its columns are %s", n.Table.Last().Name, c.Name, strings.Join(target.Names(), ", "))
			}
			order[i] = j
		}
	}
	trim, err := trimsToLength(q.cat.Settings)
	if err != nil {
		return nil, q.errorf(n.Pos, "%v", err)
	}
	projs := make([]expr.Expr, target.Len())
	same := true
	for i, f := range target.Fields() {
		j := order[i]
		if j < 0 {
			if !f.Type.IsNullable() {
				return nil, q.errorf(n.Pos, "column %s of %s is NOT NULL: the INSERT must give it", f.Name, n.Table.Last().Name)
			}
			projs[i] = &expr.Literal{T: f.Type, Text: "NULL"}
			same = false
			continue
		}
		src := in.Field(j)
		col := &expr.Column{Index: j, Name: src.Name, T: src.Type}
		switch {
		case src.Type.Equal(f.Type) || src.Type.EqualIgnoringNullability(f.Type) && f.Type.IsNullable():
			projs[i] = col
		case types.SupportsImplicitCast(src.Type, f.Type) || types.SupportsExplicitCast(src.Type, f.Type) && !types.CastCanFail(src.Type, f.Type):
			projs[i] = &expr.Cast{X: col, T: f.Type.WithNullability(src.Type.IsNullable() || f.Type.IsNullable())}
		default:
			return nil, q.errorf(n.Pos, "column %s of %s is %s, but the query gives %s of type %s: CAST it", f.Name, n.Table.Last().Name, f.Type, src.Name, src.Type)
		}
		if c, ok := projs[i].(*expr.Cast); ok && !trim {
			// The value keeps its length (table.exec.sink.type-length-enforcer
			// IGNORE): a string or binary value as it is, another cast to
			// the type of the column without its length.
			if free := lengthFree(f.Type); !free.Equal(f.Type) {
				if src.Type.IsString() && free.IsString() || src.Type.IsBinary() && free.IsBinary() {
					projs[i] = col
				} else {
					projs[i] = &expr.Cast{X: col, T: free.WithNullability(c.T.IsNullable())}
				}
			}
		}
		if j != i || projs[i] != col || src.Name != f.Name {
			same = false
		}
	}
	if same {
		return r, nil
	}
	return newCalc(r, projs, target.Names(), nil), nil
}
