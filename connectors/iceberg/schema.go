package iceberg

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	icebergo "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy/sql/types"
)

// icebergSchema converts the columns of an eddy table to an Iceberg schema.
// Top-level columns get the field ids 1 to n in column order, nested
// fields the ids after them. The columns at the indexes key become the
// schema's identifier fields and are required; a column whose eddy type
// is NOT NULL is required too. formatVersion decides whether timestamps
// of precision 7 to 9 can be stored (format version 3 only). The error
// names the column and the type that has no Iceberg equivalent.
func icebergSchema(rt *types.RowType, key []int, formatVersion int) (*icebergo.Schema, error) {
	isKey := make(map[int]bool, len(key))
	for _, k := range key {
		isKey[k] = true
	}
	next := rt.Len() + 1
	fields := make([]icebergo.NestedField, rt.Len())
	for i, f := range rt.Fields() {
		t, err := icebergType(f.Type, formatVersion, &next)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", types.QuoteIdentifier(f.Name), err)
		}
		fields[i] = icebergo.NestedField{ID: i + 1, Name: f.Name, Type: t, Required: isKey[i] || !f.Type.IsNullable()}
	}
	ids := make([]int, len(key))
	for j, k := range key {
		ids[j] = k + 1
	}
	return icebergo.NewSchemaWithIdentifiers(0, ids, fields...), nil
}

// icebergType converts one eddy type to its Iceberg type, taking field ids
// for nested fields from *next.
func icebergType(t types.Type, formatVersion int, next *int) (icebergo.Type, error) {
	newID := func() int { id := *next; *next++; return id }
	switch t.Kind() {
	case types.KindBoolean:
		return icebergo.PrimitiveTypes.Bool, nil
	case types.KindTinyInt, types.KindSmallInt, types.KindInt:
		return icebergo.PrimitiveTypes.Int32, nil
	case types.KindBigInt:
		return icebergo.PrimitiveTypes.Int64, nil
	case types.KindFloat:
		return icebergo.PrimitiveTypes.Float32, nil
	case types.KindDouble:
		return icebergo.PrimitiveTypes.Float64, nil
	case types.KindDecimal:
		if t.Precision() > 38 {
			return nil, fmt.Errorf("%s has more than the 38 digits of an Iceberg decimal: use DECIMAL(38, %d) or less", t, t.Scale())
		}
		return icebergo.DecimalTypeOf(t.Precision(), t.Scale()), nil
	case types.KindChar, types.KindVarChar:
		return icebergo.PrimitiveTypes.String, nil
	case types.KindBinary, types.KindVarBinary:
		return icebergo.PrimitiveTypes.Binary, nil
	case types.KindDate:
		return icebergo.PrimitiveTypes.Date, nil
	case types.KindTime:
		return icebergo.PrimitiveTypes.Time, nil
	case types.KindTimestamp, types.KindTimestampLTZ:
		ltz := t.Kind() == types.KindTimestampLTZ
		if t.Precision() <= 6 {
			if ltz {
				return icebergo.PrimitiveTypes.TimestampTz, nil
			}
			return icebergo.PrimitiveTypes.Timestamp, nil
		}
		if formatVersion < 3 {
			name := "TIMESTAMP"
			if ltz {
				name = "TIMESTAMP_LTZ"
			}
			return nil, fmt.Errorf("%s needs the nanosecond timestamps of Iceberg format version 3: use %s(6) or set 'format-version' = '3'", t, name)
		}
		if ltz {
			return icebergo.PrimitiveTypes.TimestampTzNs, nil
		}
		return icebergo.PrimitiveTypes.TimestampNs, nil
	case types.KindRow:
		rt := t.Row()
		fs := make([]icebergo.NestedField, rt.Len())
		ids := make([]int, rt.Len())
		for i := range fs {
			ids[i] = newID()
		}
		for i, f := range rt.Fields() {
			ft, err := icebergType(f.Type, formatVersion, next)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", types.QuoteIdentifier(f.Name), err)
			}
			fs[i] = icebergo.NestedField{ID: ids[i], Name: f.Name, Type: ft, Required: !f.Type.IsNullable()}
		}
		return &icebergo.StructType{FieldList: fs}, nil
	case types.KindArray:
		id := newID()
		et, err := icebergType(t.Elem(), formatVersion, next)
		if err != nil {
			return nil, fmt.Errorf("array element: %w", err)
		}
		return &icebergo.ListType{ElementID: id, Element: et, ElementRequired: !t.Elem().IsNullable()}, nil
	case types.KindMap:
		kid, vid := newID(), newID()
		kt, err := icebergType(t.Key(), formatVersion, next)
		if err != nil {
			return nil, fmt.Errorf("map key: %w", err)
		}
		vt, err := icebergType(t.Value(), formatVersion, next)
		if err != nil {
			return nil, fmt.Errorf("map value: %w", err)
		}
		return &icebergo.MapType{KeyID: kid, KeyType: kt, ValueID: vid, ValueType: vt, ValueRequired: !t.Value().IsNullable()}, nil
	case types.KindIntervalYearMonth, types.KindIntervalDayTime:
		return nil, fmt.Errorf("Iceberg has no interval type for %s: store the interval as a BIGINT (CAST or an expression) instead", t)
	case types.KindMultiset:
		return nil, fmt.Errorf("Iceberg has no multiset type for %s: store it as a MAP<element, INT> or an ARRAY instead", t)
	}
	return nil, fmt.Errorf("type %s cannot be stored in an Iceberg table", t)
}

