// Package rabbitmq is eddy's RabbitMQ connector: a source and a sink of
// RabbitMQ queues over AMQP 0-9-1, with the messages in one of eddy's
// formats. It registers as "rabbitmq".
//
// The source reads a queue. A stream queue (x-queue-type=stream) is read
// from an offset kept in eddy's checkpoints: exactly once, replayable, with
// Flink's startup modes. A classic or quorum queue is consumed with manual
// acknowledgements sent only when the checkpoint that covers the messages
// completes: at least once, or exactly once into the job's state when
// publishers give every message a unique message-id and the source
// deduplicates redeliveries by it ('scan.deduplication' = 'message-id').
//
// The sink publishes persistent messages to an exchange with a routing key
// (or to a queue through the default exchange) and waits for publisher
// confirms before each checkpoint completes: at least once. With
// 'sink.publish-on-checkpoint' it publishes each checkpoint's records when
// the checkpoint completes, with message-ids that a publication repeated
// after a failure keeps.
package rabbitmq

import (
	"fmt"
	"strconv"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	_ "github.com/eddystream/eddy/formats" // the formats of the messages
)

// Delivery guarantees of the sink.
const (
	atLeastOnce = "at-least-once"
	noGuarantee = "none"
)

// Startup modes of a stream source.
const (
	earliest  = "earliest-offset"
	latest    = "latest-offset"
	timestamp = "timestamp"
	specific  = "specific-offset"
)

// Queue types.
const (
	classic = "classic"
	quorum  = "quorum"
	stream  = "stream"
)

// Deduplication modes of a classic or quorum queue source.
const (
	dedupNone      = "none"
	dedupMessageID = "message-id"
)

// defaultURL is where the connector connects without 'url': a broker on
// this machine with RabbitMQ's default user.
const defaultURL = "amqp://guest:guest@127.0.0.1:5672/"

// maxPrefetch is the largest prefetch count AMQP 0-9-1 can carry (a short).
const maxPrefetch = 65535

