package mysqlcdc

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/pipeline"
)

var spec = connector.Spec{
	Name: "mysql-cdc",
	Kind: connector.SourceKind,
	Description: "Reads MySQL and MariaDB tables as changelogs: a lock-free, parallel snapshot of their rows " +
		"(+I), then every change from the binary log (+I, -U, +U, -D), exactly once through checkpoints. " +
		"The server needs log_bin on, binlog_format=ROW and binlog_row_image=FULL.",
	Options: []connector.Option{
		{Key: "hostname", Type: connector.String, Required: true, Description: "The host name or IP address of the MySQL or MariaDB server."},
		{Key: "port", Type: connector.Int, Default: "3306", Description: "The server's port.", Check: connector.PortNumber},
		{Key: "username", Type: connector.String, Required: true,
			Description: "The user to connect as; it needs SELECT, SHOW DATABASES, REPLICATION SLAVE and REPLICATION CLIENT, and LOCK TABLES to read the snapshot of tables without transactions (MyISAM, Aria, ...)."},
		{Key: "password", Type: connector.String, Secret: true, Description: "The user's password."},
		{Key: "database-name", Type: connector.String, Required: true,
			Description: "The database to capture: a name or a regular expression that must match the whole name."},
		{Key: "table-name", Type: connector.String, Required: true,
			Description: "The tables to capture: a name or a regular expression that must match the whole table name (or the whole 'database.table'); tables that match are read as one table."},
		{Key: "server-id", Type: connector.String,
			Description: "The replica server id of the source's binlog readers, unique among the server's replicas: a number ('5400') or a range ('5400-5408') with at least as many ids as the source's parallelism; random within 5400-6400 by default.",
			Check:       checkServerID},
		{Key: "scan.startup.mode", Type: connector.Enum, Default: "initial",
			Values:      []string{"initial", "snapshot", "latest-offset", "earliest-offset", "specific-offset", "timestamp"},
			Description: "Where reading starts: 'initial' (a snapshot of the tables, then the binlog), 'snapshot' (the snapshot alone, then the job's input ends), 'latest-offset' (changes after the start), 'earliest-offset' (the oldest binlog the server has), 'specific-offset' (a GTID set, or a binlog file and position), 'timestamp' (the first binlog event at or after 'scan.startup.timestamp-millis')."},
		{Key: "scan.startup.specific-offset.gtid-set", Type: connector.String,
			Description: "With 'specific-offset': the GTID set to start after, MySQL's ('3e11fa47-71ca-11e1-9e33-c80aa9429562:1-100,...', as Executed_Gtid_Set shows it) or MariaDB's ('0-1-42,...', as @@gtid_binlog_pos shows it): reading starts at the first transaction not in it. It wins over the file and position.",
			Check:       checkGTIDSet},
		{Key: "scan.startup.specific-offset.file", Type: connector.String,
			Description: "With 'specific-offset': the binlog file to start in (as SHOW MASTER STATUS names it)."},
		{Key: "scan.startup.specific-offset.pos", Type: connector.Int,
			Description: "With 'specific-offset': the position in that file to start at.", Check: connector.NonNegative},
		{Key: "scan.startup.timestamp-millis", Type: connector.Int,
			Description: "With 'timestamp': the time to start at, in milliseconds since the Unix epoch.", Check: connector.NonNegative},
		{Key: "scan.incremental.snapshot.chunk.size", Type: connector.Int, Default: "8096",
			Description: "The rows of a snapshot chunk: tables are split into chunks of their chunk key, read in parallel.", Check: connector.Positive},
		{Key: "scan.incremental.snapshot.chunk.key-column", Type: connector.String,
			Description: "The column tables are split on; by default the first column of the primary key. Tables without a primary key need it."},
		{Key: "scan.snapshot.fetch.size", Type: connector.Int, Default: "1024",
			Description: "Accepted for compatibility: a chunk is read in one query.", Check: connector.Positive},
		{Key: "server-time-zone", Type: connector.String,
			Description: "The time zone of the server's DATETIME values shown as TIMESTAMP_LTZ, and of TIMESTAMP values read into TIMESTAMP columns (an IANA name such as 'Asia/Shanghai'); UTC by default.",
			Check:       checkZone},
		{Key: "jdbc.properties.zeroDateTimeBehavior", Type: connector.Enum, Default: "CONVERT_TO_NULL",
			Values:      []string{"CONVERT_TO_NULL", "ROUND", "EXCEPTION"},
			Description: "How zero dates ('0000-00-00', which no SQL date holds) are read into DATE and TIMESTAMP columns: as NULL ('CONVERT_TO_NULL'; a NOT NULL column then fails the job), as 0001-01-01 ('ROUND'), or as an error ('EXCEPTION'). A STRING column gets them as text."},
		{Key: "connect.timeout", Type: connector.Duration, Default: "30 s", Description: "How long to wait for a connection to the server."},
		{Key: "connect.max-retries", Type: connector.Int, Default: "3", Description: "How many times a failed connection is retried.", Check: connector.NonNegative},
		{Key: "heartbeat.interval", Type: connector.Duration, Default: "30 s",
			Description: "How often the server sends a heartbeat on an idle binlog, so that a stalled connection is noticed; '0 s' disables it."},
		{Key: "scan.incremental.snapshot.enabled", Type: connector.Bool, Default: "true",
			Description: "Accepted for compatibility; the snapshot is always incremental (chunked, lock-free and checkpointed)."},
	},
}

func checkZone(v string) error {
	if _, err := time.LoadLocation(strings.TrimSpace(v)); err != nil {
		return fmt.Errorf("want a time zone such as 'UTC' or 'Asia/Shanghai': %w", err)
	}
	return nil
}

