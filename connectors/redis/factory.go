// Package redis is eddy's Redis Streams connector: a source and a sink of
// one stream whose entries carry a record, in one of eddy's formats, in one
// field. It registers as "redis".
//
// Without 'group', the source reads the stream with XREAD from a position
// kept in eddy's checkpoints: exactly once, with nothing on the server.
// With 'group', it reads through a consumer group (XREADGROUP), one
// consumer per split, and acknowledges entries (XACK) once the checkpoint
// that covers them completes; the checkpoint records which entries the job
// has consumed, and a restored job moves the group back to where the
// checkpoint says, so that every entry is emitted exactly once into the
// job's state, whichever checkpoint or savepoint it restores.
//
// The sink adds entries with XADD. Exactly once, it stages a checkpoint
// interval's records in a list of the transaction's own as they come, and
// moves them into the stream when the checkpoint completes, through a Lua
// script that adds a chunk's entries and sets the chunk's marker key
// together, and adds nothing if the marker exists: a commit repeated after
// a restore adds nothing twice. At least once, it adds records as they
// come, pipelined, and waits for them at every checkpoint.
package redis

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	_ "github.com/eddystream/eddy/formats" // the formats of the records
)

// Delivery guarantees of the sink.
const (
	exactlyOnce = "exactly-once"
	atLeastOnce = "at-least-once"
)

// Startup and bounded modes of the source.
const (
	groupOffsets = "group-offsets"
	earliest     = "earliest-offset"
	latest       = "latest-offset"
	timestamp    = "timestamp"
	specific     = "specific-offset"
	unbounded    = "unbounded"
)

const defaultURL = "redis://127.0.0.1:6379/0"

