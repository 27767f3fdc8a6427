package kafka

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	fmtcodec "github.com/eddystream/eddy/formats"
	"github.com/eddystream/eddy/pipeline"
	"github.com/eddystream/eddy/sql/types"
)

// pipelineSpec is the 'sink' block of a pipeline of type kafka, with the
// keys of Flink CDC's Kafka pipeline connector.
var pipelineSpec = connector.Spec{
	Name: "kafka",
	Kind: connector.SinkKind,
	Description: "Writes a pipeline's row changes to Kafka topics as Flink CDC's Kafka pipeline sink does: each change one message, " +
		"in debezium-json ({\"before\":..,\"after\":..,\"op\":\"c|u|d\",\"source\":{\"db\":..,\"table\":..}}) or canal-json, " +
		"keyed by the table id and the primary key, to the topic named after the table (or 'topic', or as 'sink.tableId-to-topic.mapping' says). " +
		"Schema changes write no message: the messages that follow carry the table's new columns.",
	Options: []connector.Option{
		{Key: "properties.bootstrap.servers", Type: connector.String, Required: true,
			Description: "The brokers to connect to first, host:port pairs, comma-separated ('kafka-1:9092,kafka-2:9092')."},
		{Key: "properties.sasl.jaas.config", Type: connector.String, Secret: true,
			Description: "With 'properties.security.protocol' = 'SASL_PLAINTEXT' or 'SASL_SSL': the credentials, `org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p\";` (or the ScramLoginModule)."},
		{Key: "properties.#", Type: connector.String,
			Description: "Kafka client properties that eddy's client (franz-go) honours: " + strings.Join(honouredProperties, ", ") + ". Any other property is an error that names it."},
		{Key: "topic", Type: connector.String, Check: checkTopics,
			Description: "One topic for every table's messages. Without it, each table goes to the topic named after its table id ('shop.orders'), or as 'sink.tableId-to-topic.mapping' says."},
		{Key: "sink.tableId-to-topic.mapping", Type: connector.String, Check: checkTopicMapping,
			Description: "Topics of tables: 'shop.orders:orders;shop.order_\\.*:order-shards', rules separated by ';', each a table pattern (as a route's 'source-table') and a topic separated by ':'; the first rule that matches a table names its topic, and other tables go to the topic named after their table id. Not with 'topic'."},
		{Key: "value.format", Type: connector.Enum, Default: "debezium-json", Values: []string{"debezium-json", "canal-json"},
			Description: "The messages' values: 'debezium-json' ({\"before\":..,\"after\":..,\"op\":\"c\",\"source\":{\"db\":..,\"table\":..}}, op c, u or d) or 'canal-json' ({\"old\":..,\"data\":[..],\"type\":\"INSERT|UPDATE|DELETE\",\"database\":..,\"table\":..,\"pkNames\":[..]})."},
		{Key: "key.format", Type: connector.Enum, Default: "json", Values: []string{"json", "csv"},
			Description: "The messages' keys, the table id and the primary key's columns: 'json' ({\"TableId\":\"shop.orders\",\"id\":1}) or 'csv' (shop.orders,1)."},
		{Key: "partition.strategy", Type: connector.Enum, Default: "all-to-zero", Values: []string{"all-to-zero", "hash-by-key"},
			Description: "Which partition a message goes to: 'all-to-zero' partition 0 (every change of a table in order), 'hash-by-key' by the hash of its key as Kafka's clients do (the changes of a row in order)."},
		{Key: "sink.add-tableId-to-header-enabled", Type: connector.Bool, Default: "false",
			Description: "Whether each message carries the headers 'namespace', 'schemaName' and 'tableName' (empty when the table id has no such part)."},
		{Key: "sink.custom-header", Type: connector.String, Check: checkCustomHeaders,
			Description: "Headers of every message: 'key1:value1,key2:value2' (';' separates them too)."},
		{Key: "sink.debezium-json.include-schema.enabled", Type: connector.Bool, Default: "false",
			Description: "With 'value.format' = 'debezium-json': whether each message is Debezium's envelope {\"schema\":{..},\"payload\":{\"before\":..,\"after\":..,\"op\":..,\"source\":..}}, " +
				"its schema describing the table's columns as Debezium's JSON converter does (following the table's latest columns after a schema change): " +
				"temporal and DECIMAL columns carry the names of Debezium's logical types (io.debezium.time.Date, io.debezium.time.MicroTimestamp, org.apache.kafka.connect.data.Decimal, …) and the payload holds their values as those types have them (days, microseconds, base64 bytes)."},
		{Key: "sink.delivery-guarantee", Type: connector.Enum, Default: atLeastOnce, Values: []string{exactlyOnce, atLeastOnce, none},
			Description: "'exactly-once' writes each checkpoint's messages in Kafka transactions committed when the checkpoint completes (needs 'sink.transactional-id-prefix'; readers see them with isolation.level = read_committed); " +
				"'at-least-once' waits at every checkpoint until the brokers have every message, repeating messages after a failure; 'none' does not wait."},
		{Key: "sink.transactional-id-prefix", Type: connector.String,
			Description: "With 'exactly-once': the prefix of the transactional ids, '<prefix>-<subtask>-<n>'; give every exactly-once sink writing to a cluster its own."},
	},
}

