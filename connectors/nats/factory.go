// Package nats is eddy's NATS connector: a source and a sink of NATS
// JetStream streams and of core NATS subjects, with the messages in one of
// eddy's formats. It registers as "nats".
//
// With 'stream' set, the source reads the stream through ordered consumers
// that keep no state on the server: each split is the stream (or one of its
// subject filters), and its position, the stream sequence of the last
// message emitted, travels in eddy's checkpoints, so a restored job resumes
// at the next sequence: exactly once. The sink keeps the records of a
// checkpoint interval in the checkpoint and publishes them once the
// checkpoint completes, each with a Nats-Msg-Id fixed when the record was
// written, so that a publication repeated after a failure is dropped by the
// stream's duplicate window: exactly once within that window. With
// 'consumer', each split also has a durable consumer that the readers move
// to the split's position at every completed checkpoint (durable.go).
//
// Without 'stream', the source subscribes to core NATS subjects and the
// sink publishes to one: at most once, as core NATS delivers.
//
// A table's source offers the metadata columns subject, stream-sequence,
// timestamp and headers, and reads only one subject when the query's
// condition says subject = '<subject>' (connector.FilterableSource).
//
// With 'bucket', a table is a JetStream key/value bucket keyed by its
// primary key: lookup joins read it by key (connector.LookupSource), with
// no cache, a partial cache or the whole bucket in memory, kept fresh by a
// watcher of the bucket's changes; a sink writes its rows by key, and
// deletes the keys of deletions.
package nats

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	_ "github.com/eddystream/eddy/formats" // the formats of the messages
)

// Delivery guarantees of the sink.
const (
	exactlyOnce = "exactly-once"
	atLeastOnce = "at-least-once"
	atMostOnce  = "none"
)

// Startup modes of the source.
const (
	earliest  = "earliest-offset"
	latest    = "latest-offset"
	timestamp = "timestamp"
	specific  = "specific-offset"
)

var spec = connector.Spec{
	Name: "nats",
	Kind: connector.SourceKind | connector.SinkKind,
	Description: "Reads and writes NATS. With 'stream': a JetStream stream, read from a checkpointed stream sequence (exactly once, no consumer state on the server) " +
		"and written exactly once within the stream's duplicate window (each checkpoint's records published when it completes, with deterministic Nats-Msg-Id headers). " +
		"Without: core NATS subjects, read (with wildcards) and written at most once. " +
		"With 'bucket': a key/value bucket, looked up by key in lookup joins (optionally cached, kept fresh by a watcher) and written by key.",
	Formats: []string{"json", "csv", "raw", "avro", "avro-confluent", "debezium-json", "canal-json", "maxwell-json"},
	Options: append([]connector.Option{
		{Key: "url", Type: connector.String, Default: "nats://127.0.0.1:4222",
			Description: "The NATS servers: one URL or several, comma-separated ('nats://a:4222,nats://b:4222'); 'tls://' for TLS.",
			Check:       checkURLs},
		{Key: "subject", Type: connector.List,
			Description: "Sources: the subjects to read, comma-separated, with wildcards ('orders.*', 'orders.>'); required without 'stream', and with it filters of the stream (each one a split; by default the whole stream). Sinks: the one subject to publish to, without wildcards (required)."},
		{Key: "stream", Type: connector.String,
			Description: "The JetStream stream to read or write; without it the connector uses core NATS subjects, at most once.",
			Check: func(v string) error {
				if strings.ContainsAny(v, " .*>\t") {
					return fmt.Errorf("a stream name has no spaces, dots or wildcards")
				}
				return nil
			}},
		{Key: "consumer", Type: connector.String, Check: checkConsumerName,
			Description: "JetStream sources: the name of a durable pull consumer (created if missing; with several 'subject' filters, one per filter, named <consumer>-1, <consumer>-2, ...) that the source moves to its position at every completed checkpoint (nats-server 2.14 or later): its ack floor shows the job's progress, it holds the stream's messages the job still needs under interest retention, and a job started without a checkpoint resumes where it is (instead of at 'scan.startup.mode', which applies when it does not exist yet). The source still reads through ordered consumers and restores from its checkpoints."},
		{Key: "scan.startup.mode", Type: connector.Enum, Default: earliest, Values: []string{earliest, latest, timestamp, specific},
			Description: "JetStream sources: where a job's first run starts reading: 'earliest-offset' the first message of the stream, 'latest-offset' after its last message, 'timestamp' the first message stored at or after 'scan.startup.timestamp-millis', 'specific-offset' the stream sequence 'scan.startup.specific-offset'. A restored job resumes where its checkpoint says."},
		{Key: "scan.startup.timestamp-millis", Type: connector.Int, Check: connector.NonNegative,
			Description: "JetStream sources with 'scan.startup.mode' = 'timestamp': the time (milliseconds since the Unix epoch) to start reading at."},
		{Key: "scan.startup.specific-offset", Type: connector.Int, Check: connector.Positive,
			Description: "JetStream sources with 'scan.startup.mode' = 'specific-offset': the stream sequence to start reading at."},
		{Key: "scan.bounded.mode", Type: connector.Enum, Default: "unbounded", Values: []string{"unbounded", latest},
			Description: "JetStream sources: 'unbounded' keeps reading new messages; 'latest-offset' reads up to the last message the stream (or the subject filter) holds when the job first starts, and ends."},
		{Key: "username", Type: connector.String, Description: "The user to connect as, with 'password'."},
		{Key: "password", Type: connector.String, Secret: true, Description: "The password of 'username'."},
		{Key: "token", Type: connector.String, Secret: true, Description: "A token to authenticate with."},
		{Key: "creds-file", Type: connector.String, Description: "A credentials file (a user JWT and its NKey seed) to authenticate with."},
		{Key: "sink.delivery-guarantee", Type: connector.Enum, Values: []string{exactlyOnce, atLeastOnce, atMostOnce},
			Description: "Sinks: 'exactly-once' (the default with 'stream'; needs checkpointing): each checkpoint's records are published when it completes, with Nats-Msg-Id headers the stream's duplicate window deduplicates; " +
				"'at-least-once' (the default with 'bucket'): published as they come and acknowledged by the stream at every checkpoint, repeated after a failure; " +
				"'none' (the only choice, and the default, with core subjects): published without waiting for acknowledgements."},
	}, bucketOptions...),
}