var spec = connector.Spec{
	Name: "redis",
	Kind: connector.SourceKind | connector.SinkKind,
	Description: "Reads and writes Redis Streams, a record in one field of each entry. Sources read exactly once: without 'group' with XREAD from a checkpointed entry id (nothing kept on the server); " +
		"with 'group' through a consumer group, one consumer per split, acknowledging entries when the checkpoint covering them completes and moving the group back to the checkpoint on a restore. " +
		"Sinks add entries with XADD: exactly once (each checkpoint's records staged in a list as they come and moved into the stream when it completes, by a Lua script that also sets a marker key per chunk, so that a repeated commit adds nothing) or at least once (pipelined).",
	Formats: []string{"json", "csv", "raw", "avro", "avro-confluent", "debezium-json", "canal-json", "maxwell-json"},
	Options: []connector.Option{
		{Key: "url", Type: connector.String, Default: defaultURL, Secret: true,
			Description: "The Redis server: 'redis://[user:password@]host:port/db' ('rediss://' for TLS, 'unix:///path/to/socket?db=0'); go-redis's URL parameters (dial_timeout, read_timeout, pool_size, …) are accepted. " +
				"Secret, since it may hold a password: errors and logs show it without the user and password.",
			Check: checkURL},
		{Key: "username", Type: connector.String,
			Description: "The ACL user to connect as, instead of the one in 'url'."},
		{Key: "password", Type: connector.String, Secret: true,
			Description: "The password to connect with, instead of the one in 'url'."},
		{Key: "stream", Type: connector.String, Required: true,
			Description: "The key of the stream to read or write.",
			Check: func(v string) error {
				if v == "" {
					return errors.New("a stream key is not empty")
				}
				return nil
			}},
		{Key: "value.field", Type: connector.String, Default: "data",
			Description: "The field of each entry that holds the record in the format. Sources treat an entry without it as malformed; sinks add entries with this one field.",
			Check: func(v string) error {
				if v == "" {
					return errors.New("a field name is not empty")
				}
				return nil
			}},
		{Key: "group", Type: connector.String,
			Description: "Sources: the consumer group to read through (created, with the stream, when missing). It belongs to the job: no other application should read it with XREADGROUP, and two jobs need two groups. Without it the source reads with XREAD and keeps its position in the checkpoint only."},
		{Key: "group.consumer-prefix", Type: connector.String, Default: "eddy",
			Description: "Sources with 'group': the consumers are named '<prefix>-<n>', one per split (the job's parallelism when it first starts).",
			Check: func(v string) error {
				if v == "" || strings.ContainsAny(v, " \t\r\n") {
					return errors.New("a consumer name prefix is not empty and has no spaces")
				}
				return nil
			}},
		{Key: "scan.startup.mode", Type: connector.Enum, Values: []string{groupOffsets, earliest, latest, timestamp, specific},
			Description: "Sources: where a job's first run starts reading. 'group-offsets' (the default with 'group'): an existing group's pending entries, then the entries after its last delivered one; a missing group is created at the start of the stream. " +
				"'earliest-offset' (the default without 'group'): the first entry of the stream; 'latest-offset': after its last entry; 'timestamp': the first entry added at or after 'scan.startup.timestamp-millis'; 'specific-offset': the entry id 'scan.startup.specific-offset'. " +
				"With 'group' these four set the group to that position. A restored job resumes where its checkpoint says."},
		{Key: "scan.startup.timestamp-millis", Type: connector.Int, Check: connector.NonNegative,
			Description: "Sources with 'scan.startup.mode' = 'timestamp': the time (milliseconds since the Unix epoch) to start reading at."},
		{Key: "scan.startup.specific-offset", Type: connector.String,
			Description: "Sources with 'scan.startup.mode' = 'specific-offset': the id of the entry to start reading at ('1700000000000-0'; 'milliseconds' alone means '-0').",
			Check: func(v string) error {
				_, err := parseID(strings.TrimSpace(v))
				return err
			}},
		{Key: "scan.bounded.mode", Type: connector.Enum, Default: unbounded, Values: []string{unbounded, latest},
			Description: "Sources without 'group': 'unbounded' keeps reading new entries; 'latest-offset' reads up to the last entry the stream holds when the job first starts, and ends."},
		{Key: "scan.fetch-size", Type: connector.Int, Default: "1000", Check: connector.Positive,
			Description: "Sources: how many entries one XREAD or XREADGROUP fetches at most."},
		{Key: "sink.delivery-guarantee", Type: connector.Enum, Default: exactlyOnce, Values: []string{exactlyOnce, atLeastOnce},
			Description: "Sinks: 'exactly-once' (needs checkpointing, and Redis 7) stages each checkpoint interval's records in a list and moves them into the stream when the checkpoint completes, in Lua scripts that set a marker key per transaction chunk and add the chunk's entries only if the marker was not there; " +
				"'at-least-once' adds records as they come, pipelined, waits for them at every checkpoint, and adds the records since the last checkpoint again after a failure."},
		{Key: "sink.max-len", Type: connector.Int, Check: connector.Positive,
			Description: "Sinks: trim the stream to about this many entries as entries are added (XADD MAXLEN ~); by default the stream is not trimmed."},
		{Key: "sink.batch-size", Type: connector.Int, Default: "500", Check: connector.Positive,
			Description: "Sinks: how many entries one pipeline (at-least-once) or one script call (exactly-once, added atomically with its marker) adds at most."},
		{Key: "sink.transaction.marker-ttl", Type: connector.Duration, Default: "7 d",
			Description: "Sinks with 'exactly-once': how long the marker keys of committed chunks, and the lists of staged records, live. Keep it longer than the age of the oldest checkpoint or savepoint you may restore: a commit whose markers and staged records are gone adds nothing (and logs a warning).",
			Check: func(v string) error {
				d, err := connector.ParseDuration(v)
				if err == nil && d < time.Millisecond {
					return errors.New("want at least 1 ms")
				}
				return nil
			}},
		{Key: "sink.transaction.marker-prefix", Type: connector.String, Default: "eddy:txn:",
			Description: "Sinks with 'exactly-once': the prefix of the keys of the transactions: their staged records, '<prefix><stream>:<transaction>:staged', and the markers of their chunks, '<prefix><stream>:<transaction>:<chunk>'."},
	},
}

// checkURL checks the 'url' option without quoting it: it may hold a
// password.
func checkURL(v string) error {
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the URL
		}
		return fmt.Errorf("not a URL (%v); write 'redis://host:6379/0'", err)
	}
	switch u.Scheme {
	case "redis", "rediss":
		if u.Host == "" {
			return errors.New("has no host; write 'redis://host:6379/0'")
		}
	case "unix":
		if u.Path == "" {
			return errors.New("has no socket path; write 'unix:///path/to/redis.sock?db=0'")
		}
	default:
		return errors.New("the scheme is not redis://, rediss:// or unix://; write 'redis://host:6379/0'")
	}
	if _, err := parseURL(v); err != nil {
		return err
	}
	return nil
}

// config is what the connector's options say.
type config struct {
	name         string // of the table or operator, for errors
	url          string
	username     string
	password     string
	stream       string
	field        string
	group        string
	prefix       string
	startMode    string
	startTime    int64
	startID      entryID
	bounded      bool
	fetchSize    int64
	guarantee    string
	maxLen       int64
	batchSize    int
	markerTTL    int64 // milliseconds
	markerPrefix string
	changelogs   changelog.Mode
}

