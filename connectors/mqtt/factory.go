// Package mqtt is eddy's MQTT connector: a source and a sink of MQTT topics
// (MQTT 5 and 3.1.1), with the messages in one of eddy's formats. It
// registers as "mqtt".
//
// The source subscribes to topic filters in persistent broker sessions,
// one session per split, each under a client id that stays the same
// across restarts. With QoS 1 or 2 it acknowledges a message only once the
// checkpoint that covers it has completed, so the broker delivers again,
// to the same session, every message a failed job had read but not
// checkpointed: at least once. QoS 0 is at most once. The sink publishes to
// one topic and, at least once, waits at every checkpoint until the broker
// has acknowledged every message.
//
// MQTT 5 goes through Eclipse Paho's paho.golang and MQTT 3.1.1 through
// paho.mqtt.golang, behind the link interface of this package; the
// reconnection, subscription, acknowledgement and publication logic above
// it is the same for both versions.
package mqtt

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"hash/fnv"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	_ "github.com/eddystream/eddy/formats" // the formats of the messages
)

// Delivery guarantees of the sink.
const (
	atLeastOnce = "at-least-once"
	atMostOnce  = "none"
)

// Startup modes and retained-message policies of the source.
const (
	resumeSession = "resume-session"
	newSession    = "new-session"
	include       = "include"
	exclude       = "exclude"
)

// Protocol versions, as 'mqtt.version' names them.
const (
	v5   = "5"
	v311 = "3.1.1"
)

// maxSessionExpiry is the longest session expiry MQTT 5 can express, in
// seconds (2^32-1 means "never").
const maxSessionExpiry = 1<<32 - 1