var spec = connector.Spec{
	Name: "rabbitmq",
	Kind: connector.SourceKind | connector.SinkKind,
	Description: "Reads and writes RabbitMQ queues over AMQP 0-9-1. Stream queues are read from a checkpointed offset (exactly once, with startup modes); " +
		"classic and quorum queues are consumed with acknowledgements sent when the checkpoint covering the messages completes " +
		"(at least once, or exactly once into the job's state with 'scan.deduplication' = 'message-id'). " +
		"The sink publishes persistent messages with publisher confirms awaited at every checkpoint (at least once).",
	Formats: []string{"json", "csv", "raw", "avro", "avro-confluent", "debezium-json", "canal-json", "maxwell-json"},
	Options: []connector.Option{
		{Key: "url", Type: connector.String, Default: defaultURL, Secret: true,
			Description: "The broker: 'amqp://user:password@host:5672/vhost' ('amqps://' for TLS with the system's certificate authorities; the virtual host is the path, '%2F' or empty for '/'). " +
				"Secret, since it may hold a password.",
			Check: checkURL},
		{Key: "username", Type: connector.String,
			Description: "The user to connect as, instead of the one in 'url'."},
		{Key: "password", Type: connector.String, Secret: true,
			Description: "The password of the user, instead of the one in 'url'."},
		{Key: "queue", Type: connector.String,
			Description: "Sources: the queue to read (required). Sinks: the queue to publish to through the default exchange, " +
				"or, with 'exchange', a queue to declare and bind to it."},
		{Key: "exchange", Type: connector.String,
			Description: "Sinks: the exchange to publish to (by default the default exchange, which routes to the queue named by the routing key). " +
				"Sources: an exchange to bind 'queue' to, with 'routing-key' and 'binding.arguments'. The exchange must exist."},
		{Key: "routing-key", Type: connector.String,
			Description: "Sinks: the routing key of every message (by default 'queue' when publishing through the default exchange, empty otherwise). " +
				"Sources: the binding key of the binding of 'queue' to 'exchange' (by default empty)."},
		{Key: "binding.arguments", Type: connector.List,
			Description: "The arguments of the binding of 'queue' to 'exchange', as comma-separated key=value pairs of strings; " +
				"for a headers exchange, the headers to match and 'x-match' ('x-match=all,region=eu,kind=order')."},
		{Key: "queue.declare", Type: connector.Bool, Default: "true",
			Description: "Whether to declare 'queue' (durable) when it does not exist, with 'queue.type' and 'queue.arguments'. An existing queue is used as it is, never declared again."},
		{Key: "queue.type", Type: connector.Enum, Default: classic, Values: []string{classic, quorum, stream},
			Description: "The type of the queue the connector declares. The source finds out the type of an existing queue by itself."},
		{Key: "queue.arguments", Type: connector.List,
			Description: "More arguments of the queue the connector declares, as comma-separated key=value pairs; integers and true/false are sent as such " +
				"('x-max-length-bytes=20000000000,x-max-age=7D,x-stream-max-segment-size-bytes=100000000')."},
		{Key: "scan.prefetch-count", Type: connector.Int, Default: "10000", Check: checkPrefetch,
			Description: "Sources: how many messages the broker sends a consumer before it acknowledges them (basic.qos), 0 for no limit, at most 65535. " +
				"Classic and quorum queues are acknowledged when a checkpoint completes, so a consumer reads at most this many messages per checkpoint: " +
				"when it has that many unacknowledged messages it waits for the checkpoint."},
		{Key: "scan.deduplication", Type: connector.Enum, Default: dedupNone, Values: []string{dedupNone, dedupMessageID},
			Description: "Classic and quorum queue sources: 'message-id' skips a redelivered message whose message-id the job has already emitted, " +
				"which makes the source exactly once into the job's state when every publisher gives each message a unique message-id; the queue is then read " +
				"by one consumer, whatever the parallelism. 'none': at least once."},
		{Key: "scan.startup.mode", Type: connector.Enum, Default: earliest, Values: []string{earliest, latest, timestamp, specific},
			Description: "Stream queue sources: where a job's first run starts reading: 'earliest-offset' the first message the stream holds, 'latest-offset' after its last message, " +
				"'timestamp' the first message stored in or after the second of 'scan.startup.timestamp-millis', 'specific-offset' the offset 'scan.startup.specific-offset'. " +
				"A restored job resumes where its checkpoint says."},
		{Key: "scan.startup.timestamp-millis", Type: connector.Int, Check: connector.NonNegative,
			Description: "Stream queue sources with 'scan.startup.mode' = 'timestamp': the time (milliseconds since the Unix epoch) to start reading at."},
		{Key: "scan.startup.specific-offset", Type: connector.Int, Check: connector.NonNegative,
			Description: "Stream queue sources with 'scan.startup.mode' = 'specific-offset': the stream offset to start reading at."},
		{Key: "sink.delivery-guarantee", Type: connector.Enum, Default: atLeastOnce, Values: []string{atLeastOnce, noGuarantee},
			Description: "Sinks: 'at-least-once' publishes persistent messages with publisher confirms, awaited at every checkpoint, and publishes again after a failure the messages " +
				"of the records since the last checkpoint; 'none' publishes without confirms."},
		{Key: "sink.mandatory", Type: connector.Bool, Default: "true",
			Description: "Sinks with 'at-least-once': publish with the mandatory flag, so that a message no queue takes (no binding matches its routing key) fails the job instead of being dropped by the broker."},
		{Key: "sink.publish-on-checkpoint", Type: connector.Bool, Default: "false",
			Description: "Sinks with 'at-least-once': keep each checkpoint's records in the checkpoint and publish them when it completes, with message-ids fixed in the checkpoint, " +
				"so that messages published again after a failure carry the ids they had the first time and consumers deduplicating by message-id see each record once. " +
				"Records appear a checkpoint interval later; needs checkpointing."},
		{Key: "sink.headers", Type: connector.List,
			Description: "Sinks: headers every message carries, as comma-separated key=value pairs of strings, for headers exchanges ('region=eu,kind=order')."},
	},
}

