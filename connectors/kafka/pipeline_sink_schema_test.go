package kafka_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/formats"
	"github.com/eddystream/eddy/pipeline"
	"github.com/eddystream/eddy/sql/types"
)

// dbzField is a field of a Debezium schema as Kafka Connect's JSON
// converter writes it.
type dbzField struct {
	Type       string            `json:"type"`
	Optional   bool              `json:"optional"`
	Field      string            `json:"field"`
	Name       string            `json:"name"`
	Version    int               `json:"version"`
	Parameters map[string]string `json:"parameters"`
	Fields     []dbzField        `json:"fields"`
	Items      *dbzField         `json:"items"`
}

// TestPipelineSinkDebeziumIncludeSchema writes two tables' changes with
// 'sink.debezium-json.include-schema.enabled': every message is the
// envelope of Debezium's schema and the payload, the schema's before and
// after listing the table's columns with their Debezium types (the added
// column in the messages after the schema change), and eddy's own
// debezium-json reader with 'schema-include' reads the changes back.
func TestPipelineSinkDebeziumIncludeSchema(t *testing.T) {
	addr := startAutoCluster(t)
	d := pipelineDefinition(t, "  properties.bootstrap.servers: "+addr+"\n"+
		"  sink.debezium-json.include-schema.enabled: true\n")
	kinds := pipeline.TableID{Schema: "shop", Table: "kinds"}
	ks := &pipeline.Schema{Columns: types.MustRowType(
		types.F("id", types.BigInt().NotNull()), types.F("ok", types.Boolean()), types.F("f", types.Float()), types.F("dbl", types.Double().NotNull()),
		types.F("price", types.DecimalType(10, 2)), types.F("raw", types.Bytes()), types.F("day", types.DateType()),
		types.F("ts", types.TimestampType(3)), types.F("ts6", types.TimestampType(6)), types.F("ltz", types.TimestampLTZType(3)),
		types.F("tm", types.TimeType(3)), types.F("big", types.DecimalType(30, 4)), types.F("iv", types.IntervalDayTime()),
		types.F("days", types.ArrayOf(types.DateType())), types.F("nest", types.RowOf(types.F("x", types.DecimalType(10, 2))))), PrimaryKey: []string{"id"}, Version: 1}
	ts := types.TimestampOf(2024, 5, 6, 7, 8, 9, 123456000)
	kindsRow := types.MustBuildRow(ks.Columns, nil, int64(2), true, float32(1.5), -2.25, types.MustParseDecimal("-1.50"), []byte{1, 2},
		types.DateOf(2024, 5, 6), ts.Truncate(3), ts, ts.Truncate(3), types.TimeOf(1, 2, 3, 456000000),
		types.MustParseDecimal("-12345678901234567890.1234"), int64(90061001),
		[]types.Value{types.DateOf(2024, 5, 6)}, []types.Value{types.MustParseDecimal("1.50")})
	events := append(shopEvents(),
		[]pipeline.Event{{Kind: pipeline.CreateTable, Table: kinds, Schema: ks}},
		[]pipeline.Event{
			{Kind: pipeline.DataChange, Table: kinds, Schema: ks, Change: changelog.Of(changelog.Insert, types.MustBuildRow(ks.Columns, nil, int64(1), nil, nil, 2.5, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil))},
			{Kind: pipeline.DataChange, Table: kinds, Schema: ks, Change: changelog.Of(changelog.Insert, kindsRow)},
		})
	runPipeline(t, d, events)

	col := func(typ string, optional bool, name string) dbzField {
		return dbzField{Type: typ, Optional: optional, Field: name}
	}
	orders1 := []dbzField{col("int32", false, "id"), col("string", true, "item"), col("int32", true, "qty")}
	orders2 := append(append([]dbzField(nil), orders1...), col("string", true, "note"))
	users := []dbzField{col("int64", false, "id"), col("string", true, "name")}
	named := func(typ, field, name string, params map[string]string) dbzField {
		return dbzField{Type: typ, Optional: true, Field: field, Name: name, Version: 1, Parameters: params}
	}
	kindCols := []dbzField{col("int64", false, "id"), col("boolean", true, "ok"), col("float", true, "f"), col("double", false, "dbl"),
		named("bytes", "price", "org.apache.kafka.connect.data.Decimal", map[string]string{"scale": "2", "connect.decimal.precision": "10"}),
		col("bytes", true, "raw"), named("int32", "day", "io.debezium.time.Date", nil),
		named("int64", "ts", "io.debezium.time.Timestamp", nil), named("int64", "ts6", "io.debezium.time.MicroTimestamp", nil),
		named("string", "ltz", "io.debezium.time.ZonedTimestamp", nil), named("int32", "tm", "io.debezium.time.Time", nil),
		named("bytes", "big", "org.apache.kafka.connect.data.Decimal", map[string]string{"scale": "4", "connect.decimal.precision": "30"}),
		col("int64", true, "iv"),
		// Values nested in arrays and rows are written as text and numbers.
		{Type: "array", Optional: true, Field: "days", Items: &dbzField{Type: "string", Optional: true}},
		{Type: "struct", Optional: true, Field: "nest", Fields: []dbzField{col("double", true, "x")}}}
	for _, c := range []struct {
		topic   string
		columns [][]dbzField // of each message
	}{
		{"shop.orders", [][]dbzField{orders1, orders1, orders1, orders2, orders2, orders2}},
		{"shop.users", [][]dbzField{users, users, users, users}},
		{"shop.kinds", [][]dbzField{kindCols, kindCols}},
	} {
		ms := readMessages(t, addr, c.topic)
		if len(ms) != len(c.columns) {
			t.Fatalf("topic %s holds %d messages, want %d", c.topic, len(ms), len(c.columns))
		}
		for i, m := range ms {
			var env struct {
				Schema  dbzField                   `json:"schema"`
				Payload map[string]json.RawMessage `json:"payload"`
			}
			if err := json.Unmarshal([]byte(m.value), &env); err != nil {
				t.Fatalf("topic %s: message %d is not JSON: %v\n%s", c.topic, i, err, m.value)
			}
			for _, k := range []string{"before", "after", "op", "source"} {
				if _, ok := env.Payload[k]; !ok {
					t.Errorf("topic %s: the payload of message %d has no %q: %s", c.topic, i, k, m.value)
				}
			}
			s := env.Schema
			if s.Type != "struct" || len(s.Fields) != 4 {
				t.Fatalf("topic %s: message %d has schema %+v, want a struct of before, after, op and source", c.topic, i, s)
			}
			for j, f := range []string{"before", "after", "op", "source"} {
				if s.Fields[j].Field != f {
					t.Errorf("topic %s: field %d of the schema of message %d is %q, want %q", c.topic, j, i, s.Fields[j].Field, f)
				}
			}
			for _, f := range s.Fields[:2] {
				if f.Type != "struct" || !f.Optional || !reflect.DeepEqual(f.Fields, c.columns[i]) {
					t.Errorf("topic %s: message %d: the schema's %q is %+v, want an optional struct of %+v", c.topic, i, f.Field, f, c.columns[i])
				}
			}
		}
	}

	// The payload holds temporal and DECIMAL values as Debezium's logical
	// types have them, and eddy's debezium-json format reads them back.
	ms := readMessages(t, addr, "shop.kinds")
	var kindsMsg struct {
		Payload struct {
			After map[string]json.RawMessage `json:"after"`
		} `json:"payload"`
	}
	if err := json.Unmarshal([]byte(ms[1].value), &kindsMsg); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"price": `"/2o="`, "day": `19849`, "ts": `1714979289123`, "ts6": `1714979289123456`, "ltz": `"2024-05-06T07:08:09.123Z"`,
		"tm": `3723456`, "big": `"5dtk4O9fk2lQDg=="`, "iv": `90061001`, "raw": `"AQI="`,
		"days": `["2024-05-06"]`, "nest": `{"x":1.50}`,
	} {
		if got := string(kindsMsg.Payload.After[k]); got != want {
			t.Errorf("shop.kinds: the payload's %s is %s, want %s", k, got, want)
		}
	}
	kdec, err := formats.NewDebeziumDecoder(ks.Columns, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	var back []types.Row
	for _, m := range ms {
		if err := kdec.Decode([]byte(m.value), func(r connector.TableRecord) { back = append(back, r.Row.Clone()) }); err != nil {
			t.Fatalf("reading %s: %v", m.value, err)
		}
	}
	// TIME values come back in whole seconds, as the json format reads
	// TIME.
	wantRow := types.MustBuildRow(ks.Columns, nil, int64(2), true, float32(1.5), -2.25, types.MustParseDecimal("-1.50"), []byte{1, 2},
		types.DateOf(2024, 5, 6), ts.Truncate(3), ts, ts.Truncate(3), types.TimeOf(1, 2, 3, 0),
		types.MustParseDecimal("-12345678901234567890.1234"), int64(90061001),
		[]types.Value{types.DateOf(2024, 5, 6)}, []types.Value{types.MustParseDecimal("1.50")})
	if len(back) != 2 || types.FormatRow(ks.Columns, back[1]) != types.FormatRow(ks.Columns, wantRow) {
		t.Errorf("debezium-json reads shop.kinds back as %d rows, the second %s, want %s", len(back), types.FormatRow(ks.Columns, back[len(back)-1]), types.FormatRow(ks.Columns, wantRow))
	}

	// eddy's debezium-json format, reading the envelope, gives the changes
	// of shop.orders back, in the table's latest columns.
	rt := types.MustRowType(types.F("id", types.Int().NotNull()), types.F("item", types.String()), types.F("qty", types.Int()), types.F("note", types.String()))
	dec, err := formats.NewDebeziumDecoder(rt, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range readMessages(t, addr, "shop.orders") {
		err := dec.Decode([]byte(m.value), func(r connector.TableRecord) {
			b, err := types.AppendJSON(nil, rt, r.Row, nil)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, r.Kind.String()+" "+string(b))
		})
		if err != nil {
			t.Fatalf("reading %s: %v", m.value, err)
		}
	}
	want := []string{
		`+I {"id":1,"item":"apple","qty":3,"note":null}`,
		`+I {"id":2,"item":"pear","qty":5,"note":null}`,
		`-U {"id":1,"item":"apple","qty":3,"note":null}`,
		`+U {"id":1,"item":"apple","qty":4,"note":null}`,
		`+I {"id":3,"item":"fig","qty":1,"note":"gift"}`,
		`-U {"id":2,"item":"pear","qty":5,"note":null}`,
		`+U {"id":2,"item":"pear","qty":6,"note":"x"}`,
		`-D {"id":1,"item":"apple","qty":4,"note":null}`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("debezium-json with schema-include reads\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