var spec = connector.Spec{
	Name: "mqtt",
	Kind: connector.SourceKind | connector.SinkKind,
	Description: "Reads and writes MQTT topics (MQTT 5 or 3.1.1). Sources subscribe to topic filters (wildcards '+' and '#', MQTT 5 shared subscriptions for parallel readers) " +
		"in persistent sessions and, with QoS 1 or 2, acknowledge each message only when the checkpoint covering it completes: at least once. " +
		"Sinks publish to one topic, at least once (every checkpoint waits for the broker's acknowledgements) or without guarantee.",
	Formats: []string{"json", "csv", "raw", "avro", "avro-confluent", "debezium-json", "canal-json", "maxwell-json"},
	Options: []connector.Option{
		{Key: "url", Type: connector.String, Default: "tcp://127.0.0.1:1883",
			Description: "The broker: 'tcp://host:1883' (or 'mqtt://'), 'ssl://host:8883' (or 'tls://', 'mqtts://') for TLS, 'ws://host/mqtt' or 'wss://' for WebSockets; several, comma-separated, are tried in turn when connecting.",
			Check:       checkURLs},
		{Key: "topic", Type: connector.List, Required: true,
			Description: "Sources: the topic filters to subscribe to, comma-separated, with the wildcards '+' (one level) and '#' (the rest): 'sensors/+/temperature,alarms/#'. Sinks: the one topic to publish to, without wildcards."},
		{Key: "qos", Type: connector.Int, Default: "1", Check: checkQoS,
			Description: "The quality of service: sources subscribe with it (messages published with a lower QoS arrive with theirs), sinks publish with it. 0 is at most once; 1 and 2 give at least once."},
		{Key: "mqtt.version", Type: connector.Enum, Default: v5, Values: []string{v5, v311},
			Description: "The protocol version: '5' or '3.1.1'."},
		{Key: "client-id", Type: connector.String, Check: checkClientID,
			Description: "The prefix of the client ids: source sessions are '<client-id>-<n>' (one per split; the broker keeps each session under its id, so give every job its own prefix), sink writers '<client-id>-w<subtask>-<random>'. " +
				"By default 'eddy-<table or operator name>-<hash of the topics>'."},
		{Key: "username", Type: connector.String, Description: "The user name to connect with."},
		{Key: "password", Type: connector.String, Secret: true, Description: "The password of 'username'."},
		{Key: "tls.ca-file", Type: connector.String, Description: "A PEM file of the certificate authorities to trust for 'ssl://' and 'wss://' brokers, instead of the system's."},
		{Key: "tls.cert-file", Type: connector.String, Description: "A PEM file of the client certificate to present to TLS brokers, with 'tls.key-file'."},
		{Key: "tls.key-file", Type: connector.String, Description: "The PEM file of the private key of 'tls.cert-file'."},
		{Key: "keep-alive", Type: connector.Duration, Default: "30 s", Check: checkKeepAlive,
			Description: "The keep-alive interval of connections: the broker closes a connection silent for one and a half times as long, and the client pings when idle. 0 turns keep-alives off."},
		{Key: "connection.timeout", Type: connector.Duration, Default: "1 min", Check: positiveDuration,
			Description: "How long a reader or writer tries to connect (each server of 'url' in turn), when it starts and after losing its connection, before it fails; the job then restarts as its restart strategy says."},
		{Key: "scan.startup.mode", Type: connector.Enum, Default: resumeSession, Values: []string{resumeSession, newSession},
			Description: "Sources with QoS 1 or 2: on a job's first run, 'resume-session' resumes the session the broker keeps under each client id (receiving what it queued meanwhile), 'new-session' discards it and starts afresh. A job restored from a checkpoint always resumes its sessions."},
		{Key: "scan.session.expiry-interval", Type: connector.Duration, Default: "1 d", Check: checkExpiry,
			Description: "MQTT 5 sources with QoS 1 or 2: how long the broker keeps a session (its subscriptions, unacknowledged and queued messages) after the connection closes. It must outlast a restart of the job for no message to be lost. (With 3.1.1 the broker decides.)"},
		{Key: "scan.receive-maximum", Type: connector.Int, Default: "65535", Check: checkReceiveMaximum,
			Description: "MQTT 5 sources with QoS 1 or 2: how many unacknowledged messages the broker may send a session. Messages are acknowledged when a checkpoint completes, so this bounds what a split reads per checkpoint interval; the broker holds the rest back."},
		{Key: "scan.shared-subscription.group", Type: connector.String, Check: checkShareGroup,
			Description: "Sources: read the filters as the shared subscription '$share/<group>/<filter>', one session per parallel reader, among which the broker divides the messages (MQTT 5; Mosquitto also offers it to 3.1.1 clients). Without it, each filter is one split read by one reader."},
		{Key: "scan.retained-messages", Type: connector.Enum, Default: include, Values: []string{include, exclude},
			Description: "Sources: whether to read the retained messages the broker sends when a filter is subscribed to: 'include' reads them (MQTT 5: when the subscription is new, not again when a session is resumed; 3.1.1: whenever a reader starts), 'exclude' leaves them out."},
		{Key: "sink.retain", Type: connector.Bool, Default: "false",
			Description: "Sinks: publish with the retain flag, so that the broker keeps the topic's last message for new subscribers."},
		{Key: "sink.delivery-guarantee", Type: connector.Enum, Values: []string{atLeastOnce, atMostOnce},
			Description: "Sinks: 'at-least-once' (the default with QoS 1 or 2) waits at every checkpoint until the broker has acknowledged every message (PUBACK, or PUBCOMP with QoS 2), publishing again after a failure; " +
				"'none' (the default and only choice with QoS 0) does not wait."},
		{Key: "sink.max-inflight", Type: connector.Int, Check: checkReceiveMaximum,
			Description: "Sinks with QoS 1 or 2: how many publications may await the broker's acknowledgement at once. An MQTT 5 broker announces its own limit (its Receive Maximum), which applies as well; " +
				"a 3.1.1 broker cannot, and may drop what exceeds it (Mosquitto drops QoS 2 messages beyond max_inflight_messages, 20 by default). By default 65535 with MQTT 5; with 3.1.1, 1000 for QoS 1 and 20 for QoS 2."},
		{Key: "sink.message-expiry-interval", Type: connector.Duration, Check: checkExpiry,
			Description: "MQTT 5 sinks: the message expiry interval of the messages: the broker drops a message not delivered to a subscriber within it."},
	},
}

// sourceOnly and sinkOnly are the options of one side.
var (
	sourceOnly = []string{"scan.startup.mode", "scan.session.expiry-interval", "scan.receive-maximum", "scan.shared-subscription.group", "scan.retained-messages"}
	sinkOnly   = []string{"sink.retain", "sink.delivery-guarantee", "sink.max-inflight", "sink.message-expiry-interval"}
)