// checkURL checks the 'url' option without quoting it: it may hold a
// password.
func checkURL(v string) error {
	u, err := amqp.ParseURI(strings.TrimSpace(v))
	if err != nil {
		if !strings.HasPrefix(v, "amqp://") && !strings.HasPrefix(v, "amqps://") {
			return fmt.Errorf("the scheme is not amqp:// or amqps://; write 'amqp://user:password@host:5672/vhost'")
		}
		return fmt.Errorf("not an AMQP URI; write 'amqp://user:password@host:5672/vhost'")
	}
	if u.Host == "" {
		return fmt.Errorf("the URI has no host; write 'amqp://user:password@host:5672/vhost'")
	}
	return nil
}

func checkPrefetch(v string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 || n > maxPrefetch {
		return fmt.Errorf("want a number from 0 (no limit) to %d", maxPrefetch)
	}
	return nil
}

// config is what the connector's options say.
type config struct {
	name        string // of the table or operator, for errors
	url         string
	uri         amqp.URI        // url parsed, for the broker's address in errors
	auth        *amqp.PlainAuth // the credentials of 'username' and 'password', if set
	queue       string
	exchange    string
	routingKey  string
	bindingArgs amqp.Table
	declare     bool
	queueType   string
	queueArgs   amqp.Table
	prefetch    int
	dedup       bool
	startMode   string
	startSet    bool // a startup option was set
	startTime   int64
	startOffset int64
	guarantee   string
	mandatory   bool
	// onCheckpoint: publish each checkpoint's records when it completes
	onCheckpoint bool
	headers      amqp.Table
	contentType  string
	changelogs   changelog.Mode
	// narrowed says that a condition on the 'routing-key' column
	// (ApplyFilters) limits what the source emits to the messages of the
	// routing key only, or, with none, to nothing.
	narrowed bool
	only     string
	none     bool
	// headerEq holds the conditions on 'header.<name>' columns
	// (ApplyFilters): the source emits only the messages whose string
	// header name has the value headerEq[name], or, with headersNone,
	// nothing.
	headerEq    map[string]string
	headersNone bool
}

func optErr(key, problem string) error {
	return &connector.OptionError{Connector: spec.Name, Key: key, Problem: problem}
}

// sourceOnly and sinkOnly are the options of one side.
var (
	sourceOnly = []string{"scan.prefetch-count", "scan.deduplication", "scan.startup.mode", "scan.startup.timestamp-millis", "scan.startup.specific-offset"}
	sinkOnly   = []string{"sink.delivery-guarantee", "sink.mandatory", "sink.publish-on-checkpoint", "sink.headers"}
)