// checkURLs checks the 'url' option: NATS URLs or host:port pairs.
func checkURLs(v string) error {
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			return fmt.Errorf("an empty server in the list; write 'nats://host:4222' or several, comma-separated")
		}
		if !strings.Contains(p, "://") {
			p = "nats://" + p
		}
		u, err := url.Parse(p)
		if err != nil {
			return fmt.Errorf("a server is not a URL; write 'nats://host:4222'")
		}
		switch u.Scheme {
		case "nats", "tls", "ws", "wss":
		default:
			return fmt.Errorf("scheme %q is not one of nats, tls, ws, wss", u.Scheme)
		}
		if u.Host == "" {
			return fmt.Errorf("a server has no host; write 'nats://host:4222'")
		}
	}
	return nil
}

// config is what the connector's options say.
type config struct {
	name       string // of the table or operator, for errors
	urls       string
	subjects   []string
	stream     string
	startMode  string
	startTime  int64
	startSeq   uint64
	bounded    bool
	username   string
	password   string
	token      string
	credsFile  string
	guarantee  string
	changelogs changelog.Mode
	consumer   string // the durable consumer, if any

	// Buckets ('bucket' set).
	bucket        string
	cache         string // 'lookup.cache'
	cacheRows     int64  // 0: no bound
	expireWrite   time.Duration
	expireAccess  time.Duration
	cacheMissing  bool
	watch         bool
	lookupRetries int
}

func optErr(key, problem string) error {
	return &connector.OptionError{Connector: spec.Name, Key: key, Problem: problem}
}

// configOf reads the options of ctx; sink says whether it configures a
// sink (or a source).
func configOf(ctx connector.Context, sink bool) (*config, error) {
	o := ctx.Options
	c := &config{
		name:      ctx.Name,
		urls:      o.String("url"),
		subjects:  o.List("subject"),
		stream:    o.String("stream"),
		startMode: o.String("scan.startup.mode"),
		startTime: o.Int("scan.startup.timestamp-millis"),
		startSeq:  uint64(o.Int("scan.startup.specific-offset")),
		bounded:   o.String("scan.bounded.mode") == latest,
		username:  o.String("username"),
		password:  o.String("password"),
		token:     o.String("token"),
		credsFile: o.String("creds-file"),
		guarantee: o.String("sink.delivery-guarantee"),
		bucket:    o.String("bucket"),
		consumer:  o.String("consumer"),
	}
	c.changelogs = changelog.InsertOnly
	switch f, _ := o.Format(); f {
	case "debezium-json", "canal-json", "maxwell-json":
		c.changelogs = changelog.Retract
	}
	if o.IsSet("password") && c.username == "" {
		return nil, optErr("password", "is set without 'username'; set both")
	}
	if c.username != "" && c.token != "" {
		return nil, optErr("token", "is set with 'username'; authenticate with one of them")
	}
	if c.bucket != "" {
		return c, c.checkBucket(o, sink)
	}
	if err := checkNoBucketOptions(o); err != nil {
		return nil, err
	}
	if sink {
		return c, c.checkSink(o)
	}
	return c, c.checkSource(o)
}

