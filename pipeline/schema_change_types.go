package pipeline

import (
	"fmt"
	"slices"
	"strings"
)

// The types of schema change a sink can be told to apply or to leave
// alone with the sink keys 'include.schema.changes' and
// 'exclude.schema.changes', named as Flink CDC names them.
const (
	AddColumnType       = "add.column"
	AlterColumnTypeType = "alter.column.type"
	CreateTableType     = "create.table"
	DropColumnType      = "drop.column"
	DropTableType       = "drop.table"
	RenameColumnType    = "rename.column"
	TruncateTableType   = "truncate.table"
)

// schemaChangeFamilies maps each name the keys take to the types it
// stands for: a type, a family of them, or '*' for all.
var schemaChangeFamilies = map[string][]string{
	AddColumnType: {AddColumnType}, AlterColumnTypeType: {AlterColumnTypeType}, CreateTableType: {CreateTableType},
	DropColumnType: {DropColumnType}, DropTableType: {DropTableType}, RenameColumnType: {RenameColumnType},
	TruncateTableType: {TruncateTableType},
	"add":             {AddColumnType},
	"alter":           {AlterColumnTypeType},
	"create":          {CreateTableType},
	"drop":            {DropColumnType, DropTableType},
	"rename":          {RenameColumnType},
	"truncate":        {TruncateTableType},
	"column":          {AddColumnType, AlterColumnTypeType, DropColumnType, RenameColumnType},
	"table":           {CreateTableType, DropTableType, TruncateTableType},
	"*":               {AddColumnType, AlterColumnTypeType, CreateTableType, DropColumnType, DropTableType, RenameColumnType, TruncateTableType},
}

// SchemaChangeTypes is the set of schema change types a sink applies.
type SchemaChangeTypes map[string]bool

// ParseSchemaChangeTypes returns the types a sink applies given the names
// of 'include.schema.changes' (all types if empty) less those of
// 'exclude.schema.changes'. create.table is always applied: the sink table
// must exist for rows to reach it.
func ParseSchemaChangeTypes(include, exclude []string) (SchemaChangeTypes, error) {
	expand := func(key string, names []string) ([]string, error) {
		var out []string
		for _, n := range names {
			ts, ok := schemaChangeFamilies[strings.ToLower(strings.TrimSpace(n))]
			if !ok {
				known := make([]string, 0, len(schemaChangeFamilies))
				for k := range schemaChangeFamilies {
					known = append(known, k)
				}
				slices.Sort(known)
				return nil, fmt.Errorf("'%s' names %q, which is no schema change type; use %s", key, n, strings.Join(known, ", "))
			}
			out = append(out, ts...)
		}
		return out, nil
	}
	in, err := expand("include.schema.changes", include)
	if err != nil {
		return nil, err
	}
	if len(include) == 0 {
		in = schemaChangeFamilies["*"]
	}
	ex, err := expand("exclude.schema.changes", exclude)
	if err != nil {
		return nil, err
	}
	t := SchemaChangeTypes{CreateTableType: true}
	for _, n := range in {
		t[n] = true
	}
	for _, n := range ex {
		if n != CreateTableType {
			delete(t, n)
		}
	}
	return t, nil
}

// Applies reports whether the sink applies schema changes of type name;
// a nil set applies all.
func (t SchemaChangeTypes) Applies(name string) bool { return t == nil || t[name] }

// typeName is the schema change type of a column change.
func (k ChangeKind) typeName() string {
	switch k {
	case AddColumn:
		return AddColumnType
	case DropColumn:
		return DropColumnType
	case RenameColumn:
		return RenameColumnType
	default:
		return AlterColumnTypeType
	}
}
