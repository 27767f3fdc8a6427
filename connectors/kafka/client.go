package kafka

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/eddystream/eddy/connector"
)

// requestTimeout bounds the connector's requests to the brokers.
const requestTimeout = 30 * time.Second

// honouredProperties are the Kafka client properties ('properties.<name>')
// that eddy passes to its client.
var honouredProperties = []string{
	"bootstrap.servers", "group.id", "client.id", "auto.offset.reset", "isolation.level",
	"security.protocol", "sasl.mechanism", "sasl.jaas.config",
	"fetch.min.bytes", "fetch.max.bytes", "fetch.max.wait.ms", "max.partition.fetch.bytes",
	"acks", "compression.type", "linger.ms", "max.request.size", "transaction.timeout.ms",
	"request.timeout.ms", "retry.backoff.ms", "metadata.max.age.ms",
}

// clientConfig is what the 'properties.*' options say.
type clientConfig struct {
	brokers     []string
	groupID     string
	readCommit  bool
	txTimeout   time.Duration
	acks        string
	opts        []kgo.Opt // for every client
	consumeOpts []kgo.Opt
	produceOpts []kgo.Opt
}

var jaasField = regexp.MustCompile(`(username|password)\s*=\s*"([^"]*)"`)

// clientConfigOf reads the 'properties.*' options.
func clientConfigOf(c *config, o connector.Options) (clientConfig, error) {
	cc := clientConfig{acks: "all"}
	props := map[string]string{}
	for _, n := range o.Names("properties.#") {
		props[n] = o.String("properties." + n)
	}
	props["bootstrap.servers"] = o.String("properties.bootstrap.servers")
	if o.IsSet("properties.group.id") {
		props["group.id"] = o.String("properties.group.id")
	}
	if o.IsSet("properties.sasl.jaas.config") {
		props["sasl.jaas.config"] = o.String("properties.sasl.jaas.config")
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	perr := func(k, problem string) error { return c.optErr("properties."+k, problem) }
	for _, k := range names {
		if !slices.Contains(honouredProperties, k) {
			hint := ""
			if h, ok := connector.Nearest(k, honouredProperties); ok {
				hint = fmt.Sprintf(" (did you mean 'properties.%s'?)", h)
			}
			return cc, perr(k, "is not a Kafka client property eddy's client honours"+hint+"; it honours "+strings.Join(honouredProperties, ", "))
		}
	}
	if props["bootstrap.servers"] == "" {
		return cc, perr("bootstrap.servers", "is required: the brokers to connect to first, host:port pairs, comma-separated ('kafka-1:9092,kafka-2:9092')")
	}
	millis := func(k string) (time.Duration, error) {
		n, err := strconv.ParseInt(strings.TrimSpace(props[k]), 10, 64)
		if err != nil || n < 0 {
			return 0, perr(k, "is not a non-negative number of milliseconds")
		}
		return time.Duration(n) * time.Millisecond, nil
	}
	bytes := func(k string) (int32, error) {
		n, err := strconv.ParseInt(strings.TrimSpace(props[k]), 10, 32)
		if err != nil || n <= 0 {
			return 0, perr(k, "is not a positive number of bytes")
		}
		return int32(n), nil
	}
	var protocol, mechanism string
	for _, k := range names {
		v := strings.TrimSpace(props[k])
		switch k {
		case "bootstrap.servers":
			for _, b := range strings.Split(v, ",") {
				if b = strings.TrimSpace(b); b != "" {
					cc.brokers = append(cc.brokers, b)
				}
			}
			if len(cc.brokers) == 0 {
				return cc, perr(k, "names no broker; write 'host:9092' or several, comma-separated")
			}
			cc.opts = append(cc.opts, kgo.SeedBrokers(cc.brokers...))
		case "group.id":
			cc.groupID = v
		case "client.id":
			cc.opts = append(cc.opts, kgo.ClientID(v))
		case "auto.offset.reset":
			if v != "earliest" && v != "latest" && v != "none" {
				return cc, perr(k, "is not one of earliest, latest, none")
			}
			c.autoReset = v
		case "isolation.level":
			switch v {
			case "read_committed":
				cc.readCommit = true
			case "read_uncommitted":
			default:
				return cc, perr(k, "is not read_committed or read_uncommitted")
			}
		case "security.protocol":
			switch strings.ToUpper(v) {
			case "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
				protocol = strings.ToUpper(v)
			default:
				return cc, perr(k, "is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL")
			}
		case "sasl.mechanism":
			switch strings.ToUpper(v) {
			case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
				mechanism = strings.ToUpper(v)
			default:
				return cc, perr(k, "is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512")
			}
		case "sasl.jaas.config":
		case "fetch.min.bytes", "fetch.max.bytes", "max.partition.fetch.bytes", "max.request.size":
			n, err := bytes(k)
			if err != nil {
				return cc, err
			}
			switch k {
			case "fetch.min.bytes":
				cc.consumeOpts = append(cc.consumeOpts, kgo.FetchMinBytes(n))
			case "fetch.max.bytes":
				cc.consumeOpts = append(cc.consumeOpts, kgo.FetchMaxBytes(n))
			case "max.partition.fetch.bytes":
				cc.consumeOpts = append(cc.consumeOpts, kgo.FetchMaxPartitionBytes(n))
			default:
				cc.produceOpts = append(cc.produceOpts, kgo.ProducerBatchMaxBytes(n))
			}
		case "fetch.max.wait.ms", "linger.ms", "transaction.timeout.ms", "request.timeout.ms", "retry.backoff.ms", "metadata.max.age.ms":
			d, err := millis(k)
			if err != nil {
				return cc, err
			}
			switch k {
			case "fetch.max.wait.ms":
				cc.consumeOpts = append(cc.consumeOpts, kgo.FetchMaxWait(d))
			case "linger.ms":
				cc.produceOpts = append(cc.produceOpts, kgo.ProducerLinger(d))
			case "transaction.timeout.ms":
				cc.txTimeout = d
			case "request.timeout.ms":
				cc.opts = append(cc.opts, kgo.RequestTimeoutOverhead(d))
			case "retry.backoff.ms":
				cc.opts = append(cc.opts, kgo.RetryBackoffFn(func(int) time.Duration { return d }))
			default:
				cc.opts = append(cc.opts, kgo.MetadataMaxAge(d))
			}
		case "acks":
			switch v {
			case "all", "-1", "1", "0":
				cc.acks = v
			default:
				return cc, perr(k, "is not one of all, -1, 1, 0")
			}
		case "compression.type":
			var codec kgo.CompressionCodec
			switch v {
			case "none":
				codec = kgo.NoCompression()
			case "gzip":
				codec = kgo.GzipCompression()
			case "snappy":
				codec = kgo.SnappyCompression()
			case "lz4":
				codec = kgo.Lz4Compression()
			case "zstd":
				codec = kgo.ZstdCompression()
			default:
				return cc, perr(k, "is not one of none, gzip, snappy, lz4, zstd")
			}
			cc.produceOpts = append(cc.produceOpts, kgo.ProducerBatchCompression(codec))
		default:
			return cc, perr(k, "is not a Kafka client property eddy's client honours; it honours "+strings.Join(honouredProperties, ", "))
		}
	}
	if protocol == "SSL" || protocol == "SASL_SSL" {
		cc.opts = append(cc.opts, kgo.DialTLSConfig(&tls.Config{MinVersion: tls.VersionTLS12}))
	}
	sasl := protocol == "SASL_PLAINTEXT" || protocol == "SASL_SSL"
	switch {
	case sasl && props["sasl.jaas.config"] == "":
		return cc, perr("sasl.jaas.config", "is required with 'properties.security.protocol' = '"+protocol+"': give the username and password")
	case !sasl && (mechanism != "" || props["sasl.jaas.config"] != ""):
		return cc, perr("security.protocol", "must be SASL_PLAINTEXT or SASL_SSL when SASL is configured")
	case sasl:
		var user, pass string
		for _, m := range jaasField.FindAllStringSubmatch(props["sasl.jaas.config"], -1) {
			if m[1] == "username" {
				user = m[2]
			} else {
				pass = m[2]
			}
		}
		if user == "" {
			return cc, perr("sasl.jaas.config", `has no username="..."; write ... required username="u" password="p";`)
		}
		switch mechanism {
		case "", "PLAIN":
			cc.opts = append(cc.opts, kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism()))
		case "SCRAM-SHA-256":
			cc.opts = append(cc.opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()))
		case "SCRAM-SHA-512":
			cc.opts = append(cc.opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()))
		}
	}
	return cc, nil
}

// slogger passes franz-go's warnings and errors to an slog logger.
type slogger struct{ l *slog.Logger }

func (s slogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }

func (s slogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	if level == kgo.LogLevelError {
		s.l.Error("kafka: "+msg, keyvals...)
	} else {
		s.l.Warn("kafka: "+msg, keyvals...)
	}
}

// newClient returns a client of the cluster with opts added.
func (c *config) newClient(log *slog.Logger, opts ...kgo.Opt) (*kgo.Client, error) {
	all := append(append([]kgo.Opt{kgo.WithLogger(slogger{log})}, c.client.opts...), opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		return nil, fmt.Errorf("%s %q: connecting to %s: %w", c.connector, c.name, strings.Join(c.client.brokers, ","), err)
	}
	return cl, nil
}

// ctxTimeout returns a context for one round of requests.
func ctxTimeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), requestTimeout)
}