// topicRule is a rule of 'sink.tableId-to-topic.mapping'.
type topicRule struct {
	tables *pipeline.Selector
	topic  string
}

// parseTopicMapping reads 'db.t1:topic1;db.t\.*:topic2'.
func parseTopicMapping(v string) ([]topicRule, error) {
	var rules []topicRule
	for _, part := range strings.Split(v, ";") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		i := strings.LastIndex(part, ":")
		if i < 0 {
			return nil, fmt.Errorf("%q is not '<table pattern>:<topic>'; separate rules with ';' ('shop.orders:orders;shop.items:items')", part)
		}
		pattern, topic := strings.TrimSpace(part[:i]), strings.TrimSpace(part[i+1:])
		if err := checkTopics(topic); err != nil || strings.Contains(topic, ";") {
			return nil, fmt.Errorf("rule %q: %v", part, err)
		}
		sel, err := pipeline.ParseSelector(pattern)
		if err != nil {
			return nil, fmt.Errorf("rule %q: %w", part, err)
		}
		rules = append(rules, topicRule{tables: sel, topic: topic})
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("no rule; write 'shop.orders:orders;shop.items:items'")
	}
	return rules, nil
}

func checkTopicMapping(v string) error { _, err := parseTopicMapping(v); return err }

// parseCustomHeaders reads 'key1:value1,key2:value2'; headers are also
// separated by ';', as Flink CDC's sink reads them.
func parseCustomHeaders(v string) ([]kgo.RecordHeader, error) {
	var out []kgo.RecordHeader
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' }) {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, val, ok := strings.Cut(part, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%q is not 'key:value'; separate headers with ',' ('origin:eddy,env:prod')", part)
		}
		out = append(out, kgo.RecordHeader{Key: strings.TrimSpace(k), Value: []byte(strings.TrimSpace(val))})
	}
	return out, nil
}

func checkCustomHeaders(v string) error { _, err := parseCustomHeaders(v); return err }

// pipelineFactory makes the kafka sink of pipelines.
type pipelineFactory struct{}

func (pipelineFactory) Spec() connector.Spec { return pipelineSpec }

// pipelineConfig is what a pipeline sink's options say beyond config.
type pipelineConfig struct {
	topic     string
	rules     []topicRule
	canal     bool
	csvKey    bool
	tableHdrs bool
	headers   []kgo.RecordHeader
	dbzSchema bool
}

func (pipelineFactory) NewSink(ctx connector.Context) (any, error) {
	o := ctx.Options
	c := &config{
		connector:   "kafka pipeline sink",
		name:        ctx.Name,
		guarantee:   o.String("sink.delivery-guarantee"),
		txPrefix:    o.String("sink.transactional-id-prefix"),
		partitioner: o.String("partition.strategy"),
		changelogs:  changelog.Retract,
		topicsOf:    "one per table",
		autoCreate:  true,
	}
	pc := &pipelineConfig{
		topic: o.String("topic"), canal: o.String("value.format") == "canal-json", csvKey: o.String("key.format") == "csv",
		tableHdrs: o.Bool("sink.add-tableId-to-header-enabled"),
		dbzSchema: o.Bool("sink.debezium-json.include-schema.enabled"),
	}
	if pc.dbzSchema && pc.canal {
		return nil, c.optErr("sink.debezium-json.include-schema.enabled", "is set with 'value.format' = 'canal-json', whose messages have no schema; remove it or write debezium-json")
	}
	if pc.topic != "" {
		if strings.Contains(pc.topic, ";") {
			return nil, c.optErr("topic", "names one topic for every table; route tables to several with 'sink.tableId-to-topic.mapping'")
		}
		c.topics = []string{pc.topic}
	}
	if o.IsSet("sink.tableId-to-topic.mapping") {
		if pc.topic != "" {
			return nil, c.optErr("sink.tableId-to-topic.mapping", "is set with 'topic', which sends every table to one topic; keep one of them")
		}
		pc.rules, _ = parseTopicMapping(o.String("sink.tableId-to-topic.mapping"))
		c.topicsOf = "as sink.tableId-to-topic.mapping says"
	}
	pc.headers, _ = parseCustomHeaders(o.String("sink.custom-header"))
	var err error
	if c.client, err = clientConfigOf(c, o); err != nil {
		return nil, err
	}
	if c.guarantee == exactlyOnce && c.txPrefix == "" {
		return nil, c.optErr("sink.transactional-id-prefix", "is required with 'sink.delivery-guarantee' = 'exactly-once': give the pipeline's transactional ids a prefix no other job uses")
	}
	if c.guarantee != exactlyOnce && c.txPrefix != "" {
		return nil, c.optErr("sink.transactional-id-prefix", "is set but 'sink.delivery-guarantee' is not 'exactly-once'; remove it or set the guarantee")
	}
	if _, err := c.producerOpts(0); err != nil {
		return nil, err
	}
	return newRecordSink(c, func() recordFunc[pipeline.Event] {
		return newEventEncoder(pc).encode
	}), nil
}