// schemes are the URL schemes of 'url'.
var schemes = []string{"tcp", "mqtt", "ssl", "tls", "mqtts", "ws", "wss"}

// parseURLs parses the 'url' option.
func parseURLs(v string) ([]*url.URL, error) {
	var out []*url.URL
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf("an empty server in the list; write 'tcp://host:1883' or several, comma-separated")
		}
		if !strings.Contains(p, "://") {
			p = "tcp://" + p
		}
		u, err := url.Parse(p)
		if err != nil {
			return nil, fmt.Errorf("a server is not a URL; write 'tcp://host:1883'")
		}
		u.Scheme = strings.ToLower(u.Scheme)
		if !slices.Contains(schemes, u.Scheme) {
			return nil, fmt.Errorf("scheme %q is not one of %s", u.Scheme, strings.Join(schemes, ", "))
		}
		if u.Hostname() == "" {
			return nil, fmt.Errorf("a server has no host; write 'tcp://host:1883'")
		}
		if u.Port() == "" {
			u.Host += ":" + defaultPort(u.Scheme)
		}
		out = append(out, u)
	}
	return out, nil
}

// defaultPort is the port of a scheme when a URL has none.
func defaultPort(scheme string) string {
	switch scheme {
	case "ssl", "tls", "mqtts":
		return "8883"
	case "ws":
		return "80"
	case "wss":
		return "443"
	}
	return "1883"
}

func checkURLs(v string) error {
	_, err := parseURLs(v)
	return err
}

func checkQoS(v string) error {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err != nil || n < 0 || n > 2 {
		return fmt.Errorf("want 0, 1 or 2")
	}
	return nil
}

func checkClientID(v string) error {
	if strings.TrimSpace(v) == "" || strings.ContainsAny(v, "\x00") || len(v) > 200 {
		return fmt.Errorf("want a prefix of 1 to 200 characters")
	}
	return nil
}

func checkKeepAlive(v string) error {
	if d, err := connector.ParseDuration(v); err == nil && d > 65535*time.Second {
		return fmt.Errorf("MQTT keep-alives are at most 65535 s (18 h)")
	}
	return nil
}

func positiveDuration(v string) error {
	if d, err := connector.ParseDuration(v); err == nil && d <= 0 {
		return fmt.Errorf("want a duration above 0")
	}
	return nil
}

func checkExpiry(v string) error {
	if d, err := connector.ParseDuration(v); err == nil && d > maxSessionExpiry*time.Second {
		return fmt.Errorf("MQTT expiry intervals are at most %d s (about 136 years)", maxSessionExpiry)
	}
	return nil
}

func checkReceiveMaximum(v string) error {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("want a number from 1 to 65535")
	}
	return nil
}

func checkShareGroup(v string) error {
	if v == "" || strings.ContainsAny(v, "/+#\x00") {
		return fmt.Errorf("a shared subscription group is a non-empty name without '/', '+' or '#'")
	}
	return nil
}

// config is what the connector's options say.
type config struct {
	name        string // of the table or operator, for errors
	urls        []*url.URL
	topics      []string // source: filters; sink: the one topic
	qos         byte
	version     string
	clientID    string // the prefix the user set, or ""
	username    string
	password    string
	tls         *tls.Config
	keepAlive   time.Duration
	connTimeout time.Duration
	// Sources.
	startNew   bool
	expiry     time.Duration
	receiveMax uint16
	shareGroup string
	retained   bool
	// narrowed says that a condition on the 'topic' column (ApplyFilters)
	// limits what is read to the topic only, or, if only is "", to
	// nothing; topics are then the filters subscribed to.
	narrowed bool
	only     string
	// Sinks.
	retain      bool
	guarantee   string
	maxInflight int
	msgExpiry   time.Duration
	changelogs  changelog.Mode
}

func optErr(key, problem string) error {
	return &connector.OptionError{Connector: spec.Name, Key: key, Problem: problem}
}

