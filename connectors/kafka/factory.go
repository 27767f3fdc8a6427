// Package kafka is eddy's Apache Kafka connector, with the options of
// Flink's: it registers "kafka", a source and sink of topics whose messages
// carry records in one of eddy's formats, and "upsert-kafka", a table
// stored in a (compacted) topic as the last value of each primary key.
//
// The source reads partitions directly, without a consumer group: each
// partition of the topics (or of the topics a pattern matches) is a split
// whose state is the offset of the next message to emit, so a restored job
// resumes every partition exactly where its checkpoint says; partitions
// added while the job runs are discovered and read from their start. The
// sink writes through franz-go's producer: 'exactly-once' in Kafka
// transactions committed when eddy's checkpoint completes, 'at-least-once'
// with the idempotent producer flushed at every checkpoint, or 'none'.
//
// It also registers the sink of YAML pipelines of type kafka
// (pipeline.Sinks), with the keys of Flink CDC's Kafka pipeline connector:
// each row change of a pipeline's tables is one debezium-json or
// canal-json message in its table's topic, written by the same producers
// and transactions.
package kafka

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	_ "github.com/eddystream/eddy/formats" // the formats of the messages
)

// Delivery guarantees of the sink.
const (
	exactlyOnce = "exactly-once"
	atLeastOnce = "at-least-once"
	none        = "none"
)

// Startup and bounded modes of the source.
const (
	groupOffsets    = "group-offsets"
	earliestOffset  = "earliest-offset"
	latestOffset    = "latest-offset"
	timestampMode   = "timestamp"
	specificOffsets = "specific-offsets"
	unbounded       = "unbounded"
)

// formats are the formats of keys and values.
var formats = []string{"json", "csv", "raw", "avro", "avro-confluent", "debezium-json", "canal-json", "maxwell-json"}