func init() { pipeline.Sinks.Register(pipelineFactory{}) }

// eventEncoder writes the row changes of a pipeline's tables as messages.
// An update, -U then +U, is one message: each table's -U is held until
// its +U.
type eventEncoder struct {
	cfg    *pipelineConfig
	tables map[pipeline.TableID]*tableCodec
	buf    []byte
}

// tableCodec is what an eventEncoder keeps of a table: its topic, the
// encoders of its keys for its latest schema, and the row of a -U whose +U
// is to come.
type tableCodec struct {
	topic     string
	schema    *pipeline.Schema
	key       *types.KeyEncoder
	csv       connector.Encoder[connector.TableRecord]
	dbzSchema []byte
	before    types.Row
	hasBefore bool
}

func newEventEncoder(c *pipelineConfig) *eventEncoder {
	return &eventEncoder{cfg: c, tables: map[pipeline.TableID]*tableCodec{}}
}

// table returns what the encoder keeps of table t, whose rows are of
// schema s, its key encoders made anew when the schema changed.
func (e *eventEncoder) table(t pipeline.TableID, s *pipeline.Schema) *tableCodec {
	tc, ok := e.tables[t]
	if !ok {
		tc = &tableCodec{topic: e.cfg.topic}
		if tc.topic == "" {
			tc.topic = t.String()
			for _, r := range e.cfg.rules {
				if r.tables.Matches(t) {
					tc.topic = r.topic
					break
				}
			}
		}
		e.tables[t] = tc
	}
	if tc.schema != s && (tc.schema == nil || !tc.schema.Same(s)) {
		tc.key = types.NewKeyEncoder(s.Columns, s.KeyIndexes()...)
		tc.csv = nil
		tc.dbzSchema = nil
		if e.cfg.dbzSchema {
			tc.dbzSchema = appendDebeziumSchema(nil, s.Columns)
		}
	}
	tc.schema = s
	return tc
}

// encode returns the message of event ev: nil for schema events and the
// -U of an update.
func (e *eventEncoder) encode(ev pipeline.Event) (*kgo.Record, error) {
	if ev.Kind != pipeline.DataChange {
		if ev.Kind == pipeline.DropTable {
			delete(e.tables, ev.Table)
		}
		return nil, nil
	}
	tc := e.table(ev.Table, ev.Schema)
	c := ev.Change
	var before, after *types.Row
	switch c.Kind {
	case changelog.UpdateBefore:
		tc.before, tc.hasBefore = c.Row.Clone(), true
		return nil, nil
	case changelog.UpdateAfter:
		after = &c.Row
		if tc.hasBefore {
			before = &tc.before
		}
	case changelog.Insert:
		after = &c.Row
	case changelog.Delete:
		before = &c.Row
	}
	tc.hasBefore = false
	val, err := e.value(ev, tc, before, after)
	if err != nil {
		return nil, fmt.Errorf("writing a %s change of table %s: %w", c.Kind, ev.Table, err)
	}
	key, err := e.key(ev, tc, c.Row)
	if err != nil {
		return nil, fmt.Errorf("writing the key of a %s change of table %s: %w", c.Kind, ev.Table, err)
	}
	rec := &kgo.Record{Topic: tc.topic, Key: key, Value: val}
	if e.cfg.tableHdrs {
		rec.Headers = append(rec.Headers,
			kgo.RecordHeader{Key: "namespace", Value: []byte(ev.Table.Namespace)},
			kgo.RecordHeader{Key: "schemaName", Value: []byte(ev.Table.Schema)},
			kgo.RecordHeader{Key: "tableName", Value: []byte(ev.Table.Table)})
	}
	rec.Headers = append(rec.Headers, e.cfg.headers...)
	return rec, nil
}