// configOf reads the options of ctx; sink says whether it configures a
// sink (or a source).
func configOf(ctx connector.Context, sink bool) (*config, error) {
	o := ctx.Options
	urls, err := parseURLs(o.String("url"))
	if err != nil {
		return nil, optErr("url", err.Error())
	}
	c := &config{
		name:        ctx.Name,
		urls:        urls,
		topics:      o.List("topic"),
		qos:         byte(o.Int("qos")),
		version:     o.String("mqtt.version"),
		clientID:    o.String("client-id"),
		username:    o.String("username"),
		password:    o.String("password"),
		keepAlive:   o.Duration("keep-alive"),
		connTimeout: o.Duration("connection.timeout"),
		startNew:    o.String("scan.startup.mode") == newSession,
		expiry:      o.Duration("scan.session.expiry-interval"),
		receiveMax:  uint16(o.Int("scan.receive-maximum")),
		shareGroup:  o.String("scan.shared-subscription.group"),
		retained:    o.String("scan.retained-messages") == include,
		retain:      o.Bool("sink.retain"),
		guarantee:   o.String("sink.delivery-guarantee"),
		msgExpiry:   o.Duration("sink.message-expiry-interval"),
		maxInflight: int(o.Int("sink.max-inflight")),
	}
	if ctx.Table != nil && ctx.Table.Name != "" {
		c.name = ctx.Table.Name
	}
	c.changelogs = changelog.InsertOnly
	switch f, _ := o.Format(); f {
	case "debezium-json", "canal-json", "maxwell-json":
		c.changelogs = changelog.Retract
	}
	for _, u := range urls {
		if u.User != nil {
			// Said without the value, which holds a password.
			return nil, optErr("url", "holds credentials in a server URL; set 'username' and 'password' instead, which are kept secret")
		}
	}
	if o.IsSet("password") && c.username == "" {
		return nil, optErr("password", "is set without 'username'; set both")
	}
	if (o.IsSet("tls.ca-file") || o.IsSet("tls.cert-file") || o.IsSet("tls.key-file")) && !c.usesTLS() {
		return nil, optErr("url", "names no TLS server ('ssl://', 'tls://', 'mqtts://' or 'wss://') though TLS options are set; fix the scheme or remove the 'tls.' options")
	}
	if c.tls, err = tlsConfig(o); err != nil {
		return nil, err
	}
	if sink {
		return c, c.checkSink(o)
	}
	return c, c.checkSource(o)
}

// usesTLS says whether some server of 'url' is reached over TLS.
func (c *config) usesTLS() bool {
	for _, u := range c.urls {
		switch u.Scheme {
		case "ssl", "tls", "mqtts", "wss":
			return true
		}
	}
	return false
}

