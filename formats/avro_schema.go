package formats

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/twmb/avro"

	"github.com/eddystream/eddy/sql/types"
)

// avroRecordName is the full name of the record of a table's row, as
// Flink's AvroSchemaConverter names it; nested rows are named after it and
// their column ("org.apache.flink.avro.generated.record_addr").
const avroRecordName = "org.apache.flink.avro.generated.record"

// AvroSchemaOf returns the Avro schema (JSON) of the rows of type rt, as
// Flink's avro formats derive it from a table's columns: a record with a
// field per column; BOOLEAN as boolean, TINYINT, SMALLINT and INT as int,
// BIGINT as long, FLOAT as float, DOUBLE as double, CHAR and VARCHAR as
// string, BINARY and VARBINARY as bytes, DECIMAL(p, s) as bytes with the
// decimal logical type, DATE as int date, TIME as int time-millis (TIME(4)
// to TIME(9): long time-micros), TIMESTAMP and TIMESTAMP_LTZ as long
// timestamp-millis (precision 4 to 6: timestamp-micros, 7 to 9:
// timestamp-nanos), ARRAY as array, MAP with string keys as map,
// MULTISET of strings as a map of int counts, ROW as a record; a nullable
// type is the union ["null", T] and its field defaults to null. Other
// types (INTERVAL, MAP and MULTISET with other keys) are an error naming
// the column.
func AvroSchemaOf(rt *types.RowType) (string, error) {
	s, err := avroRecord(rt, avroRecordName, "")
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("avro: writing the schema: %w", err)
	}
	return string(b), nil
}

// avroRecord is the schema of a record of rt named name; path names the
// column it belongs to in errors ("" for the table's row).
func avroRecord(rt *types.RowType, name, path string) (map[string]any, error) {
	fields := make([]any, 0, rt.Len())
	for _, f := range rt.Fields() {
		p := f.Name
		if path != "" {
			p = path + "." + f.Name
		}
		t, err := avroType(f.Type, name+"_"+f.Name, p)
		if err != nil {
			return nil, err
		}
		field := map[string]any{"name": f.Name, "type": t}
		if f.Type.IsNullable() {
			field["default"] = nil
		}
		fields = append(fields, field)
	}
	return map[string]any{"type": "record", "name": name, "fields": fields}, nil
}

// avroType is the schema of values of t (a union with null if t is
// nullable); name names a record, path the column.
func avroType(t types.Type, name, path string) (any, error) {
	s, err := avroNonNull(t, name, path)
	if err != nil {
		return nil, err
	}
	if t.IsNullable() {
		return []any{"null", s}, nil
	}
	return s, nil
}

// avroNonNull is avroType without the union with null.
func avroNonNull(t types.Type, name, path string) (any, error) {
	switch t.Kind() {
	case types.KindBoolean:
		return "boolean", nil
	case types.KindTinyInt, types.KindSmallInt, types.KindInt:
		return "int", nil
	case types.KindBigInt:
		return "long", nil
	case types.KindFloat:
		return "float", nil
	case types.KindDouble:
		return "double", nil
	case types.KindChar, types.KindVarChar:
		return "string", nil
	case types.KindBinary, types.KindVarBinary:
		return "bytes", nil
	case types.KindDecimal:
		return map[string]any{"type": "bytes", "logicalType": "decimal", "precision": t.Precision(), "scale": t.Scale()}, nil
	case types.KindDate:
		return map[string]any{"type": "int", "logicalType": "date"}, nil
	case types.KindTime:
		if t.Precision() > 3 {
			return map[string]any{"type": "long", "logicalType": "time-micros"}, nil
		}
		return map[string]any{"type": "int", "logicalType": "time-millis"}, nil
	case types.KindTimestamp, types.KindTimestampLTZ:
		return map[string]any{"type": "long", "logicalType": avroTimestampUnit(t.Precision())}, nil
	case types.KindArray:
		items, err := avroType(t.Elem(), name, path+"[]")
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case types.KindMap, types.KindMultiset:
		key := t.Elem()
		if t.Kind() == types.KindMap {
			key = t.Key()
		}
		if !key.IsString() {
			return nil, fmt.Errorf("avro: column %s is %s: an Avro map has string keys; use MAP<STRING, ...> or MULTISET<STRING>", path, t)
		}
		values, err := avroType(t.Value(), name, path+"{}")
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "map", "values": values}, nil
	case types.KindRow:
		return avroRecord(t.Row(), name, path)
	}
	return nil, fmt.Errorf("avro: column %s is %s, which the avro formats cannot hold; use a type of the mapping in docs/formats.md", path, t)
}

