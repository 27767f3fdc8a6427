package pipeline

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/eddystream/eddy/sql/types"
)

// Schema is a table's columns and primary key at one point of its stream.
// It is immutable once made: a change makes a new Schema.
type Schema struct {
	// Columns are the table's columns in order.
	Columns *types.RowType
	// PrimaryKey names the primary key's columns, empty if there is none.
	PrimaryKey []string
	// Version numbers a table's schemas in its stream, from 1.
	Version int
}

// KeyIndexes returns the indexes in Columns of the primary key's columns.
func (s *Schema) KeyIndexes() []int {
	out := make([]int, 0, len(s.PrimaryKey))
	for _, k := range s.PrimaryKey {
		if i, ok := s.Columns.Index(k); ok {
			out = append(out, i)
		}
	}
	return out
}

// Same reports whether s and o have the same columns, types and key.
func (s *Schema) Same(o *Schema) bool {
	if s.Columns.Len() != o.Columns.Len() || !slices.Equal(s.PrimaryKey, o.PrimaryKey) {
		return false
	}
	for i, f := range s.Columns.Fields() {
		g := o.Columns.Field(i)
		if f.Name != g.Name || !f.Type.Equal(g.Type) {
			return false
		}
	}
	return true
}

// String writes the schema as a column list.
func (s *Schema) String() string {
	var b strings.Builder
	b.WriteByte('(')
	for i, f := range s.Columns.Fields() {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", f.Name, f.Type)
	}
	if len(s.PrimaryKey) > 0 {
		fmt.Fprintf(&b, ", PRIMARY KEY (%s)", strings.Join(s.PrimaryKey, ", "))
	}
	b.WriteByte(')')
	return b.String()
}

// schemaJSON is a Schema's encoding in state and checkpoints.
type schemaJSON struct {
	Columns    [][2]string `json:"columns"` // name, type
	PrimaryKey []string    `json:"primaryKey,omitempty"`
	Version    int         `json:"version"`
}

// MarshalJSON encodes the schema with its types as SQL writes them.
func (s *Schema) MarshalJSON() ([]byte, error) {
	j := schemaJSON{PrimaryKey: s.PrimaryKey, Version: s.Version}
	for _, f := range s.Columns.Fields() {
		j.Columns = append(j.Columns, [2]string{f.Name, f.Type.String()})
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes what MarshalJSON wrote.
func (s *Schema) UnmarshalJSON(b []byte) error {
	var j schemaJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	fields := make([]types.Field, len(j.Columns))
	for i, c := range j.Columns {
		t, err := types.ParseType(c[1])
		if err != nil {
			return fmt.Errorf("column %s: %w", c[0], err)
		}
		fields[i] = types.F(c[0], t)
	}
	rt, err := types.NewRowType(fields...)
	if err != nil {
		return err
	}
	*s = Schema{Columns: rt, PrimaryKey: j.PrimaryKey, Version: j.Version}
	return nil
}

// ChangeKind is the kind of a SchemaChange.
type ChangeKind uint8

const (
	// AddColumn adds Column of type Type, at Position in the new schema.
	AddColumn ChangeKind = iota
	// DropColumn drops Column.
	DropColumn
	// RenameColumn renames Column to NewName.
	RenameColumn
	// AlterColumnType changes the type of Column to Type.
	AlterColumnType
)

// SchemaChange is a change of one column.
type SchemaChange struct {
	Kind     ChangeKind
	Column   string
	NewName  string
	Type     types.Type
	Position int
}

// String writes the change as SQL's ALTER TABLE clauses do.
func (c SchemaChange) String() string {
	switch c.Kind {
	case AddColumn:
		return fmt.Sprintf("ADD COLUMN %s %s", c.Column, c.Type)
	case DropColumn:
		return "DROP COLUMN " + c.Column
	case RenameColumn:
		return fmt.Sprintf("RENAME COLUMN %s TO %s", c.Column, c.NewName)
	}
	return fmt.Sprintf("ALTER COLUMN %s TYPE %s", c.Column, c.Type)
}

// Diff returns the changes that turn old into new, matching columns by
// name; renames (old name to new name, as a DDL statement said) are kept
// as renames instead of a drop and an add.
func Diff(old, new *Schema, renames map[string]string) []SchemaChange {
	var out []SchemaChange
	renamedTo := map[string]string{}
	for from, to := range renames {
		_, hadFrom := old.Columns.Index(from)
		_, hasTo := new.Columns.Index(to)
		_, stillFrom := new.Columns.Index(from)
		if hadFrom && hasTo && !stillFrom {
			renamedTo[to] = from
		}
	}
	names := func(m map[string]string) []string {
		ks := make([]string, 0, len(m))
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	for _, to := range names(renamedTo) {
		out = append(out, SchemaChange{Kind: RenameColumn, Column: renamedTo[to], NewName: to})
	}
	for _, f := range old.Columns.Fields() {
		if _, ok := new.Columns.Index(f.Name); !ok && !slices.Contains(mapValues(renamedTo), f.Name) {
			out = append(out, SchemaChange{Kind: DropColumn, Column: f.Name})
		}
	}
	for i, f := range new.Columns.Fields() {
		from := f.Name
		if r, ok := renamedTo[f.Name]; ok {
			from = r
		}
		j, ok := old.Columns.Index(from)
		switch {
		case !ok:
			out = append(out, SchemaChange{Kind: AddColumn, Column: f.Name, Type: f.Type, Position: i})
		case !old.Columns.Field(j).Type.Equal(f.Type):
			out = append(out, SchemaChange{Kind: AlterColumnType, Column: f.Name, Type: f.Type})
		}
	}
	return out
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// Widens reports whether a column of type from can take every value of a
// column of type to without loss: a wider integer, a longer string, a
// DECIMAL with as many integer and fraction digits, a more precise time.
func Widens(from, to types.Type) bool {
	if from.EqualIgnoringNullability(to) {
		return true
	}
	switch {
	case from.IsIntegral() && to.IsIntegral():
		return to.Kind() >= from.Kind()
	case from.IsIntegral() && to.Kind() == types.KindDecimal:
		digits := map[types.Kind]int{types.KindTinyInt: 3, types.KindSmallInt: 5, types.KindInt: 10, types.KindBigInt: 19}
		return to.Precision()-to.Scale() >= digits[from.Kind()]
	case from.Kind() == types.KindFloat && to.Kind() == types.KindDouble:
		return true
	case from.Kind() == types.KindDecimal && to.Kind() == types.KindDecimal:
		return to.Scale() >= from.Scale() && to.Precision()-to.Scale() >= from.Precision()-from.Scale()
	case from.IsString() && to.Kind() == types.KindVarChar:
		return to.Length() >= from.Length()
	case from.IsBinary() && to.Kind() == types.KindVarBinary:
		return to.Length() >= from.Length()
	case from.Kind() == to.Kind() && (from.IsTimestamp() || from.Kind() == types.KindTime):
		return to.Precision() >= from.Precision()
	}
	return false
}