// configOf reads the options of ctx; sink says whether it configures a
// sink (or a source).
func configOf(ctx connector.Context, sink bool) (*config, error) {
	o := ctx.Options
	rawURL := strings.TrimSpace(o.String("url"))
	uri, err := amqp.ParseURI(rawURL)
	if err != nil {
		return nil, optErr("url", "is not an AMQP URI; write 'amqp://user:password@host:5672/vhost'")
	}
	name := ctx.Name
	if ctx.Table != nil && ctx.Table.Name != "" {
		name = ctx.Table.Name // a SQL table's errors and logs name the table
	}
	c := &config{
		name:         name,
		url:          rawURL,
		uri:          uri,
		queue:        o.String("queue"),
		exchange:     o.String("exchange"),
		routingKey:   o.String("routing-key"),
		declare:      o.Bool("queue.declare"),
		queueType:    o.String("queue.type"),
		prefetch:     int(o.Int("scan.prefetch-count")),
		dedup:        o.String("scan.deduplication") == dedupMessageID,
		startMode:    o.String("scan.startup.mode"),
		startTime:    o.Int("scan.startup.timestamp-millis"),
		startOffset:  o.Int("scan.startup.specific-offset"),
		guarantee:    o.String("sink.delivery-guarantee"),
		mandatory:    o.Bool("sink.mandatory"),
		onCheckpoint: o.Bool("sink.publish-on-checkpoint"),
	}
	if o.IsSet("username") || o.IsSet("password") {
		c.auth = &amqp.PlainAuth{Username: uri.Username, Password: uri.Password}
		if o.IsSet("username") {
			c.auth.Username = o.String("username")
		}
		if o.IsSet("password") {
			c.auth.Password = o.String("password")
		}
	}
	for _, k := range []string{"scan.startup.mode", "scan.startup.timestamp-millis", "scan.startup.specific-offset"} {
		c.startSet = c.startSet || o.IsSet(k)
	}
	c.changelogs = changelog.InsertOnly
	format, _ := o.Format()
	switch format {
	case "debezium-json", "canal-json", "maxwell-json":
		c.changelogs = changelog.Retract
	}
	c.contentType = contentTypes[format]
	if c.bindingArgs, err = pairs(o.List("binding.arguments"), false); err != nil {
		return nil, optErr("binding.arguments", err.Error())
	}
	if c.queueArgs, err = pairs(o.List("queue.arguments"), true); err != nil {
		return nil, optErr("queue.arguments", err.Error())
	}
	if _, ok := c.queueArgs["x-queue-type"]; ok {
		return nil, optErr("queue.arguments", "sets x-queue-type; set 'queue.type' instead")
	}
	if c.headers, err = pairs(o.List("sink.headers"), false); err != nil {
		return nil, optErr("sink.headers", err.Error())
	}
	if !c.declare {
		for _, k := range []string{"queue.type", "queue.arguments"} {
			if o.IsSet(k) {
				return nil, optErr(k, "applies to the queue the connector declares, and 'queue.declare' is 'false'; remove it or set 'queue.declare' = 'true'")
			}
		}
	}
	if o.IsSet("binding.arguments") && c.exchange == "" {
		return nil, optErr("binding.arguments", "is set without 'exchange'; set the exchange to bind 'queue' to, or remove it")
	}
	if sink {
		return c, c.checkSink(o)
	}
	return c, c.checkSource(o)
}

// contentTypes are the content types of the messages of each format.
var contentTypes = map[string]string{
	"json":           "application/json",
	"csv":            "text/csv",
	"raw":            "application/octet-stream",
	"avro":           "avro/binary",
	"avro-confluent": "avro/binary",
	"debezium-json":  "application/json",
	"canal-json":     "application/json",
	"maxwell-json":   "application/json",
}

// pairs parses key=value pairs; typed says whether integers and booleans
// are sent as such (queue arguments) rather than as strings.
func pairs(list []string, typed bool) (amqp.Table, error) {
	if len(list) == 0 {
		return nil, nil
	}
	t := amqp.Table{}
	for _, p := range list {
		k, v, ok := strings.Cut(p, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("has '%s', which is not key=value; write comma-separated pairs ('x-match=all,region=eu')", p)
		}
		if _, dup := t[k]; dup {
			return nil, fmt.Errorf("sets '%s' twice; keep one", k)
		}
		var val any = v
		if typed {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				val = n
			} else if b, err := strconv.ParseBool(v); err == nil && (v == "true" || v == "false") {
				val = b
			}
		}
		t[k] = val
	}
	return t, nil
}

