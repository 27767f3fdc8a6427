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
	Parameters map[string]string `json:"parameters"`
	Fields     []dbzField        `json:"fields"`
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
		types.F("ts", types.TimestampType(3)), types.F("ts6", types.TimestampType(6)), types.F("ltz", types.TimestampLTZType(3))), PrimaryKey: []string{"id"}, Version: 1}
	events := append(shopEvents(),
		[]pipeline.Event{{Kind: pipeline.CreateTable, Table: kinds, Schema: ks}},
		[]pipeline.Event{{Kind: pipeline.DataChange, Table: kinds, Schema: ks, Change: changelog.Of(changelog.Insert, types.MustBuildRow(ks.Columns, nil, int64(1), nil, nil, 2.5, nil, nil, nil, nil, nil, nil))}})
	runPipeline(t, d, events)

	col := func(typ string, optional bool, name string) dbzField {
		return dbzField{Type: typ, Optional: optional, Field: name}
	}
	orders1 := []dbzField{col("int32", false, "id"), col("string", true, "item"), col("int32", true, "qty")}
	orders2 := append(append([]dbzField(nil), orders1...), col("string", true, "note"))
	users := []dbzField{col("int64", false, "id"), col("string", true, "name")}
	kindCols := []dbzField{col("int64", false, "id"), col("boolean", true, "ok"), col("float", true, "f"), col("double", false, "dbl"),
		col("double", true, "price"), col("bytes", true, "raw"), col("string", true, "day"),
		col("string", true, "ts"), col("string", true, "ts6"), col("string", true, "ltz")}
	for _, c := range []struct {
		topic   string
		columns [][]dbzField // of each message
	}{
		{"shop.orders", [][]dbzField{orders1, orders1, orders1, orders2, orders2, orders2}},
		{"shop.users", [][]dbzField{users, users, users, users}},
		{"shop.kinds", [][]dbzField{kindCols}},
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