// serverIDs parses 'server-id': a number or a range lo-hi.
func serverIDs(v string) (lo, hi uint32, err error) {
	v = strings.TrimSpace(v)
	a, b, isRange := strings.Cut(v, "-")
	x, err1 := strconv.ParseUint(strings.TrimSpace(a), 10, 32)
	y := x
	var err2 error
	if isRange {
		y, err2 = strconv.ParseUint(strings.TrimSpace(b), 10, 32)
	}
	if err1 != nil || err2 != nil || x == 0 || y < x {
		return 0, 0, fmt.Errorf("want a server id ('5400') or a range of them ('5400-5408'), ids from 1 to 4294967295")
	}
	return uint32(x), uint32(y), nil
}

func checkServerID(v string) error { _, _, err := serverIDs(v); return err }

// config is the source's configuration, from its options.
type config struct {
	host, user, password string
	port                 int
	database, table      *regexp.Regexp
	databaseExpr         string
	tableExpr            string
	serverIDLo           uint32
	serverIDHi           uint32
	startup              string
	specificFile         string
	specificPos          uint32
	specificGTIDs        string
	startupTS            int64
	chunkSize            int
	chunkKey             string
	values               valueOptions
	connectTimeout       time.Duration
	retries              int
	heartbeat            time.Duration
	// A pipeline's source selects its tables with 'tables' (and
	// 'tables.exclude') and follows their schema changes.
	pipeline      bool
	tables        *pipeline.Selector
	exclude       *pipeline.Selector
	tinyInt1Bool  bool
	schemaChanges bool
}

// addr returns host:port.
func (c *config) addr() string { return fmt.Sprintf("%s:%d", c.host, c.port) }

// serverID returns the replica server id of the reader of subtask.
func (c *config) serverID(subtask int) uint32 { return c.serverIDLo + uint32(subtask) }

func wholeMatch(option, expr string) (*regexp.Regexp, error) {
	re, err := regexp.Compile("^(?:" + expr + ")$")
	if err != nil {
		return nil, fmt.Errorf("option '%s' = '%s' is not a regular expression: %w", option, expr, err)
	}
	return re, nil
}

func newConfig(o connector.Options) (*config, error) { return newConfigFor(o, false) }

// newConfigFor reads the options of a SQL table's source or, with
// pipeline set, of a pipeline's.
func newConfigFor(o connector.Options, pipe bool) (*config, error) {
	c := &config{
		host: o.String("hostname"), user: o.String("username"), password: o.String("password"),
		port: int(o.Int("port")), startup: strings.ToLower(o.String("scan.startup.mode")),
		chunkSize: int(o.Int("scan.incremental.snapshot.chunk.size")), chunkKey: o.String("scan.incremental.snapshot.chunk.key-column"),
		connectTimeout: o.Duration("connect.timeout"), retries: int(o.Int("connect.max-retries")),
		heartbeat: o.Duration("heartbeat.interval"), values: valueOptions{zone: time.UTC, zeroDates: strings.ToUpper(o.String("jdbc.properties.zeroDateTimeBehavior"))},
	}
	var err error
	if pipe {
		c.pipeline, c.tinyInt1Bool, c.schemaChanges = true, o.Bool("treat-tinyint1-as-boolean.enabled"), o.Bool("schema-change.enabled")
		c.tableExpr = o.String("tables")
		if c.tables, err = pipeline.ParseSelector(c.tableExpr); err != nil {
			return nil, fmt.Errorf("option 'tables': %w", err)
		}
		if o.IsSet("tables.exclude") {
			if c.exclude, err = pipeline.ParseSelector(o.String("tables.exclude")); err != nil {
				return nil, fmt.Errorf("option 'tables.exclude': %w", err)
			}
		}
	} else {
		c.databaseExpr, c.tableExpr = o.String("database-name"), o.String("table-name")
		if c.database, err = wholeMatch("database-name", c.databaseExpr); err != nil {
			return nil, err
		}
		if c.table, err = wholeMatch("table-name", c.tableExpr); err != nil {
			return nil, err
		}
	}
	if o.IsSet("server-id") {
		c.serverIDLo, c.serverIDHi, _ = serverIDs(o.String("server-id"))
	} else {
		c.serverIDLo = 5400 + uint32(rand.IntN(1000))
		c.serverIDHi = c.serverIDLo + 63
	}
	if o.IsSet("server-time-zone") {
		c.values.zone, _ = time.LoadLocation(strings.TrimSpace(o.String("server-time-zone")))
	}
	switch c.startup {
	case "specific-offset":
		if o.IsSet("scan.startup.specific-offset.gtid-set") {
			c.specificGTIDs = strings.Join(strings.Fields(o.String("scan.startup.specific-offset.gtid-set")), "")
			break
		}
		if !o.IsSet("scan.startup.specific-offset.file") || !o.IsSet("scan.startup.specific-offset.pos") {
			return nil, fmt.Errorf("'scan.startup.mode' = 'specific-offset' needs 'scan.startup.specific-offset.gtid-set', or 'scan.startup.specific-offset.file' and 'scan.startup.specific-offset.pos' (SHOW MASTER STATUS on the server shows them)")
		}
		c.specificFile = o.String("scan.startup.specific-offset.file")
		c.specificPos = uint32(o.Int("scan.startup.specific-offset.pos"))
	case "timestamp":
		if !o.IsSet("scan.startup.timestamp-millis") {
			return nil, fmt.Errorf("'scan.startup.mode' = 'timestamp' needs 'scan.startup.timestamp-millis'")
		}
		c.startupTS = o.Int("scan.startup.timestamp-millis")
	}
	return c, nil
}
