package subscribe

import (
	"fmt"
	"strings"

	natsgo "github.com/nats-io/nats.go"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	_ "github.com/eddystream/eddy/connectors/nats" // the sink of durable tables
)

var spec = connector.Spec{
	Name: "publish",
	Kind: connector.SinkKind,
	Description: "Publishes a table of a running job for clients to subscribe to, with an optional SQL condition, over HTTP (Server-Sent Events at /v1/subscriptions/<name>/events on the job's REST address) and over NATS ('serve.nats-url'). " +
		"Without 'stream' the process keeps the latest events ('retain') and delivers them as they are written: after a failure the changes since the last checkpoint are published again, and a subscriber that falls 'subscriber.queue-size' events behind is cut off with a message saying where to resume. " +
		"With 'stream' the table is written exactly once to that JetStream stream and subscribers read the stream: they resume after any position it keeps, across restarts of the job, and are never cut off.",
	Options: []connector.Option{
		{Key: "name", Type: connector.String,
			Description: "The name subscribers use; by default the table's name. Letters, digits, '_' and '-'.",
			Check:       checkNameOption},
		{Key: "retain", Type: connector.Int, Default: "10000", Check: connector.Positive,
			Description: "Without 'stream': how many of the latest events are kept for subscribers that resume after a position."},
		{Key: "subscriber.queue-size", Type: connector.Int, Default: "10000", Check: connector.Positive,
			Description: "Without 'stream': how many events a subscriber may fall behind before it is cut off, so that no subscriber slows the job."},
		{Key: "serve.nats-url", Type: connector.String,
			Description: "Also serve subscriptions over the NATS servers at this URL (requests on '<prefix>.advertise', '<prefix>.subscribe.<name>', '<prefix>.renew.<id>', '<prefix>.unsubscribe.<id>')."},
		{Key: "serve.nats-prefix", Type: connector.String, Default: "eddy",
			Description: "The subject prefix of 'serve.nats-url'."},
		{Key: "stream", Type: connector.String,
			Description: "A JetStream stream (which must exist) to back the table with: the job writes its changes there (debezium-json, or json for an insert-only table) and subscribers read them."},
		{Key: "url", Type: connector.String, Default: "nats://127.0.0.1:4222",
			Description: "With 'stream': the NATS servers of the stream, comma-separated."},
		{Key: "subject", Type: connector.String,
			Description: "With 'stream': the subject the changes are published to, one of the stream's; by default 'eddy.tables.<name>'."},
		{Key: "sink.delivery-guarantee", Type: connector.Enum, Default: "exactly-once", Values: []string{"exactly-once", "at-least-once", "none"},
			Description: "With 'stream': as the nats connector's: 'exactly-once' publishes each checkpoint's changes when it completes, with deterministic message ids."},
		{Key: "changelog-mode", Type: connector.Enum, Default: "all", Values: []string{"all", "upsert", "insert-only"},
			Description: "The kinds of change the table's events carry, as subscribers are told: 'all' (+I, -U, +U, -D), 'upsert' (+I, +U, -D by the primary key) or 'insert-only'. With 'insert-only' a stream holds json rows, otherwise debezium-json changes."},
		{Key: "username", Type: connector.String, Description: "With 'stream' or 'serve.nats-url': the NATS user, with 'password'."},
		{Key: "password", Type: connector.String, Secret: true, Description: "The password of 'username'."},
		{Key: "token", Type: connector.String, Secret: true, Description: "A NATS token to authenticate with."},
		{Key: "creds-file", Type: connector.String, Description: "A NATS credentials file (a user JWT and its NKey seed)."},
	},
}

type factory struct{}

func (factory) Spec() connector.Spec { return spec }

// config is a publish table's configuration.
type config struct {
	hub      *Hub
	name     string
	table    *connector.Table
	topic    TopicOptions
	serveURL string
	prefix   string
	stream   StreamOptions
	natsOpts []natsgo.Option
}