func (c *config) checkSource(o connector.Options) error {
	for _, k := range sinkOnly {
		if o.IsSet(k) {
			return optErr(k, "is an option of sinks; remove it from the source's options")
		}
	}
	if c.queue == "" {
		return optErr("queue", "is required for a source: set the queue (or stream queue) to read; with 'exchange' the source binds it to that exchange")
	}
	if c.exchange == "" && o.IsSet("routing-key") {
		return optErr("routing-key", "is the key of the binding of 'queue' to 'exchange', and 'exchange' is not set; set it or remove 'routing-key'")
	}
	if c.startMode == timestamp && !o.IsSet("scan.startup.timestamp-millis") {
		return optErr("scan.startup.timestamp-millis", "is required with 'scan.startup.mode' = 'timestamp'")
	}
	if c.startMode == specific && !o.IsSet("scan.startup.specific-offset") {
		return optErr("scan.startup.specific-offset", "is required with 'scan.startup.mode' = 'specific-offset'")
	}
	if o.IsSet("scan.startup.timestamp-millis") && c.startMode != timestamp {
		return optErr("scan.startup.timestamp-millis", "is set but 'scan.startup.mode' is not 'timestamp'; set the mode or remove the option")
	}
	if o.IsSet("scan.startup.specific-offset") && c.startMode != specific {
		return optErr("scan.startup.specific-offset", "is set but 'scan.startup.mode' is not 'specific-offset'; set the mode or remove the option")
	}
	if c.declare && o.IsSet("queue.type") {
		if c.queueType == stream && c.dedup {
			return optErr("scan.deduplication", "applies to classic and quorum queues; a stream queue is read exactly once from its offsets: remove it")
		}
		if c.queueType != stream && c.startSet {
			return optErr("scan.startup.mode", fmt.Sprintf("applies to stream queues, and 'queue.type' is '%s': a %s queue is read from its head; remove the startup options", c.queueType, c.queueType))
		}
	}
	return nil
}

func (c *config) checkSink(o connector.Options) error {
	for _, k := range sourceOnly {
		if o.IsSet(k) {
			return optErr(k, "is an option of sources; remove it from the sink's options")
		}
	}
	if c.queue == "" && c.exchange == "" {
		return optErr("queue", "or 'exchange' is required for a sink: set the queue to publish to, or the exchange (and 'routing-key')")
	}
	if c.exchange == "" {
		if o.IsSet("routing-key") && c.routingKey != c.queue {
			return optErr("routing-key", fmt.Sprintf("= '%s' with the default exchange would route to another queue than 'queue' = '%s'; set 'exchange', or remove 'routing-key'", c.routingKey, c.queue))
		}
		c.routingKey = c.queue
	}
	if c.guarantee == noGuarantee && c.onCheckpoint {
		return optErr("sink.publish-on-checkpoint", "publishes the records of completed checkpoints with publisher confirms, and 'sink.delivery-guarantee' is 'none'; remove it or set 'at-least-once'")
	}
	if c.guarantee == noGuarantee && o.IsSet("sink.mandatory") {
		return optErr("sink.mandatory", "needs publisher confirms to report messages no queue takes, and 'sink.delivery-guarantee' is 'none'; remove it or set 'at-least-once'")
	}
	return nil
}

type factory struct{}

func (factory) Spec() connector.Spec { return spec }

func (factory) NewSource(ctx connector.Context) (any, error) {
	c, err := configOf(ctx, false)
	if err != nil {
		return nil, err
	}
	if ctx.Table != nil {
		newDec, err := newTableDecoding(c, ctx)
		if err != nil {
			return nil, err
		}
		return newTableSource(c, ctx.Table, newDec), nil
	}
	newDec, err := connector.DecoderMaker[any](ctx)
	if err != nil {
		return nil, err
	}
	return &source[any]{cfg: c, newDecoder: newDec}, nil
}

func (factory) NewSink(ctx connector.Context) (any, error) {
	c, err := configOf(ctx, true)
	if err != nil {
		return nil, err
	}
	if ctx.Table != nil {
		newEnc, err := connector.EncoderMaker[connector.TableRecord](ctx)
		if err != nil {
			return nil, err
		}
		return newSink(c, newEnc), nil
	}
	newEnc, err := connector.EncoderMaker[any](ctx)
	if err != nil {
		return nil, err
	}
	return newSink(c, newEnc), nil
}

func init() { connector.Register(factory{}) }