// debeziumValues writes the payload of messages with Debezium's schema:
// temporal and DECIMAL values as its logical types have them.
var debeziumValues = types.JSONOptions{Debezium: true}

// appendString appends s as a JSON string.
func appendString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s)
	return append(dst, b...)
}

// value writes the message value of a change with the rows before and
// after it (nil for none).
func (e *eventEncoder) value(ev pipeline.Event, tc *tableCodec, before, after *types.Row) ([]byte, error) {
	rt := ev.Schema.Columns
	dst := e.buf[:0]
	var err error
	row := func(r *types.Row, array bool) {
		if err != nil {
			return
		}
		if r == nil {
			dst = append(dst, "null"...)
			return
		}
		if array {
			dst = append(dst, '[')
		}
		var opts *types.JSONOptions
		if tc.dbzSchema != nil {
			opts = &debeziumValues
		}
		dst, err = types.AppendJSON(dst, rt, *r, opts)
		if array {
			dst = append(dst, ']')
		}
	}
	if !e.cfg.canal {
		op := "u"
		switch ev.Change.Kind {
		case changelog.Insert:
			op = "c"
		case changelog.Delete:
			op = "d"
		}
		if tc.dbzSchema != nil {
			dst = append(dst, `{"schema":`...)
			dst = append(dst, tc.dbzSchema...)
			dst = append(dst, `,"payload":`...)
		}
		dst = append(dst, `{"before":`...)
		row(before, false)
		dst = append(dst, `,"after":`...)
		row(after, false)
		dst = append(dst, `,"op":"`...)
		dst = append(dst, op...)
		dst = append(dst, `","source":{"db":`...)
		dst = appendString(dst, ev.Table.Schema)
		dst = append(dst, `,"table":`...)
		dst = appendString(dst, ev.Table.Table)
		dst = append(dst, "}}"...)
		if tc.dbzSchema != nil {
			dst = append(dst, '}')
		}
	} else {
		typ := "UPDATE"
		data, old := after, before
		switch ev.Change.Kind {
		case changelog.Insert:
			typ = "INSERT"
		case changelog.Delete:
			typ, data, old = "DELETE", before, nil
		}
		dst = append(dst, `{"old":`...)
		row(old, true)
		dst = append(dst, `,"data":`...)
		row(data, true)
		dst = append(dst, `,"type":"`...)
		dst = append(dst, typ...)
		dst = append(dst, `","database":`...)
		dst = appendString(dst, ev.Table.Schema)
		dst = append(dst, `,"table":`...)
		dst = appendString(dst, ev.Table.Table)
		dst = append(dst, `,"pkNames":[`...)
		for i, k := range ev.Schema.PrimaryKey {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
		}
		dst = append(dst, "]}"...)
	}
	e.buf = dst
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), dst...), nil
}

// key writes the message key: the table id and the primary key's columns
// of row r.
func (e *eventEncoder) key(ev pipeline.Event, tc *tableCodec, r types.Row) ([]byte, error) {
	ke := tc.key
	kr := ke.KeyRow(ke.Key(r))
	if !e.cfg.csvKey {
		dst := appendString([]byte(`{"TableId":`), ev.Table.String())
		if ke.KeyType().Len() == 0 {
			return append(dst, '}'), nil
		}
		obj, err := types.AppendJSON(nil, ke.KeyType(), kr, nil)
		if err != nil {
			return nil, err
		}
		return append(append(dst, ','), obj[1:]...), nil
	}
	id := ev.Table.String()
	if strings.ContainsAny(id, ",\"\r\n") {
		id = `"` + strings.ReplaceAll(id, `"`, `""`) + `"`
	}
	dst := []byte(id)
	if ke.KeyType().Len() == 0 {
		return dst, nil
	}
	if tc.csv == nil {
		enc, err := fmtcodec.NewCSVRowEncoder(ke.KeyType(), fmtcodec.CSVRowOptions{})
		if err != nil {
			return nil, err
		}
		tc.csv = enc
	}
	dst = append(dst, ',')
	dst, err := tc.csv.Encode(dst, changelog.Of(changelog.Insert, kr))
	return []byte(strings.TrimRight(string(dst), "\n")), err
}