func (c *config) checkSource(o connector.Options) error {
	if o.IsSet("sink.delivery-guarantee") {
		return optErr("sink.delivery-guarantee", "is an option of sinks; remove it from the source's options")
	}
	for _, s := range c.subjects {
		if err := checkSubject(s, true); err != nil {
			return optErr("subject", err.Error())
		}
	}
	for i, a := range c.subjects {
		for _, b := range c.subjects[i+1:] {
			if subjectsOverlap(a, b) {
				return optErr("subject", fmt.Sprintf("lists '%s' and '%s', which some subject matches both: each message of such a subject would be read twice; list filters no subject matches twice (drop one, or narrow a wildcard)", a, b))
			}
		}
	}
	if c.stream == "" {
		if len(c.subjects) == 0 {
			return optErr("subject", "is required without 'stream': set the core NATS subjects to read, or a JetStream 'stream'")
		}
		for _, k := range []string{"scan.startup.mode", "scan.startup.timestamp-millis", "scan.startup.specific-offset", "scan.bounded.mode", "consumer"} {
			if o.IsSet(k) {
				return optErr(k, "needs a JetStream 'stream': a core NATS subscription only receives what is published while it runs; set 'stream' or remove the option")
			}
		}
		return nil
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
	return nil
}

func (c *config) checkSink(o connector.Options) error {
	for _, k := range []string{"scan.startup.mode", "scan.startup.timestamp-millis", "scan.startup.specific-offset", "scan.bounded.mode", "consumer"} {
		if o.IsSet(k) {
			return optErr(k, "is an option of sources; remove it from the sink's options")
		}
	}
	if len(c.subjects) != 1 {
		return optErr("subject", "is required for a sink and names one subject to publish to")
	}
	if err := checkSubject(c.subjects[0], false); err != nil {
		return optErr("subject", err.Error())
	}
	if c.stream == "" {
		if c.guarantee != "" && c.guarantee != atMostOnce {
			return optErr("sink.delivery-guarantee", fmt.Sprintf("= '%s' needs a JetStream 'stream' to acknowledge the messages; core NATS delivers at most once ('none')", c.guarantee))
		}
		c.guarantee = atMostOnce
	} else if c.guarantee == "" {
		c.guarantee = exactlyOnce
	}
	return nil
}

// checkSubject checks a subject; wild says whether wildcards are allowed.
func checkSubject(s string, wild bool) error {
	if s == "" || strings.ContainsAny(s, " \t\r\n") || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") || strings.Contains(s, "..") {
		return fmt.Errorf("= '%s' is not a subject: write dot-separated tokens without spaces ('orders.created')", s)
	}
	for i, tok := range strings.Split(s, ".") {
		if tok == "*" || tok == ">" {
			if !wild {
				return fmt.Errorf("= '%s' has a wildcard; a sink publishes to one subject", s)
			}
			if tok == ">" && i != strings.Count(s, ".") {
				return fmt.Errorf("= '%s' has '>' before its last token", s)
			}
		}
	}
	return nil
}

// subjectsOverlap says whether some subject matches both filters a and b:
// token by token, '*' matches any one token and a trailing '>' one or more.
func subjectsOverlap(a, b string) bool {
	at, bt := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(at) && i < len(bt); i++ {
		switch {
		case at[i] == ">" || bt[i] == ">":
			return true // the other has a token here, and '>' matches it and the rest
		case at[i] == "*" || bt[i] == "*" || at[i] == bt[i]:
		default:
			return false
		}
	}
	return len(at) == len(bt)
}

type factory struct{}

func (factory) Spec() connector.Spec { return spec }

func (factory) NewSource(ctx connector.Context) (any, error) {
	c, err := configOf(ctx, false)
	if err != nil {
		return nil, err
	}
	if c.bucket != "" {
		return newBucketSource(c, ctx)
	}
	if ctx.Table != nil {
		dec, err := c.newTableDecoding(ctx)
		if err != nil {
			return nil, err
		}
		col := -1
		for i, k := range ctx.Table.Metadata {
			if k == "subject" {
				col = ctx.Table.Schema.Len() + i
			}
		}
		return &tableSource{source: &source[connector.TableRecord]{cfg: c, table: ctx.Table, newDecoder: dec}, subjectCol: col}, nil
	}
	newDec, err := connector.DecoderMaker[any](ctx)
	if err != nil {
		return nil, err
	}
	return &source[any]{cfg: c, newDecoder: func() messageDecoder[any] {
		return plainDecoder[any]{newDec()}
	}}, nil
}

func (factory) NewSink(ctx connector.Context) (any, error) {
	c, err := configOf(ctx, true)
	if err != nil {
		return nil, err
	}
	if c.bucket != "" {
		return newBucketSink(c, ctx)
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
