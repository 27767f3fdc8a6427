package cdc

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/pipeline"
	"github.com/eddystream/eddy/sql/types"
)

// PipelineSpec returns the spec of a pipeline's 'source' block derived
// from a CDC connector's spec (base): its name and description; the
// options 'tables', described by tables, 'tables.exclude' and
// 'schema-change.enabled', the schema changes being those changes says;
// the options given; then those of base but the ones omit names.
func PipelineSpec(base connector.Spec, name, description, tables, changes string, omit []string, options ...connector.Option) connector.Spec {
	s := connector.Spec{Name: name, Kind: connector.SourceKind, Description: description}
	s.Options = append(s.Options,
		connector.Option{Key: "tables", Type: connector.String, Required: true, Description: tables},
		connector.Option{Key: "tables.exclude", Type: connector.String,
			Description: "Tables not to capture among those 'tables' matches, in the same form."},
		connector.Option{Key: "schema-change.enabled", Type: connector.Bool, Default: "true",
			Description: "Whether schema changes (" + changes + ") go down the pipeline as events; without them the sink follows a table's new columns from its rows."})
	s.Options = append(s.Options, options...)
	for _, o := range base.Options {
		if !slices.Contains(omit, o.Key) {
			s.Options = append(s.Options, o)
		}
	}
	return s
}

// PipelineSchema returns the schema of a captured table in a pipeline:
// its columns (fields) at version, keyed by the columns at the indexes
// pk, which it makes NOT NULL.
func PipelineSchema(fields []types.Field, pk []int, version int) (*pipeline.Schema, error) {
	key := make([]string, len(pk))
	for i, k := range pk {
		key[i] = fields[k].Name
		fields[k].Type = fields[k].Type.NotNull()
	}
	rt, err := types.NewRowType(fields...)
	if err != nil {
		return nil, err
	}
	return &pipeline.Schema{Columns: rt, PrimaryKey: key, Version: version}, nil
}

// TableRecord returns the record of a change of a SQL table's row; I is
// the connector's description of the table, not needed.
func TableRecord[I any](_ I, kind changelog.Kind, row types.Row) connector.TableRecord {
	return connector.TableRecord{Kind: kind, Row: row}
}

// DataChange returns the pipeline event of a change of a row of a table.
func DataChange(table pipeline.TableID, schema *pipeline.Schema, kind changelog.Kind, row types.Row) pipeline.Event {
	return pipeline.Event{Kind: pipeline.DataChange, Table: table, Schema: schema, Change: changelog.Change[types.Row]{Kind: kind, Row: row}}
}

// TypeParams returns the numbers in the first parentheses of a column's
// type as the server writes it: varchar(20) gives 20, decimal(10,2) 10
// and 2, timestamp(3) with time zone 3; nil without them, or if one is
// not a number.
func TypeParams(typeName string) []int {
	open, end := strings.IndexByte(typeName, '('), strings.IndexByte(typeName, ')')
	if open < 0 || end < open {
		return nil
	}
	var out []int
	for _, p := range strings.Split(typeName[open+1:end], ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil
		}
		out = append(out, n)
	}
	return out
}

// SortedValues returns the values of m ordered by key.
func SortedValues[K cmp.Ordered, V any](m map[K]V) []V {
	out := make([]V, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}
