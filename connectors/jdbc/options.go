package jdbc

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/eddystream/eddy/connector"
)

var spec = connector.Spec{
	Name: "jdbc",
	Kind: connector.SourceKind | connector.SinkKind,
	Description: "Reads and writes a table of PostgreSQL, MySQL or MariaDB. As a source, a bounded scan of the table " +
		"(split into parallel ranges of 'scan.partition.column', exactly once over failures) or, in a lookup join, a parameterised " +
		"query per key with an optional partial cache. As a sink, upserts and deletes by the declared " +
		"primary key (idempotent, so a replay after a failure converges to the same table), plain inserts without one; " +
		"each flush is one database transaction, with parameterised statements only.",
	Options: append([]connector.Option{
		{Key: "url", Type: connector.String, Required: true,
			Description: "The database: 'jdbc:postgresql://host:port/database' or 'jdbc:mysql://host:port/database' ('jdbc:mariadb://' too).",
			Check:       func(v string) error { _, err := parseURL(v); return err }},
		{Key: "table-name", Type: connector.String, Required: true,
			Description: "The table to read or write: a name, or 'schema.name' in PostgreSQL ('database.name' in MySQL)."},
		{Key: "username", Type: connector.String, Description: "The user to connect as."},
		{Key: "password", Type: connector.String, Secret: true, Description: "The user's password."},
		{Key: "driver", Type: connector.String, Description: "Accepted for compatibility: the driver follows from 'url'."},
		{Key: "sink.buffer-flush.max-rows", Type: connector.Int, Default: "100",
			Description: "Changes buffered before a flush (changes of one key are reduced to the last); 0 flushes at checkpoints only.", Check: connector.NonNegative},
		{Key: "sink.buffer-flush.interval", Type: connector.Duration, Default: "1 s",
			Description: "The longest time changes wait in the buffer while more arrive; '0 s' flushes at checkpoints and by size only."},
		{Key: "sink.delivery-guarantee", Type: connector.Enum, Values: []string{"exactly-once", "at-least-once"},
			Description: "'exactly-once' (the default for a table with a primary key): the changes between two checkpoints are written in one database transaction when the checkpoint completes, so the table only ever holds changes the job will not roll back; 'at-least-once' (the only choice without a primary key): changes are written as the buffer fills and at checkpoints, sooner, and a replay after a failure writes them again."},
		{Key: "sink.max-retries", Type: connector.Int, Default: "3",
			Description: "How many times a failed flush is retried (on a new connection) before the job fails.", Check: connector.NonNegative},
		{Key: "connection.max-retry-timeout", Type: connector.Duration, Default: "60 s",
			Description: "How long to wait for a connection."},
	}, readOptions...),
}

// dbURL is a parsed 'url'.
type dbURL struct {
	dialect  string // "postgres" or "mysql"
	host     string
	port     int
	database string
	params   url.Values
}

func parseURL(v string) (dbURL, error) {
	const hint = "write it as 'jdbc:postgresql://host:port/database' or 'jdbc:mysql://host:port/database'"
	rest, ok := strings.CutPrefix(strings.TrimSpace(v), "jdbc:")
	if !ok {
		return dbURL{}, fmt.Errorf("%q is not a JDBC URL: %s", v, hint)
	}
	u, err := url.Parse(rest)
	if err != nil {
		return dbURL{}, fmt.Errorf("%q: %w; %s", v, err, hint)
	}
	d := dbURL{host: u.Hostname(), database: strings.TrimPrefix(u.Path, "/"), params: u.Query()}
	switch u.Scheme {
	case "postgresql", "postgres":
		d.dialect, d.port = "postgres", 5432
	case "mysql", "mariadb":
		d.dialect, d.port = "mysql", 3306
	default:
		return dbURL{}, fmt.Errorf("%q: the jdbc connector writes PostgreSQL, MySQL and MariaDB, not %q; %s", v, u.Scheme, hint)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return dbURL{}, fmt.Errorf("%q: port %q is not a port number", v, p)
		}
		d.port = n
	}
	if d.host == "" || d.database == "" {
		return dbURL{}, fmt.Errorf("%q names no host or no database: %s", v, hint)
	}
	return d, nil
}

// config is the sink's configuration.
type config struct {
	url            dbURL
	table          string
	user, password string
	maxRows        int
	interval       time.Duration
	retries        int
	connectTimeout time.Duration
	// exactlyOnce is 'sink.delivery-guarantee' = 'exactly-once', or unset.
	exactlyOnce  bool
	guaranteeSet bool
}

func newConfig(o connector.Options) (*config, error) {
	u, err := parseURL(o.String("url"))
	if err != nil {
		return nil, err
	}
	return &config{
		url: u, table: o.String("table-name"), user: o.String("username"), password: o.String("password"),
		maxRows: int(o.Int("sink.buffer-flush.max-rows")), interval: o.Duration("sink.buffer-flush.interval"),
		retries: int(o.Int("sink.max-retries")), connectTimeout: o.Duration("connection.max-retry-timeout"),
		exactlyOnce:  !o.IsSet("sink.delivery-guarantee") || o.String("sink.delivery-guarantee") == "exactly-once",
		guaranteeSet: o.IsSet("sink.delivery-guarantee"),
	}, nil
}

// where names the target for errors, without credentials.
func (c *config) where() string {
	return fmt.Sprintf("table %s of %s database %s at %s:%d", c.table, c.url.dialect, c.url.database, c.url.host, c.url.port)
}