// commonOptions are the options of both connectors.
func commonOptions(upsert bool) []connector.Option {
	topic := "The topic to read or write. Sources read one or several, semicolon-separated ('orders;returns'); sinks write one."
	if upsert {
		topic = "The topic that holds the table: one topic, compacted so that it keeps the last message of each key."
	}
	opts := []connector.Option{
		{Key: "topic", Type: connector.String, Required: upsert, Description: topic, Check: checkTopics},
	}
	if !upsert {
		opts = append(opts, connector.Option{Key: "topic-pattern", Type: connector.String,
			Description: "Sources: a regular expression the whole topic name must match; every topic it matches is read, including topics created while the job runs (see 'scan.topic-partition-discovery.interval'). Set 'topic' or 'topic-pattern', not both.",
			Check: func(v string) error {
				if _, err := regexp.Compile(v); err != nil {
					return fmt.Errorf("not a regular expression: %v", err)
				}
				return nil
			}})
	}
	opts = append(opts,
		connector.Option{Key: "properties.bootstrap.servers", Type: connector.String,
			Description: "Required: the brokers to connect to first, host:port pairs, comma-separated ('kafka-1:9092,kafka-2:9092')."},
		connector.Option{Key: "properties.group.id", Type: connector.String,
			Description: "Sources: the consumer group whose committed offsets 'group-offsets' starts from; the source commits the offsets of each completed checkpoint to it (for monitoring only: eddy resumes from its checkpoints)."},
		connector.Option{Key: "properties.sasl.jaas.config", Type: connector.String, Secret: true,
			Description: "With 'properties.security.protocol' = 'SASL_PLAINTEXT' or 'SASL_SSL': the credentials, as Kafka clients write them: `org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p\";` (or the ScramLoginModule)."},
		connector.Option{Key: "properties.#", Type: connector.String,
			Description: "Kafka client properties that eddy's client (franz-go) honours: " + strings.Join(honouredProperties, ", ") + ". Any other property is an error that names it."},
		connector.Option{Key: "value.fields-include", Type: connector.Enum, Default: "ALL", Values: []string{"ALL", "EXCEPT_KEY"},
			Description: "Tables with a key format: 'ALL' puts every column in the value, 'EXCEPT_KEY' only those that are not in the key."},
		connector.Option{Key: "scan.topic-partition-discovery.interval", Type: connector.Duration, Default: "5 min",
			Description: "Unbounded sources: how often to look for partitions added to the topics, and for new topics 'topic-pattern' matches; new partitions are read from their start. '0' turns discovery off."},
		connector.Option{Key: "scan.bounded.mode", Type: connector.Enum, Default: unbounded, Values: []string{unbounded, latestOffset, groupOffsets, timestampMode, specificOffsets},
			Description: "Sources: 'unbounded' keeps reading; the others read each partition up to an end and stop: 'latest-offset' the end of the partition when the job first starts, 'group-offsets' the offsets committed by 'properties.group.id', 'timestamp' the first message at or after 'scan.bounded.timestamp-millis', 'specific-offsets' the offsets of 'scan.bounded.specific-offsets'."},
		connector.Option{Key: "scan.bounded.timestamp-millis", Type: connector.Int, Check: connector.NonNegative,
			Description: "With 'scan.bounded.mode' = 'timestamp': where reading stops, in milliseconds since the Unix epoch (exclusive)."},
		connector.Option{Key: "scan.bounded.specific-offsets", Type: connector.String, Check: checkOffsets,
			Description: "With 'scan.bounded.mode' = 'specific-offsets': the offset (exclusive) at which each partition's reading stops, 'partition:0,offset:42;partition:1,offset:300'; partitions not listed are read to their end when the job starts."},
		connector.Option{Key: "sink.delivery-guarantee", Type: connector.Enum, Default: atLeastOnce, Values: []string{exactlyOnce, atLeastOnce, none},
			Description: "Sinks: 'exactly-once' writes each checkpoint's records in Kafka transactions committed when the checkpoint completes (needs 'sink.transactional-id-prefix'; readers see them with isolation.level = read_committed); " +
				"'at-least-once' writes with the idempotent producer and waits at every checkpoint until the brokers have every record, repeating records after a failure; 'none' does not wait."},
		connector.Option{Key: "sink.transactional-id-prefix", Type: connector.String,
			Description: "Sinks with 'exactly-once': the prefix of the transactional ids, '<prefix>-<subtask>-<n>'; give every exactly-once sink writing to a cluster its own (one process refuses two sinks with one prefix)."},
	)
	valueFormats := formats
	if upsert {
		valueFormats = formats[:5]
	} else {
		opts = append(opts, connector.Option{Key: "format", Type: connector.Enum, Values: formats,
			Description: "The format of message values; 'value.format' is its other name. Options of the format are prefixed with its name ('json.ignore-parse-errors')."})
	}
	valueDesc := "The format of message values (as 'format'); its options are prefixed with 'value.' and its name ('value.json.ignore-parse-errors')."
	if upsert {
		valueDesc = "The format of message values, which hold the row (all columns, or those not in the key with 'value.fields-include' = 'EXCEPT_KEY'); its options are prefixed with 'value.' and its name ('value.json.ignore-parse-errors')."
	}
	opts = append(opts,
		connector.Option{Key: "value.format", Type: connector.Enum, Values: valueFormats, Required: upsert, Description: valueDesc},
		connector.Option{Key: "key.format", Type: connector.Enum, Values: formats[:5], Required: upsert,
			Description: "Tables: the format of message keys, which hold the columns 'key.fields' names (upsert-kafka: the primary key); its options are prefixed with 'key.' and its name ('key.json.ignore-parse-errors')."})
	for _, f := range valueFormats {
		if !upsert {
			opts = append(opts, connector.Option{Key: f + ".#", Type: connector.String,
				Description: "Options of the '" + f + "' format when 'format' chooses it ('" + f + ".<option>')."})
		}
	}
	for _, f := range valueFormats {
		opts = append(opts, connector.Option{Key: "value." + f + ".#", Type: connector.String,
			Description: "Options of the '" + f + "' format when 'value.format' chooses it ('value." + f + ".<option>')."})
	}
	for _, f := range formats[:5] {
		opts = append(opts, connector.Option{Key: "key." + f + ".#", Type: connector.String,
			Description: "Options of the '" + f + "' format when 'key.format' chooses it ('key." + f + ".<option>')."})
	}
	if !upsert {
		opts = append(opts,
			connector.Option{Key: "key.fields", Type: connector.String,
				Description: "Tables: the columns that make the message key, semicolon-separated ('id;region'), written in 'key.format'."},
			connector.Option{Key: "scan.startup.mode", Type: connector.Enum, Default: groupOffsets, Values: []string{groupOffsets, earliestOffset, latestOffset, timestampMode, specificOffsets},
				Description: "Sources: where a job's first run starts reading each partition: 'group-offsets' the offsets committed by 'properties.group.id' (without one, as 'properties.auto.offset.reset' says: earliest, latest or, by default, an error), 'earliest-offset' the start, 'latest-offset' the end, " +
					"'timestamp' the first message at or after 'scan.startup.timestamp-millis', 'specific-offsets' the offsets of 'scan.startup.specific-offsets'. A restored job resumes where its checkpoint says."},
			connector.Option{Key: "scan.startup.timestamp-millis", Type: connector.Int, Check: connector.NonNegative,
				Description: "With 'scan.startup.mode' = 'timestamp': where reading starts, in milliseconds since the Unix epoch."},
			connector.Option{Key: "scan.startup.specific-offsets", Type: connector.String, Check: checkOffsets,
				Description: "With 'scan.startup.mode' = 'specific-offsets': the offset to start each partition at, 'partition:0,offset:42;partition:1,offset:300'; partitions not listed start at their beginning."},
			connector.Option{Key: "sink.partitioner", Type: connector.Enum, Default: "default", Values: []string{"default", "fixed", "round-robin"},
				Description: "Sinks: which partition a record goes to: 'default' by the hash of its key as Kafka's clients do (records without a key stick to a partition per batch), 'fixed' the partition of the writer's subtask (subtask mod partitions), 'round-robin' each partition in turn."},
		)
	}
	return opts
}