// avroTimestampUnit is the logical type of a timestamp of precision p.
func avroTimestampUnit(p int) string {
	switch {
	case p <= 3:
		return "timestamp-millis"
	case p <= 6:
		return "timestamp-micros"
	}
	return "timestamp-nanos"
}

// avroRawLogical makes the logical types decode to the values of their
// underlying types (int32 days, int64 milliseconds, the bytes of a
// decimal), which the converters below turn into SQL values.
var avroRawLogical = func() []avro.SchemaOpt {
	var opts []avro.SchemaOpt
	for _, lt := range []string{"date", "time-millis", "time-micros", "timestamp-millis", "timestamp-micros", "timestamp-nanos",
		"local-timestamp-millis", "local-timestamp-micros", "local-timestamp-nanos", "decimal", "uuid"} {
		opts = append(opts, avro.WithCustomType(avro.CustomType{LogicalType: lt}))
	}
	return opts
}()

// parseAvroSchema parses a schema with the logical types left raw.
func parseAvroSchema(schema string) (*avro.Schema, error) {
	return avro.Parse(schema, avroRawLogical...)
}

// avroColumnName names a column in errors.
func avroColumnName(path string) string {
	if path == "" {
		return "the row"
	}
	return "column " + types.QuoteIdentifier(strings.TrimPrefix(path, "."))
}

// avroReaderFor returns the schema (JSON) of the rows of rt as a reader of
// data written with the schema writer: the derived schema whose records
// carry, as aliases, the unqualified names of the writer's records at the
// same places, so that a writer's record named "com.acme.User" resolves to
// the table's row as Avro's Java readers resolve it (they do not compare
// the names of the records they read into).
func avroReaderFor(rt *types.RowType, writer string) (string, error) {
	r, err := avroRecord(rt, avroRecordName, "")
	if err != nil {
		return "", err
	}
	var w any
	if err := json.Unmarshal([]byte(writer), &w); err != nil {
		return "", fmt.Errorf("avro: the writer's schema is not JSON: %w", err)
	}
	aliasWriterNames(r, w)
	b, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("avro: writing the reader's schema: %w", err)
	}
	return string(b), nil
}

// aliasWriterNames adds to the records of reader schema r the names of the
// records of writer schema w at the same places.
func aliasWriterNames(r, w any) {
	switch rs := r.(type) {
	case []any: // ["null", T]
		t := rs[len(rs)-1]
		if ws, ok := w.([]any); ok {
			for _, b := range ws {
				if b != "null" {
					aliasWriterNames(t, b)
				}
			}
			return
		}
		aliasWriterNames(t, w)
	case map[string]any:
		wm, ok := w.(map[string]any)
		if !ok || wm["type"] != rs["type"] {
			return
		}
		switch rs["type"] {
		case "array":
			aliasWriterNames(rs["items"], wm["items"])
		case "map":
			aliasWriterNames(rs["values"], wm["values"])
		case "record":
			name, _ := wm["name"].(string)
			name = name[strings.LastIndexByte(name, '.')+1:]
			own := rs["name"].(string)
			if name != "" && name != own[strings.LastIndexByte(own, '.')+1:] {
				rs["aliases"] = []any{name}
			}
			wf, _ := wm["fields"].([]any)
			for _, f := range rs["fields"].([]any) {
				fm := f.(map[string]any)
				for _, g := range wf {
					if gm, ok := g.(map[string]any); ok && gm["name"] == fm["name"] {
						aliasWriterNames(fm["type"], gm["type"])
					}
				}
			}
		}
	}
}