func (factory) NewSink(ctx connector.Context) (any, error) {
	if ctx.Table == nil {
		return nil, fmt.Errorf("publish %q: the connector publishes tables of eddy's SQL; in Go, publish with subscribe.Default.Publish and Topic.Publish", ctx.Name)
	}
	o := ctx.Options
	cfg := &config{hub: Default, table: ctx.Table, name: o.String("name"), serveURL: o.String("serve.nats-url"), prefix: o.String("serve.nats-prefix")}
	if cfg.name == "" {
		cfg.name = ctx.Table.Name
		if err := checkName(cfg.name); err != nil {
			return nil, fmt.Errorf("publish %q: %w; give the table a name subscribers can use with 'name'", ctx.Name, err)
		}
	}
	cfg.topic = TopicOptions{PrimaryKey: ctx.Table.PrimaryKey, Retain: int(o.Int("retain")), QueueSize: int(o.Int("subscriber.queue-size"))}
	// eddy writes the changes of a table with a primary key as upserts
	// (+U without -U): that is what its subscribers are told by default,
	// and 'all' would tell them of -U they never get.
	keyed := len(ctx.Table.PrimaryKey) > 0
	mode := o.String("changelog-mode")
	if keyed && !o.IsSet("changelog-mode") {
		mode = "upsert"
	}
	switch mode {
	case "insert-only":
		cfg.topic.Changelog = changelog.InsertOnly
	case "upsert":
		if !keyed {
			return nil, fmt.Errorf("publish %q: 'changelog-mode' = 'upsert' needs a primary key: declare PRIMARY KEY (...) NOT ENFORCED, or use 'all'", ctx.Name)
		}
		cfg.topic.Changelog = changelog.Upsert
	default:
		if keyed {
			return nil, fmt.Errorf("publish %q: 'changelog-mode' = 'all' with a PRIMARY KEY: eddy writes the changes of a table with a key as upserts (+I, +U and -D by the key, without -U), so its subscribers would be told of changes they never get; set 'changelog-mode' = 'upsert' (the default with a key), or drop the key", ctx.Name)
		}
		cfg.topic.Changelog = changelog.Retract
	}
	stream := o.String("stream")
	if err := checkOptionsApply(ctx.Name, o, stream != "", cfg.serveURL != ""); err != nil {
		return nil, err
	}
	if u, p := o.String("username"), o.String("password"); u != "" {
		cfg.natsOpts = append(cfg.natsOpts, natsgo.UserInfo(u, p))
	}
	if tok := o.String("token"); tok != "" {
		cfg.natsOpts = append(cfg.natsOpts, natsgo.Token(tok))
	}
	if f := o.String("creds-file"); f != "" {
		cfg.natsOpts = append(cfg.natsOpts, natsgo.UserCredentials(f))
	}
	if stream == "" {
		return &memorySink{cfg: cfg}, nil
	}
	subject := o.String("subject")
	if subject == "" {
		subject = "eddy.tables." + cfg.name
	}
	cfg.stream = StreamOptions{URL: o.String("url"), Stream: stream, Subject: subject, Changes: cfg.topic.Changelog != changelog.InsertOnly, Options: cfg.natsOpts}
	format := "debezium-json"
	if !cfg.stream.Changes {
		format = "json"
	}
	natsOpts := map[string]string{"url": cfg.stream.URL, "stream": stream, "subject": subject, "format": format,
		"sink.delivery-guarantee": o.String("sink.delivery-guarantee")}
	for _, k := range []string{"username", "password", "token", "creds-file"} {
		if o.IsSet(k) {
			natsOpts[k] = o.String(k)
		}
	}
	inner, err := connector.OpenTableSink(ctx.Registry, "nats", natsOpts, ctx.Table)
	if err != nil {
		return nil, fmt.Errorf("publish %q: %w", ctx.Name, err)
	}
	if tx, ok := inner.(connector.TransactionalSink[connector.TableRecord]); ok {
		return &durableTxSink{durableSink{cfg: cfg, inner: inner}, tx}, nil
	}
	return &durableSink{cfg: cfg, inner: inner}, nil
}

// publish publishes the table in the hub (once per writer; release
// releases it) and serves the hub over NATS if asked, for as long as the
// table is published.
func (c *config) publish(durable bool) (t *Topic, release func(), err error) {
	if durable {
		t, err = c.hub.PublishStream(c.name, c.table.Schema, c.stream, c.topic)
	} else {
		t, err = c.hub.Publish(c.name, c.table.Schema, c.topic)
	}
	if err != nil {
		return nil, nil, err
	}
	if c.serveURL != "" {
		if err := t.serveNATS(c.serveURL, c.prefix, c.natsOpts...); err != nil {
			t.Close()
			return nil, nil, err
		}
	}
	return t, t.Close, nil
}

// checkOptionsApply refuses the options that the other options make
// pointless, which would otherwise be ignored: those of a stream without
// 'stream', those of a table kept in the process with it, and those of
// NATS connections where there is none.
func checkOptionsApply(table string, o connector.Options, durable, served bool) error {
	if durable {
		for _, k := range []string{"retain", "subscriber.queue-size"} {
			if o.IsSet(k) {
				return fmt.Errorf("publish %q: option '%s' applies to a table kept in the process: with 'stream' the stream's limits decide what is kept, and no subscriber is cut off; remove it", table, k)
			}
		}
	} else {
		for _, k := range []string{"url", "subject", "sink.delivery-guarantee"} {
			if o.IsSet(k) {
				return fmt.Errorf("publish %q: option '%s' applies to a table backed by a stream: set 'stream' too, or remove it (subscriptions over NATS are served at 'serve.nats-url')", table, k)
			}
		}
	}
	if o.IsSet("serve.nats-prefix") && !served {
		return fmt.Errorf("publish %q: option 'serve.nats-prefix' applies with 'serve.nats-url': set the URL too, or remove the prefix", table)
	}
	if !durable && !served {
		for _, k := range []string{"username", "password", "token", "creds-file"} {
			if o.IsSet(k) {
				return fmt.Errorf("publish %q: option '%s' applies with 'stream' or 'serve.nats-url', to authenticate to NATS; set one of them, or remove it", table, k)
			}
		}
	}
	if o.IsSet("password") && !o.IsSet("username") {
		return fmt.Errorf("publish %q: option 'password' goes with 'username': set the user too, or authenticate with 'token' or 'creds-file'", table)
	}
	return nil
}