var kafkaSpec = connector.Spec{
	Name: "kafka",
	Kind: connector.SourceKind | connector.SinkKind,
	Description: "Reads and writes Apache Kafka topics, messages in one of eddy's formats (values, and optionally keys). " +
		"The source reads each partition from a checkpointed offset (exactly once), discovering new partitions and topics while it runs; " +
		"the sink writes exactly once in Kafka transactions committed with eddy's checkpoints, at least once, or without guarantee.",
	Options: commonOptions(false),
}

var upsertSpec = connector.Spec{
	Name: "upsert-kafka",
	Kind: connector.SourceKind | connector.SinkKind,
	Description: "A table kept in a compacted Kafka topic, keyed by its PRIMARY KEY: the sink writes each change as the row's new value under its key, a deletion as a tombstone (a null value); " +
		"the source reads the topic from its start as an upsert changelog of the table.",
	Options: commonOptions(true),
}

// checkTopics checks 'topic': names separated by semicolons.
func checkTopics(v string) error {
	for _, t := range strings.Split(v, ";") {
		t = strings.TrimSpace(t)
		if t == "" {
			return fmt.Errorf("an empty topic name; write 'orders' or several, semicolon-separated ('orders;returns')")
		}
		if len(t) > 249 || strings.ContainsFunc(t, func(r rune) bool {
			return !(r == '.' || r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}) {
			return fmt.Errorf("%q is not a Kafka topic name (letters, digits, '.', '_' and '-', at most 249)", t)
		}
	}
	return nil
}

// parseOffsets parses 'partition:0,offset:42;partition:1,offset:300'.
func parseOffsets(v string) (map[int32]int64, error) {
	out := map[int32]int64{}
	for _, part := range strings.Split(v, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		var p, o string
		for _, kv := range strings.Split(part, ",") {
			k, val, ok := strings.Cut(strings.TrimSpace(kv), ":")
			switch {
			case ok && strings.TrimSpace(k) == "partition":
				p = strings.TrimSpace(val)
			case ok && strings.TrimSpace(k) == "offset":
				o = strings.TrimSpace(val)
			default:
				return nil, fmt.Errorf("%q is not 'partition:<n>,offset:<n>'", part)
			}
		}
		pn, err1 := strconv.ParseInt(p, 10, 32)
		on, err2 := strconv.ParseInt(o, 10, 64)
		if err1 != nil || err2 != nil || pn < 0 || on < 0 {
			return nil, fmt.Errorf("%q is not 'partition:<n>,offset:<n>' with non-negative numbers", part)
		}
		if _, dup := out[int32(pn)]; dup {
			return nil, fmt.Errorf("partition %d is listed twice", pn)
		}
		out[int32(pn)] = on
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no offsets; write 'partition:0,offset:42;partition:1,offset:300'")
	}
	return out, nil
}

func checkOffsets(v string) error { _, err := parseOffsets(v); return err }

// config is what the options say.
type config struct {
	connector string // "kafka" or "upsert-kafka"
	name      string // of the table or operator, for errors
	upsert    bool

	topics  []string
	pattern *regexp.Regexp
	client  clientConfig

	startMode      string
	startTime      int64
	startOffsets   map[int32]int64
	autoReset      string // for group-offsets without a committed offset
	boundedMode    string
	boundedTime    int64
	boundedOffsets map[int32]int64
	discovery      time.Duration

	guarantee   string
	txPrefix    string
	partitioner string
	// topicsOf says, for errors, how a sink without a topic of its own
	// chooses the topic of each message.
	topicsOf string
	// autoCreate lets the producer ask the brokers to create the topics
	// it writes to (they do if auto.create.topics.enable is on).
	autoCreate bool

	changelogs changelog.Mode
}

// optErr returns the error of an option of the connector.
func (c *config) optErr(key, problem string) error {
	return &connector.OptionError{Connector: c.connector, Key: key, Problem: problem}
}

// configOf reads the options of ctx for a source or a sink.
func configOf(ctx connector.Context, upsert, sink bool) (*config, error) {
	o := ctx.Options
	c := &config{
		connector:   o.Spec().Name,
		name:        ctx.Name,
		upsert:      upsert,
		boundedMode: str(o, "scan.bounded.mode"),
		boundedTime: o.Int("scan.bounded.timestamp-millis"),
		discovery:   o.Duration("scan.topic-partition-discovery.interval"),
		guarantee:   str(o, "sink.delivery-guarantee"),
		txPrefix:    str(o, "sink.transactional-id-prefix"),
		changelogs:  changelog.InsertOnly,
	}
	if !upsert {
		c.startMode = str(o, "scan.startup.mode")
		c.startTime = o.Int("scan.startup.timestamp-millis")
		c.partitioner = str(o, "sink.partitioner")
	} else {
		c.startMode = earliestOffset
		c.partitioner = "default"
		c.changelogs = changelog.Upsert
	}
	if t := str(o, "topic"); t != "" {
		for _, s := range strings.Split(t, ";") {
			c.topics = append(c.topics, strings.TrimSpace(s))
		}
	}
	if !upsert && str(o, "topic-pattern") != "" {
		c.pattern = regexp.MustCompile("^(?:" + str(o, "topic-pattern") + ")$")
	}
	var err error
	if c.client, err = clientConfigOf(c, o); err != nil {
		return nil, err
	}
	if !upsert && isSet(o, "scan.startup.specific-offsets") {
		c.startOffsets, _ = parseOffsets(str(o, "scan.startup.specific-offsets"))
	}
	if isSet(o, "scan.bounded.specific-offsets") {
		c.boundedOffsets, _ = parseOffsets(str(o, "scan.bounded.specific-offsets"))
	}
	if err := c.checkCommon(o); err != nil {
		return nil, err
	}
	if sink {
		return c, c.checkSink(o)
	}
	return c, c.checkSource(o)
}

func (c *config) checkCommon(o connector.Options) error {
	if isSet(o, "format") && isSet(o, "value.format") {
		return c.optErr("value.format", "is set with 'format', its other name; keep one")
	}
	if !isSet(o, "format") && !isSet(o, "value.format") {
		return c.optErr("value.format", "is required: set 'format' (or 'value.format') to one of "+strings.Join(formats, ", "))
	}
	for _, f := range formats {
		for _, p := range []string{"", "value.", "key."} {
			if !declared(o, p+f+".#") {
				continue
			}
			chooser := p + "format"
			if p == "" && isSet(o, "value.format") {
				chooser = "value.format"
			}
			if names := o.Names(p + f + ".#"); len(names) > 0 && (str(o, chooser) != f || p == "" && chooser != "format") {
				return c.optErr(p+f+"."+names[0], fmt.Sprintf("is an option of the '%s' format, which '%s' does not choose; prefix a format's options as the option that chooses it: '%s.<option>' with 'format', 'value.%s.<option>' with 'value.format', 'key.%s.<option>' with 'key.format'", f, p+"format", f, f, f))
			}
		}
	}
	if c.upsert {
		if !isSet(o, "key.format") {
			return c.optErr("key.format", "is required: the message key holds the PRIMARY KEY columns; set it to json, csv, raw, avro or avro-confluent")
		}
	}
	if !c.upsert && isSet(o, "key.fields") && !isSet(o, "key.format") {
		return c.optErr("key.fields", "is set without 'key.format'; set the format of the key")
	}
	if !c.upsert && isSet(o, "key.format") && !isSet(o, "key.fields") {
		return c.optErr("key.fields", "is required with 'key.format': name the key's columns, semicolon-separated")
	}
	return nil
}

func (c *config) checkSource(o connector.Options) error {
	if isSet(o, "sink.delivery-guarantee") || isSet(o, "sink.transactional-id-prefix") || isSet(o, "sink.partitioner") {
		for _, k := range []string{"sink.delivery-guarantee", "sink.transactional-id-prefix", "sink.partitioner"} {
			if isSet(o, k) {
				return c.optErr(k, "is an option of sinks; remove it from the source's options")
			}
		}
	}
	switch {
	case len(c.topics) == 0 && c.pattern == nil:
		return c.optErr("topic", "is required: name the topics to read, semicolon-separated, or set 'topic-pattern'")
	case len(c.topics) > 0 && c.pattern != nil:
		return c.optErr("topic-pattern", "is set with 'topic'; set one of them")
	}
	pairs := [][3]string{
		{"scan.startup.timestamp-millis", "scan.startup.mode", timestampMode},
		{"scan.startup.specific-offsets", "scan.startup.mode", specificOffsets},
		{"scan.bounded.timestamp-millis", "scan.bounded.mode", timestampMode},
		{"scan.bounded.specific-offsets", "scan.bounded.mode", specificOffsets},
	}
	for _, p := range pairs {
		mode := str(o, p[1])
		if mode == p[2] && !isSet(o, p[0]) {
			return c.optErr(p[0], fmt.Sprintf("is required with '%s' = '%s'", p[1], p[2]))
		}
		if isSet(o, p[0]) && mode != p[2] {
			return c.optErr(p[0], fmt.Sprintf("is set but '%s' is not '%s'; set the mode or remove the option", p[1], p[2]))
		}
	}
	if (c.boundedOffsets != nil || c.startOffsets != nil) && (c.pattern != nil || len(c.topics) != 1) {
		k := "scan.startup.specific-offsets"
		if c.boundedOffsets != nil {
			k = "scan.bounded.specific-offsets"
		}
		return c.optErr(k, "names partitions of one topic: set 'topic' to a single topic")
	}
	if c.client.groupID == "" && (c.startMode == groupOffsets && isSet(o, "scan.startup.mode") || c.boundedMode == groupOffsets) {
		key := "scan.startup.mode"
		if c.boundedMode == groupOffsets {
			key = "scan.bounded.mode"
		}
		return c.optErr(key, "= 'group-offsets' needs 'properties.group.id': set the group whose offsets to use, or another mode")
	}
	if c.startMode == groupOffsets && c.client.groupID == "" {
		// Flink's default mode without a group: as the reset policy says.
		c.startMode = earliestOffset
		if c.autoReset == "latest" {
			c.startMode = latestOffset
		}
	}
	return nil
}

func (c *config) checkSink(o connector.Options) error {
	for _, k := range []string{"topic-pattern", "scan.startup.mode", "scan.startup.timestamp-millis", "scan.startup.specific-offsets",
		"scan.bounded.mode", "scan.bounded.timestamp-millis", "scan.bounded.specific-offsets", "scan.topic-partition-discovery.interval"} {
		if isSet(o, k) {
			return c.optErr(k, "is an option of sources; remove it from the sink's options")
		}
	}
	if len(c.topics) != 1 {
		return c.optErr("topic", "is required for a sink and names one topic to write to")
	}
	if c.guarantee == exactlyOnce && c.txPrefix == "" {
		return c.optErr("sink.transactional-id-prefix", "is required with 'sink.delivery-guarantee' = 'exactly-once': give the job's transactional ids a prefix no other job uses")
	}
	if c.guarantee != exactlyOnce && c.txPrefix != "" {
		return c.optErr("sink.transactional-id-prefix", "is set but 'sink.delivery-guarantee' is not 'exactly-once'; remove it or set the guarantee")
	}
	return nil
}

// valueFormat returns the value format and its options (prefix removed).
func valueFormat(o connector.Options) (string, map[string]string) {
	name, prefix := str(o, "format"), ""
	if name == "" {
		name, prefix = str(o, "value.format"), "value."
	}
	return name, formatOptions(o, prefix+name+".")
}

// keyFormat returns the key format, if any, and its options.
func keyFormat(o connector.Options) (string, map[string]string) {
	name := str(o, "key.format")
	if name == "" {
		return "", nil
	}
	return name, formatOptions(o, "key."+name+".")
}

// formatOptions returns the options set under prefix, with it removed.
func formatOptions(o connector.Options, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range o.Redacted() {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			out[rest] = v
		}
	}
	return out
}

