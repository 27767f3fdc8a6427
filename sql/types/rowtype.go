package types

import (
	"fmt"
	"strings"
)

// Field is a named field of a row type.
type Field struct {
	// Name is the field's name, compared case-sensitively as Flink does.
	Name string
	// Type is the field's type.
	Type Type
}

// F returns the field name of type t: shorthand for Field{name, t}.
func F(name string, t Type) Field { return Field{Name: name, Type: t} }

// RowType is the type of a row: its fields in order, with the layout of
// its binary rows. It is immutable; share it freely.
type RowType struct {
	fields []Field
	// byName indexes the fields by exact name.
	byName map[string]int
	// bitmapBytes is the size of the null bitmap; fixedSize that of the
	// bitmap and slots together.
	bitmapBytes, fixedSize int
	// varFields lists the fields whose values live in the variable part.
	varFields []int
	// nullable lists the fields whose type admits NULL.
	notNull []bool
}

// NewRowType returns the row type of the fields. Names must be non-empty
// and distinct.
func NewRowType(fields ...Field) (*RowType, error) {
	rt := &RowType{
		fields:      append([]Field(nil), fields...),
		byName:      make(map[string]int, len(fields)),
		bitmapBytes: bitmapBytes(len(fields)),
		notNull:     make([]bool, len(fields)),
	}
	rt.fixedSize = rt.bitmapBytes + 8*len(fields)
	for i, f := range rt.fields {
		if f.Name == "" {
			return nil, fmt.Errorf("types: field %d of a row type has no name; name every field", i)
		}
		if j, dup := rt.byName[f.Name]; dup {
			return nil, fmt.Errorf("types: fields %d and %d of a row type are both named %q; rename one", j, i, f.Name)
		}
		rt.byName[f.Name] = i
		if !f.Type.IsFixed() {
			rt.varFields = append(rt.varFields, i)
		}
		rt.notNull[i] = !f.Type.IsNullable()
	}
	return rt, nil
}

// MustRowType is NewRowType for fields known to be valid; it panics on an
// error.
func MustRowType(fields ...Field) *RowType {
	rt, err := NewRowType(fields...)
	if err != nil {
		panic(err)
	}
	return rt
}

// bitmapBytes is the size of the null bitmap of n fields or elements.
func bitmapBytes(n int) int { return (n + 63) >> 6 << 3 }

// Type returns ROW<fields> (nullable).
func (rt *RowType) Type() Type { return Type{kind: KindRow, row: rt} }

// Len returns the number of fields.
func (rt *RowType) Len() int { return len(rt.fields) }

// Field returns field i.
func (rt *RowType) Field(i int) Field { return rt.fields[i] }

// FieldType returns the type of field i.
func (rt *RowType) FieldType(i int) Type { return rt.fields[i].Type }

// Fields returns a copy of the fields.
func (rt *RowType) Fields() []Field { return append([]Field(nil), rt.fields...) }

// Names returns the field names in order.
func (rt *RowType) Names() []string {
	names := make([]string, len(rt.fields))
	for i, f := range rt.fields {
		names[i] = f.Name
	}
	return names
}

// Index returns the position of the field named exactly name.
func (rt *RowType) Index(name string) (int, bool) {
	i, ok := rt.byName[name]
	return i, ok
}

// AmbiguousFieldError says that a case-insensitive lookup matched several
// fields.
type AmbiguousFieldError struct {
	// Name is the name looked up.
	Name string
	// Matches are the names of the fields it matched.
	Matches []string
}

// Error renders the ambiguity and the fix.
func (e *AmbiguousFieldError) Error() string {
	return fmt.Sprintf("types: field name %q is ambiguous: it matches %s regardless of case; write the name with its exact case",
		e.Name, strings.Join(e.Matches, ", "))
}

// UnknownFieldError says that no field has the name looked up.
type UnknownFieldError struct {
	// Name is the name looked up.
	Name string
	// Fields are the names of the row type's fields.
	Fields []string
}

// Error renders the miss and the available fields.
func (e *UnknownFieldError) Error() string {
	return fmt.Sprintf("types: no field named %q; the fields are %s", e.Name, strings.Join(e.Fields, ", "))
}

// Lookup finds a field by name: the field named exactly name if there is
// one, else the one field whose name equals it regardless of case. It
// returns an *UnknownFieldError when none matches and an
// *AmbiguousFieldError when several match regardless of case.
func (rt *RowType) Lookup(name string) (int, error) {
	if i, ok := rt.byName[name]; ok {
		return i, nil
	}
	found := -1
	var matches []string
	for i, f := range rt.fields {
		if strings.EqualFold(f.Name, name) {
			if found < 0 {
				found = i
			}
			matches = append(matches, f.Name)
		}
	}
	switch {
	case len(matches) == 1:
		return found, nil
	case len(matches) > 1:
		return -1, &AmbiguousFieldError{Name: name, Matches: matches}
	}
	return -1, &UnknownFieldError{Name: name, Fields: rt.Names()}
}

// Project returns the row type of the given fields, in the given order.
func (rt *RowType) Project(cols ...int) *RowType {
	fs := make([]Field, len(cols))
	for i, c := range cols {
		fs[i] = rt.fields[c]
	}
	p, err := NewRowType(fs...)
	if err != nil {
		// Projecting one field twice: rename the copies.
		for i := range fs {
			fs[i].Name = fmt.Sprintf("%s$%d", fs[i].Name, i)
		}
		p = MustRowType(fs...)
	}
	return p
}

// Equal reports whether the row types have the same field names and types.
func (rt *RowType) Equal(u *RowType) bool { return rt.equal(u, true) }

func (rt *RowType) equal(u *RowType, nullability bool) bool {
	if rt == u {
		return true
	}
	if rt == nil || u == nil || len(rt.fields) != len(u.fields) {
		return false
	}
	for i, f := range rt.fields {
		g := u.fields[i]
		if f.Name != g.Name || !f.Type.equal(g.Type, nullability) {
			return false
		}
	}
	return true
}

// String returns the summary form of ROW<fields> (without nullability).
func (rt *RowType) String() string { return rt.Type().String() }