// tlsConfig reads the 'tls.' options: nil if none is set.
func tlsConfig(o connector.Options) (*tls.Config, error) {
	ca, cert, key := o.String("tls.ca-file"), o.String("tls.cert-file"), o.String("tls.key-file")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, optErr("tls.ca-file", fmt.Sprintf("= '%s' cannot be read: %v", ca, err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, optErr("tls.ca-file", fmt.Sprintf("= '%s' holds no PEM certificate", ca))
		}
		cfg.RootCAs = pool
	}
	if (cert == "") != (key == "") {
		if cert == "" {
			return nil, optErr("tls.cert-file", "is required with 'tls.key-file': set both, or neither")
		}
		return nil, optErr("tls.key-file", "is required with 'tls.cert-file': set both, or neither")
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, optErr("tls.cert-file", fmt.Sprintf("and 'tls.key-file' do not load as a certificate and its key: %v", err))
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

func (c *config) checkSource(o connector.Options) error {
	for _, k := range sinkOnly {
		if o.IsSet(k) {
			return optErr(k, "is an option of sinks; remove it from the source's options")
		}
	}
	if len(c.topics) == 0 {
		return optErr("topic", "is required: set the topic filters to read")
	}
	for _, f := range c.topics {
		if err := checkFilter(f); err != nil {
			return optErr("topic", err.Error())
		}
		if c.shareGroup != "" && strings.HasPrefix(f, "$share/") {
			return optErr("topic", fmt.Sprintf("lists the shared subscription '%s' and 'scan.shared-subscription.group' is set; write plain filters with the group option, or shared ones without it", f))
		}
	}
	for i, a := range c.topics {
		for _, b := range c.topics[i+1:] {
			if filtersOverlap(a, b) {
				return optErr("topic", fmt.Sprintf("lists '%s' and '%s', which some topic matches both: each message of such a topic would be read twice; list filters no topic matches twice (drop one, or narrow a wildcard)", a, b))
			}
		}
	}
	if c.version == v311 {
		for _, k := range []string{"scan.session.expiry-interval", "scan.receive-maximum"} {
			if o.IsSet(k) {
				return optErr(k, "applies to MQTT 5 only: with 3.1.1 the broker decides (Mosquitto: persistent_client_expiration and max_inflight_messages); remove it or set 'mqtt.version' = '5'")
			}
		}
	}
	if c.qos == 0 {
		for _, k := range []string{"scan.startup.mode", "scan.session.expiry-interval", "scan.receive-maximum"} {
			if o.IsSet(k) {
				return optErr(k, "needs 'qos' 1 or 2: with QoS 0 the source reads in sessions that end with the connection, and messages are never acknowledged or delivered again")
			}
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
	if len(c.topics) != 1 {
		return optErr("topic", "names the one topic a sink publishes to")
	}
	if err := checkTopic(c.topics[0]); err != nil {
		return optErr("topic", err.Error())
	}
	if c.version == v311 && o.IsSet("sink.message-expiry-interval") {
		return optErr("sink.message-expiry-interval", "applies to MQTT 5 only; remove it or set 'mqtt.version' = '5'")
	}
	if c.qos == 0 && o.IsSet("sink.max-inflight") {
		return optErr("sink.max-inflight", "needs 'qos' 1 or 2: the broker acknowledges no QoS 0 message")
	}
	switch {
	case o.IsSet("sink.max-inflight"):
	case c.version == v5:
		c.maxInflight = 65535
	case c.qos == 2:
		c.maxInflight = 20
	default:
		c.maxInflight = 1000
	}
	switch {
	case c.guarantee == "" && c.qos == 0:
		c.guarantee = atMostOnce
	case c.guarantee == "":
		c.guarantee = atLeastOnce
	case c.guarantee == atLeastOnce && c.qos == 0:
		return optErr("sink.delivery-guarantee", "= 'at-least-once' needs 'qos' 1 or 2: the broker acknowledges no QoS 0 message")
	}
	return nil
}

// clientPrefix returns the prefix of the client ids: the one the user set,
// or one made of the name of the table or operator and a hash of the
// topics, so that jobs reading other topics under the same name do not
// take over each other's sessions.
func (c *config) clientPrefix(name string) string {
	if c.clientID != "" {
		return c.clientID
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
		if b.Len() >= 40 {
			break
		}
	}
	h := fnv.New32a()
	for _, t := range c.topics {
		h.Write([]byte(t))
		h.Write([]byte{0})
	}
	h.Write([]byte(c.shareGroup))
	return fmt.Sprintf("eddy-%s-%08x", b.String(), h.Sum32())
}

// servers returns the servers of 'url', for errors and logs.
func (c *config) servers() string {
	parts := make([]string, len(c.urls))
	for i, u := range c.urls {
		parts[i] = u.String()
	}
	return strings.Join(parts, ",")
}

type factory struct{}

func (factory) Spec() connector.Spec { return spec }

func (factory) NewSource(ctx connector.Context) (any, error) {
	c, err := configOf(ctx, false)
	if err != nil {
		return nil, err
	}
	if ctx.Table != nil {
		dec, err := newTableDecoding(c, ctx)
		if err != nil {
			return nil, err
		}
		return newTableSource(c, ctx.Table, dec), nil
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
	if ctx.Table != nil {
		newEnc, err := connector.EncoderMaker[connector.TableRecord](ctx)
		if err != nil {
			return nil, err
		}
		return &sink[connector.TableRecord]{cfg: c, newEncoder: newEnc}, nil
	}
	newEnc, err := connector.EncoderMaker[any](ctx)
	if err != nil {
		return nil, err
	}
	return &sink[any]{cfg: c, newEncoder: newEnc}, nil
}

func init() { connector.Register(factory{}) }

// label names the connector and the table it backs, for errors and logs:
// 'mqtt "orders"', or 'mqtt' in the Go API, where the name is the
// connector's.
func (c *config) label() string {
	if c.name == "" || c.name == spec.Name {
		return spec.Name
	}
	return fmt.Sprintf("mqtt %q", c.name)
}