// factory makes the sources and sinks of "kafka" or "upsert-kafka".
type factory struct{ upsert bool }

func (f factory) Spec() connector.Spec {
	if f.upsert {
		return upsertSpec
	}
	return kafkaSpec
}

// modeOf returns the changelog mode of the value format.
func (c *config) modeOf(o connector.Options) {
	if c.upsert {
		return
	}
	switch f, _ := valueFormat(o); f {
	case "debezium-json", "canal-json", "maxwell-json":
		c.changelogs = changelog.Retract
	}
}

// tableFormats returns the functions that open the key format (nil
// without one) and the value format of a table's rows, having checked that
// they open; maker is connector.DecoderMaker or connector.EncoderMaker.
func tableFormats[C any](ctx connector.Context, rc *rowCodec, maker func(connector.Context) (func() C, error)) (key, val func() C, err error) {
	o := ctx.Options
	opener := func(name string, opts map[string]string, t *connector.Table, what string) (func() C, error) {
		opts = withDefaultSubject(o, name, opts, what)
		fctx, err := formatContext(ctx, name, opts, t)
		if err != nil {
			return nil, err
		}
		mk, err := maker(fctx)
		if err != nil {
			return nil, fmt.Errorf("%s %q: the %s format: %w", o.Spec().Name, ctx.Name, what, err)
		}
		return mk, nil
	}
	if kn, kopts := keyFormat(o); kn != "" {
		if key, err = opener(kn, kopts, rc.keyTable, "key"); err != nil {
			return nil, nil, err
		}
	}
	vn, vopts := valueFormat(o)
	val, err = opener(vn, vopts, rc.valTable, "value")
	return key, val, err
}