// appendDebeziumSchema appends the schema of the debezium-json messages
// of a table with columns rt, as Kafka Connect's JSON converter writes a
// Debezium envelope's schema: a struct of the optional structs "before"
// and "after" of the columns, the string "op" and the struct "source" of
// the strings "db" and "table".
func appendDebeziumSchema(dst []byte, rt *types.RowType) []byte {
	dst = append(dst, `{"type":"struct","fields":[`...)
	for i, f := range []string{"before", "after"} {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendStructSchema(dst, rt, true)
		dst = append(dst, `,"optional":true,"field":"`...)
		dst = append(dst, f...)
		dst = append(dst, `"}`...)
	}
	dst = append(dst, `,{"type":"string","optional":false,"field":"op"}`...)
	dst = append(dst, `,{"type":"struct","fields":[{"type":"string","optional":true,"field":"db"},{"type":"string","optional":true,"field":"table"}],"optional":false,"field":"source"}`...)
	return append(dst, `],"optional":false}`...)
}

// appendStructSchema appends `{"type":"struct","fields":[..]` (without the
// closing brace) for a struct of the fields of rt: the columns of a table
// if top, else a ROW nested in one.
func appendStructSchema(dst []byte, rt *types.RowType, top bool) []byte {
	dst = append(dst, `{"type":"struct","fields":[`...)
	for i := 0; i < rt.Len(); i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		f := rt.Field(i)
		dst = appendTypeSchema(dst, f.Type, top)
		dst = append(dst, `,"field":`...)
		dst = appendString(dst, f.Name)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendTypeSchema appends the Connect schema of a value of type t
// without the closing brace: its type, whether it is optional (t is
// nullable), and for the temporal and DECIMAL values of a table's columns
// (top) the name of Debezium's logical type, as the payload writes them
// (types.JSONOptions.Debezium); values nested in ROW, ARRAY and MAP
// columns are written as text and numbers.
func appendTypeSchema(dst []byte, t types.Type, top bool) []byte {
	typ := "string"
	switch t.Kind() {
	case types.KindBoolean:
		typ = "boolean"
	case types.KindTinyInt, types.KindSmallInt:
		typ = "int16"
	case types.KindInt:
		typ = "int32"
	case types.KindBigInt, types.KindIntervalDayTime:
		typ = "int64" // an INTERVAL DAY TO SECOND as milliseconds
	case types.KindIntervalYearMonth:
		typ = "int32" // as months
	case types.KindFloat:
		typ = "float"
	case types.KindDouble:
		typ = "double"
	case types.KindBinary, types.KindVarBinary:
		typ = "bytes" // base64 text, as Connect's JSON converter reads bytes
	case types.KindDecimal:
		typ = "double" // a JSON number, read by Connect as a double
	}
	switch t.Kind() {
	case types.KindDate, types.KindTime, types.KindTimestamp, types.KindTimestampLTZ, types.KindDecimal:
		if !top {
			break
		}
		typ, name, params := types.DebeziumLogical(t)
		dst = append(dst, `{"type":"`...)
		dst = append(dst, typ...)
		dst = append(dst, '"')
		dst = appendOptional(dst, t)
		dst = append(dst, `,"name":"`...)
		dst = append(dst, name...)
		dst = append(dst, `","version":1`...)
		if len(params) > 0 {
			dst = append(dst, `,"parameters":{`...)
			for i, p := range params {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendString(dst, p[0])
				dst = append(dst, ':')
				dst = appendString(dst, p[1])
			}
			dst = append(dst, '}')
		}
		return dst
	case types.KindMultiset:
		// Written as an object of each element's count.
		dst = append(dst, `{"type":"map","keys":`...)
		dst = append(appendTypeSchema(dst, t.Elem(), false), '}')
		dst = append(dst, `,"values":{"type":"int32","optional":false}`...)
		return appendOptional(dst, t)
	case types.KindArray:
		dst = append(dst, `{"type":"array","items":`...)
		dst = append(appendTypeSchema(dst, t.Elem(), false), '}')
		return appendOptional(dst, t)
	case types.KindMap:
		dst = append(dst, `{"type":"map","keys":`...)
		dst = append(appendTypeSchema(dst, t.Key(), false), '}')
		dst = append(dst, `,"values":`...)
		dst = append(appendTypeSchema(dst, t.Value(), false), '}')
		return appendOptional(dst, t)
	case types.KindRow:
		return appendOptional(appendStructSchema(dst, t.Row(), false), t)
	}
	dst = append(dst, `{"type":"`...)
	dst = append(dst, typ...)
	dst = append(dst, '"')
	return appendOptional(dst, t)
}

func appendOptional(dst []byte, t types.Type) []byte {
	if t.IsNullable() {
		return append(dst, `,"optional":true`...)
	}
	return append(dst, `,"optional":false`...)
}