// sameIcebergType reports whether two Iceberg types are the same type,
// ignoring field ids (nested fields are matched by name, in order).
func sameIcebergType(a, b icebergo.Type) bool {
	switch at := a.(type) {
	case *icebergo.StructType:
		bt, ok := b.(*icebergo.StructType)
		if !ok || len(at.FieldList) != len(bt.FieldList) {
			return false
		}
		for i, f := range at.FieldList {
			g := bt.FieldList[i]
			if f.Name != g.Name || !sameIcebergType(f.Type, g.Type) {
				return false
			}
		}
		return true
	case *icebergo.ListType:
		bt, ok := b.(*icebergo.ListType)
		return ok && sameIcebergType(at.Element, bt.Element)
	case *icebergo.MapType:
		bt, ok := b.(*icebergo.MapType)
		return ok && sameIcebergType(at.KeyType, bt.KeyType) && sameIcebergType(at.ValueType, bt.ValueType)
	}
	return a.Equals(b)
}

// schemaDifferences compares the columns of an eddy table (converted to
// the Iceberg schema want) with the schema of an existing Iceberg table
// and describes each difference: a column missing from the table, a
// column of another type, and a required table column the eddy table does
// not have (which no row could fill). Optional table columns the eddy
// table lacks are not differences: eddy writes NULL into them.
func schemaDifferences(want, have *icebergo.Schema) []string {
	var diffs []string
	for _, f := range want.Fields() {
		g, ok := have.FindFieldByName(f.Name)
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("column %q (%s) is not in the Iceberg table", f.Name, f.Type))
		case !sameIcebergType(f.Type, g.Type):
			diffs = append(diffs, fmt.Sprintf("column %q is %s in the DDL but %s in the Iceberg table", f.Name, f.Type, g.Type))
		}
	}
	for _, g := range have.Fields() {
		if _, ok := want.FindFieldByName(g.Name); !ok && g.Required {
			diffs = append(diffs, fmt.Sprintf("the Iceberg table's required column %q (%s) is not in the DDL", g.Name, g.Type))
		}
	}
	return diffs
}

// formatDifferences joins schema differences for an error message.
func formatDifferences(diffs []string) string { return strings.Join(diffs, "; ") }

// arrowSchema returns the Arrow schema of the Parquet files written for an
// Iceberg schema: Iceberg's own mapping, with the field ids in the fields'
// metadata (PARQUET:field_id) so readers resolve columns by id.
func arrowSchema(sc *icebergo.Schema) (*arrow.Schema, error) {
	as, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("converting Iceberg schema to Arrow: %w", err)
	}
	return as, nil
}

// keyFieldIDs returns the Iceberg field ids of the eddy columns at the
// indexes key, looked up by name in sc: the equality field ids of
// equality deletes.
func keyFieldIDs(sc *icebergo.Schema, rt *types.RowType, key []int) ([]int, error) {
	ids := make([]int, len(key))
	for j, k := range key {
		name := rt.Field(k).Name
		f, ok := sc.FindFieldByName(name)
		if !ok {
			return nil, fmt.Errorf("key column %q is not in the Iceberg table: add it to the table or change the PRIMARY KEY", name)
		}
		ids[j] = f.ID
	}
	return ids, nil
}