func (f factory) NewSource(ctx connector.Context) (any, error) {
	c, err := configOf(ctx, f.upsert, false)
	if err != nil {
		return nil, err
	}
	c.modeOf(ctx.Options)
	if ctx.Table == nil {
		dec, err := f.plainFormat(ctx, c)
		if err != nil {
			return nil, err
		}
		newDec, err := connector.DecoderMaker[any](dec)
		if err != nil {
			return nil, err
		}
		return &source[any]{cfg: c, newDecoder: func() func(*kgo.Record, func(any)) error {
			d := newDec()
			return func(rec *kgo.Record, emit func(any)) error {
				if rec.Value == nil {
					return nil
				}
				return d.Decode(rec.Value, emit)
			}
		}}, nil
	}
	rc, err := newRowCodec(c, ctx.Options, ctx.Table, true)
	if err != nil {
		return nil, err
	}
	key, val, err := tableFormats(ctx, rc, connector.DecoderMaker[connector.TableRecord])
	if err != nil {
		return nil, err
	}
	return &source[connector.TableRecord]{cfg: c, newDecoder: func() func(*kgo.Record, func(connector.TableRecord)) error {
		var kd connector.Decoder[connector.TableRecord]
		if key != nil {
			kd = key()
		}
		return newTableDecoder(rc, c.upsert, kd, val()).decode
	}}, nil
}