// memorySink publishes a table's changes in the process, as they are
// written.
type memorySink struct{ cfg *config }

// ChangelogMode is the table's 'changelog-mode': the planner refuses a
// query whose changes it does not include, and writes upserts to an
// upsert table.
func (s *memorySink) ChangelogMode() changelog.Mode { return s.cfg.topic.Changelog }

func (s *memorySink) NewWriter(ctx connector.WriterContext) (connector.Writer[connector.TableRecord], error) {
	t, release, err := s.cfg.publish(false)
	if err != nil {
		return nil, err
	}
	return &memoryWriter{t: t, release: release}, nil
}

type memoryWriter struct {
	t       *Topic
	release func()
}

func (w *memoryWriter) Write(records []connector.TableRecord, _ []int64) error {
	for _, r := range records {
		if err := w.t.Publish(r.Kind, r.Row); err != nil {
			return err
		}
	}
	return nil
}

func (w *memoryWriter) Flush() error { return nil }

func (w *memoryWriter) Close() error {
	w.release()
	return nil
}

// durableSink writes a table's changes to its stream with the nats
// connector's sink, and publishes the table when its first writer starts.
type durableSink struct {
	cfg   *config
	inner connector.Sink[connector.TableRecord]
}

// ChangelogMode is the nats sink's for the stream's format.
func (s *durableSink) ChangelogMode() changelog.Mode {
	if m, ok := s.inner.(connector.ChangelogSink); ok {
		return m.ChangelogMode()
	}
	return changelog.Retract
}

func (s *durableSink) NewWriter(ctx connector.WriterContext) (connector.Writer[connector.TableRecord], error) {
	_, release, err := s.cfg.publish(true)
	if err != nil {
		return nil, err
	}
	w, err := s.inner.NewWriter(ctx)
	if err != nil {
		release()
		return nil, err
	}
	return &releasingWriter{Writer: w, release: release}, nil
}

// releasingWriter releases its table when it closes.
type releasingWriter struct {
	connector.Writer[connector.TableRecord]
	release func()
}

func (w *releasingWriter) Close() error {
	defer w.release()
	return w.Writer.Close()
}

// NotifyCheckpointComplete, ProcessWatermark and RetainsNoRecords answer
// as the nats writer does: the embedded interface does not carry them.
func (w *releasingWriter) NotifyCheckpointComplete(id int64) error {
	return connector.NotifyIfListening(w.Writer, id)
}

func (w *releasingWriter) ProcessWatermark(wm int64) error {
	return connector.PassWatermark(w.Writer, wm)
}

func (w *releasingWriter) RetainsNoRecords() bool { return connector.RetainsNoRecords(w.Writer) }

// durableTxSink is a durableSink whose stream is written exactly once.
type durableTxSink struct {
	durableSink
	tx connector.TransactionalSink[connector.TableRecord]
}

func (s *durableTxSink) NewTransactionalWriter(ctx connector.WriterContext) (connector.TransactionalWriter[connector.TableRecord], error) {
	_, release, err := s.cfg.publish(true)
	if err != nil {
		return nil, err
	}
	w, err := s.tx.NewTransactionalWriter(ctx)
	if err != nil {
		release()
		return nil, err
	}
	return &releasingTxWriter{TransactionalWriter: w, release: release}, nil
}

// releasingTxWriter releases its table when it closes.
type releasingTxWriter struct {
	connector.TransactionalWriter[connector.TableRecord]
	release func()
}

func (w *releasingTxWriter) Close() error {
	defer w.release()
	return w.TransactionalWriter.Close()
}

// NotifyCheckpointComplete, ProcessWatermark and RetainsNoRecords answer
// as the nats writer does (see releasingWriter).
func (w *releasingTxWriter) NotifyCheckpointComplete(id int64) error {
	return connector.NotifyIfListening(w.TransactionalWriter, id)
}

func (w *releasingTxWriter) ProcessWatermark(wm int64) error {
	return connector.PassWatermark(w.TransactionalWriter, wm)
}

func (w *releasingTxWriter) RetainsNoRecords() bool {
	return connector.RetainsNoRecords(w.TransactionalWriter)
}

// checkNameOption adapts checkName to an option's check, without the
// package prefix.
func checkNameOption(v string) error {
	if err := checkName(v); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "subscribe: "))
	}
	return nil
}

func init() { connector.Register(factory{}) }
