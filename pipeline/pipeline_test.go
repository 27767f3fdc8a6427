package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/types"
)

// TestGolden runs the pipelines of testdata/pipeline: a definition (its
// route, transform and pipeline blocks), then after '---' the events a
// source emits, one per line:
//
//	schema db.t ROW<id INT NOT NULL, name STRING> key=id [rename=a:b]
//	+I db.t 1, a
//	truncate db.t | drop db.t
//
// A schema line is the table's next schema version (a CreateTable event
// the first time and after a drop, an AlterTable after). The output is what the sink gets,
// as FormatEvent writes it, or the job's error.
func TestGolden(t *testing.T) {
	datadriven.RunTest(t, "testdata/pipeline", func(t *testing.T, d *datadriven.TestData) string {
		def, events, err := parseCase(d.Input)
		if err != nil {
			return "error: " + err.Error()
		}
		env := eddy.NewEnvironment(eddy.WithParallelism(1))
		got := eddy.Collect(Apply(eddy.FromSlice(env, events, eddy.NoWatermarks[Event]()), def))
		if err := env.Execute(context.Background(), "pipeline"); err != nil {
			return "error: " + err.Error() + "\n"
		}
		var b strings.Builder
		for _, e := range got.Values() {
			b.WriteString(FormatEvent(e))
			if e.Tolerant {
				b.WriteString(" (tolerant)")
			}
			b.WriteByte('\n')
		}
		return b.String()
	})
}

func parseCase(input string) (*Definition, []Event, error) {
	yaml, body, ok := strings.Cut(input+"\n", "---\n")
	if !ok {
		return nil, nil, fmt.Errorf("no '---' between the definition and the events")
	}
	head := "source:\n  type: test\n"
	if !strings.Contains(yaml, "sink:\n") {
		head += "sink:\n  type: test\n"
	}
	def, err := Parse([]byte(head+yaml), "case.yaml")
	if err != nil {
		return nil, nil, err
	}
	schemas := map[string]*Schema{}
	var events []Event
	arena := types.NewArena(0)
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		verb, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		table, rest, _ := strings.Cut(rest, " ")
		id := ParseTableID(table)
		s := schemas[table]
		switch verb {
		case "schema":
			rowText, opts, _ := strings.Cut(rest, "> ")
			rt, err := types.ParseType(rowText + ">")
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", line, err)
			}
			next := &Schema{Columns: rt.Row(), Version: 1}
			var renames []SchemaChange
			for _, o := range strings.Fields(opts) {
				k, v, _ := strings.Cut(o, "=")
				switch k {
				case "key":
					next.PrimaryKey = strings.Split(v, ",")
				case "rename":
					from, to, _ := strings.Cut(v, ":")
					renames = append(renames, SchemaChange{Kind: RenameColumn, Column: from, NewName: to})
				}
			}
			kind := CreateTable
			if s != nil {
				next.Version, kind = s.Version+1, AlterTable
			}
			schemas[table] = next
			events = append(events, Event{Kind: kind, Table: id, Schema: next, Changes: renames, DDL: line})
		case "truncate", "drop":
			kind := TruncateTable
			if verb == "drop" {
				kind = DropTable
			}
			events = append(events, Event{Kind: kind, Table: id, Schema: s, DDL: line})
			if kind == DropTable {
				delete(schemas, table) // a table created again starts at version 1
			}
		default:
			kind, err := changelog.ParseKind(verb)
			if err != nil || s == nil {
				return nil, nil, fmt.Errorf("bad event %q", line)
			}
			var vals []types.Value
			for i, v := range strings.Split(rest, ", ") {
				if v == "NULL" {
					vals = append(vals, nil)
					continue
				}
				x, err := types.CastValue(v, types.String(), s.Columns.Field(i).Type, nil)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %w", line, err)
				}
				vals = append(vals, x)
			}
			row, err := types.BuildRow(s.Columns, arena, vals...)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", line, err)
			}
			events = append(events, Event{Kind: DataChange, Table: id, Schema: s, Change: changelog.Change[types.Row]{Kind: kind, Row: row}})
		}
	}
	return def, events, nil
}

// TestDataChangeWithoutSchema: a source's row change that carries no schema
// stops the job with an error naming the table, with or without a
// transform rule for it.
func TestDataChangeWithoutSchema(t *testing.T) {
	for _, yaml := range []string{"", "transform:\n  - source-table: db.t\n    projection: \\*\n"} {
		def, err := Parse([]byte("source:\n  type: test\nsink:\n  type: test\n"+yaml), "case.yaml")
		if err != nil {
			t.Fatal(err)
		}
		env := eddy.NewEnvironment(eddy.WithParallelism(1))
		events := []Event{{Kind: DataChange, Table: TableID{Schema: "db", Table: "t"}, Change: changelog.Change[types.Row]{Kind: changelog.Insert}}}
		eddy.Collect(Apply(eddy.FromSlice(env, events, eddy.NoWatermarks[Event]()), def))
		err = env.Execute(context.Background(), "pipeline")
		if err == nil || !strings.Contains(err.Error(), "a row change of db.t without its schema") {
			t.Fatalf("transform %q: got %v", yaml, err)
		}
	}
}