// plainFormat returns the context of the value format for records that
// are not rows of a table.
func (f factory) plainFormat(ctx connector.Context, c *config) (connector.Context, error) {
	if f.upsert {
		return ctx, fmt.Errorf("upsert-kafka %q: keeps a table keyed by its PRIMARY KEY; declare it in SQL (CREATE TABLE ... WITH ('connector' = 'upsert-kafka'))", ctx.Name)
	}
	if ctx.Options.IsSet("key.format") {
		return ctx, c.optErr("key.format", "needs the columns of a table; records that are not rows of a table are written as values only")
	}
	vn, vopts := valueFormat(ctx.Options)
	return formatContext(ctx, vn, vopts, nil)
}

func (f factory) NewSink(ctx connector.Context) (any, error) {
	c, err := configOf(ctx, f.upsert, true)
	if err != nil {
		return nil, err
	}
	c.modeOf(ctx.Options)
	if _, err := c.producerOpts(0); err != nil {
		return nil, err
	}
	if ctx.Table == nil {
		enc, err := f.plainFormat(ctx, c)
		if err != nil {
			return nil, err
		}
		newEnc, err := connector.EncoderMaker[any](enc)
		if err != nil {
			return nil, err
		}
		return newSink(c, func() encodeFunc[any] {
			e := newEnc()
			return func(v any) ([]byte, []byte, bool, error) {
				b, err := e.Encode(nil, v)
				if err == nil && b == nil {
					b = []byte{}
				}
				return nil, b, false, err
			}
		}), nil
	}
	rc, err := newRowCodec(c, ctx.Options, ctx.Table, false)
	if err != nil {
		return nil, err
	}
	key, val, err := tableFormats(ctx, rc, connector.EncoderMaker[connector.TableRecord])
	if err != nil {
		return nil, err
	}
	return newSink(c, func() encodeFunc[connector.TableRecord] {
		var ke connector.Encoder[connector.TableRecord]
		if key != nil {
			ke = key()
		}
		return newTableEncoder(rc, c.upsert, ke, val()).encode
	}), nil
}

func init() {
	connector.Register(factory{})
	connector.Register(factory{upsert: true})
}

// declared reports whether the connector's spec has the option key.
func declared(o connector.Options, key string) bool {
	for _, d := range o.Spec().Options {
		if d.Key == key {
			return true
		}
	}
	return false
}

// isSet reports whether option key is declared and set.
func isSet(o connector.Options, key string) bool { return declared(o, key) && o.IsSet(key) }

// str returns option key, "" if the connector does not declare it.
func str(o connector.Options, key string) string {
	if !declared(o, key) {
		return ""
	}
	return o.String(key)
}