func optErr(key, problem string) error {
	return &connector.OptionError{Connector: spec.Name, Key: key, Problem: problem}
}

// sourceOnly and sinkOnly are the options of one side.
var (
	sourceOnly = []string{"group", "group.consumer-prefix", "scan.startup.mode", "scan.startup.timestamp-millis", "scan.startup.specific-offset", "scan.bounded.mode", "scan.fetch-size"}
	sinkOnly   = []string{"sink.delivery-guarantee", "sink.max-len", "sink.batch-size", "sink.transaction.marker-ttl", "sink.transaction.marker-prefix"}
)

// configOf reads the options of ctx; sink says whether it configures a
// sink (or a source).
func configOf(ctx connector.Context, sink bool) (*config, error) {
	o := ctx.Options
	c := &config{
		name:         ctx.Name,
		url:          strings.TrimSpace(o.String("url")),
		username:     o.String("username"),
		password:     o.String("password"),
		stream:       o.String("stream"),
		field:        o.String("value.field"),
		group:        o.String("group"),
		prefix:       o.String("group.consumer-prefix"),
		startMode:    o.String("scan.startup.mode"),
		startTime:    o.Int("scan.startup.timestamp-millis"),
		bounded:      o.String("scan.bounded.mode") == latest,
		fetchSize:    o.Int("scan.fetch-size"),
		guarantee:    o.String("sink.delivery-guarantee"),
		maxLen:       o.Int("sink.max-len"),
		batchSize:    int(o.Int("sink.batch-size")),
		markerTTL:    o.Duration("sink.transaction.marker-ttl").Milliseconds(),
		markerPrefix: o.String("sink.transaction.marker-prefix"),
	}
	if o.IsSet("scan.startup.specific-offset") {
		c.startID, _ = parseID(strings.TrimSpace(o.String("scan.startup.specific-offset")))
	}
	c.changelogs = changelog.InsertOnly
	switch f, _ := o.Format(); f {
	case "debezium-json", "canal-json", "maxwell-json":
		c.changelogs = changelog.Retract
	}
	if sink {
		for _, k := range sourceOnly {
			if o.IsSet(k) {
				return nil, optErr(k, "is an option of sources; remove it from the sink's options")
			}
		}
		return c, nil
	}
	for _, k := range sinkOnly {
		if o.IsSet(k) {
			return nil, optErr(k, "is an option of sinks; remove it from the source's options")
		}
	}
	return c, c.checkSource(o)
}

func (c *config) checkSource(o connector.Options) error {
	if c.group == "" {
		if c.startMode == "" {
			c.startMode = earliest
		}
		if c.startMode == groupOffsets {
			return optErr("scan.startup.mode", "= 'group-offsets' needs a consumer 'group'; set 'group' or choose another mode")
		}
		if o.IsSet("group.consumer-prefix") {
			return optErr("group.consumer-prefix", "names the consumers of a 'group'; set 'group' or remove the option")
		}
	} else {
		if c.startMode == "" {
			c.startMode = groupOffsets
		}
		if c.bounded {
			return optErr("scan.bounded.mode", "= 'latest-offset' reads without a consumer group: a group is read until the job is cancelled; remove 'group' or the option")
		}
		if strings.ContainsAny(c.group, " \t\r\n") {
			return optErr("group", "has white space; name the group without it")
		}
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

// startAfter returns the id after which a fresh read starts, for the
// modes that name one (not 'latest-offset' and 'group-offsets').
func (c *config) startAfter() entryID {
	switch c.startMode {
	case timestamp:
		return entryID{ms: uint64(c.startTime)}.prev()
	case specific:
		return c.startID.prev()
	}
	return entryID{}
}

type factory struct{}

func (factory) Spec() connector.Spec { return spec }

func (factory) NewSource(ctx connector.Context) (any, error) {
	c, err := configOf(ctx, false)
	if err != nil {
		return nil, err
	}
	if ctx.Table != nil {
		newDec, err := tableDecoderOf(c, ctx)
		if err != nil {
			return nil, err
		}
		return &source[connector.TableRecord]{cfg: c, newDecoder: newDec}, nil
	}
	newDec, err := connector.DecoderMaker[any](ctx)
	if err != nil {
		return nil, err
	}
	return &source[any]{cfg: c, newDecoder: func(*entryMeta) connector.Decoder[any] {
		return newDec()
	}}, nil
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
