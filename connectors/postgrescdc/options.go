package postgrescdc

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/pipeline"
)

var spec = connector.Spec{
	Name: "postgres-cdc",
	Kind: connector.SourceKind,
	Description: "Reads PostgreSQL tables as changelogs through logical replication (pgoutput): a lock-free, " +
		"parallel snapshot of their rows (+I), consistent with a replication slot, then every change from the " +
		"slot (+I, -U, +U, -D), exactly once through checkpoints. The server needs wal_level = logical; " +
		"changelog-mode 'all' needs REPLICA IDENTITY FULL on the tables.",
	Options: []connector.Option{
		{Key: "hostname", Type: connector.String, Required: true, Description: "The host name or IP address of the PostgreSQL server."},
		{Key: "port", Type: connector.Int, Default: "5432", Description: "The server's port.", Check: connector.PortNumber},
		{Key: "username", Type: connector.String, Required: true,
			Description: "The user to connect as; it needs the REPLICATION attribute, SELECT on the tables, and (to create the publication) ownership of the tables or superuser."},
		{Key: "password", Type: connector.String, Secret: true, Description: "The user's password."},
		{Key: "database-name", Type: connector.String, Required: true, Description: "The database to capture (one database: a replication slot belongs to one)."},
		{Key: "schema-name", Type: connector.String, Required: true,
			Description: "The schemas to capture: a name or a regular expression that must match the whole schema name."},
		{Key: "table-name", Type: connector.String, Required: true,
			Description: "The tables to capture: a name or a regular expression that must match the whole table name (or the whole 'schema.table'); tables that match are read as one table."},
		{Key: "slot.name", Type: connector.String, Required: true, Check: slotName,
			Description: "The logical replication slot the source reads changes from: created when missing, kept across restarts (recovery resumes from it). Lower-case letters, digits and underscores; one slot per job."},
		{Key: "decoding.plugin.name", Type: connector.String, Default: "pgoutput",
			Description: "The logical decoding plug-in; eddy reads 'pgoutput', built into PostgreSQL 10 and later."},
		{Key: "changelog-mode", Type: connector.Enum, Default: "all", Values: []string{"all", "upsert"},
			Description: "'all': a retract stream with every kind of change (+I, -U, +U, -D), which needs REPLICA IDENTITY FULL on every table; 'upsert': an upsert stream keyed by the primary key (+I, +U, -D), for tables without it."},
		{Key: "scan.startup.mode", Type: connector.Enum, Default: "initial",
			Values:      []string{"initial", "latest-offset", "committed-offset", "snapshot"},
			Description: "Where reading starts: 'initial' (a snapshot of the tables, then the changes after it), 'latest-offset' (the changes after the start), 'committed-offset' (the changes after the slot's confirmed_flush_lsn), 'snapshot' (the snapshot alone, then the job's input ends)."},
		{Key: "scan.incremental.snapshot.chunk.size", Type: connector.Int, Default: "8096",
			Description: "The rows of a snapshot chunk: tables are split into chunks of their chunk key, read in parallel.", Check: connector.Positive},
		{Key: "scan.incremental.snapshot.chunk.key-column", Type: connector.String,
			Description: "The column tables are split on; by default the first column of the primary key. Tables without a primary key need it."},
		{Key: "scan.snapshot.fetch.size", Type: connector.Int, Default: "1024",
			Description: "Accepted for compatibility: a chunk is read in one query, streamed row by row.", Check: connector.Positive},
		{Key: "heartbeat.interval.ms", Type: connector.Duration, Default: "30 s",
			Description: "How often the source reports its position to the server and asks for the server's: while the captured tables are idle, the position follows the WAL the server writes, so that the slot does not hold it back after the next checkpoint."},
		{Key: "connect.timeout", Type: connector.Duration, Default: "30 s", Description: "How long to wait for a connection to the server."},
		{Key: "connect.max-retries", Type: connector.Int, Default: "3", Description: "How many times a failed connection is retried.", Check: connector.NonNegative},
		{Key: "scan.incremental.snapshot.enabled", Type: connector.Bool, Default: "true",
			Description: "Accepted for compatibility; the snapshot is always incremental (chunked, lock-free and checkpointed)."},
		{Key: "debezium.publication.name", Type: connector.String, Default: "dbz_publication",
			Description: "The publication the slot's changes are filtered by; created when missing (see 'debezium.publication.autocreate.mode')."},
		{Key: "debezium.publication.autocreate.mode", Type: connector.Enum, Default: "all_tables",
			Values:      []string{"all_tables", "filtered", "disabled"},
			Description: "How a missing publication is created: 'all_tables' (FOR ALL TABLES; needs superuser), 'filtered' (FOR TABLE the captured tables; needs their ownership), 'disabled' (it must exist). An existing publication must include the captured tables."},
		{Key: "schema-change.capture", Type: connector.Enum, Default: "relation", Values: []string{"relation", "event-trigger"},
			Description: "How the source learns of schema changes, which logical replication does not carry: 'relation' (pgoutput's relation messages, which show a table's columns before its next change; a renamed column shows as dropped and added when the catalog has changed again since, and DROP and RENAME TABLE are not seen), 'event-trigger' (eddy's event triggers write every CREATE, ALTER and DROP TABLE into the WAL with the table's columns by number: renamed columns and tables and dropped tables are exact; PostgreSQL 14 or later, and a superuser to install the triggers once per database)."},
		{Key: "debezium.slot.drop.on.stop", Type: connector.Bool, Default: "false",
			Description: "Drop the slot when the job stops without failing (cancelled, or its input ended): a later job cannot resume from it. Off by default; for tests and one-off jobs."},
	},
}

var slotNameRE = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

func slotName(v string) error {
	if !slotNameRE.MatchString(v) {
		return fmt.Errorf("want a replication slot name: 1 to 63 lower-case letters, digits and underscores")
	}
	return nil
}

// config is the source's configuration, from its options.
type config struct {
	host, user, password string
	port                 int
	database             string
	schema, table        *regexp.Regexp
	schemaExpr           string
	tableExpr            string
	slot                 string
	upsert               bool // changelog-mode = upsert
	startup              string
	chunkSize            int
	chunkKey             string
	heartbeat            time.Duration
	connectTimeout       time.Duration
	retries              int
	publication          string
	autocreate           string
	dropOnStop           bool
	// ddlTrigger is set by 'schema-change.capture' = 'event-trigger': the
	// stream reads the messages of eddy's event triggers.
	ddlTrigger bool
	// A pipeline's source selects its tables with 'tables' (and
	// 'tables.exclude'), whose patterns name the database first, and
	// follows their schema changes.
	pipeline      bool
	tables        *pipeline.Selector
	exclude       *pipeline.Selector
	schemaChanges bool
}

// captures tells whether the source captures table schema.name.
func (c *config) captures(schema, name string) bool {
	if c.pipeline {
		id := pipeline.TableID{Namespace: c.database, Schema: schema, Table: name}
		return c.tables.Matches(id) && (c.exclude == nil || !c.exclude.Matches(id))
	}
	return c.schema.MatchString(schema) && (c.table.MatchString(name) || c.table.MatchString(schema+"."+name))
}

// databaseOption names the option that gives the database.
func (c *config) databaseOption() string {
	if c.pipeline {
		return "tables"
	}
	return "database-name"
}

// addr returns host:port.
func (c *config) addr() string { return fmt.Sprintf("%s:%d", c.host, c.port) }

func wholeMatch(option, expr string) (*regexp.Regexp, error) {
	re, err := regexp.Compile("^(?:" + expr + ")$")
	if err != nil {
		return nil, fmt.Errorf("postgres-cdc: option '%s' = '%s' is not a regular expression: %w", option, expr, err)
	}
	return re, nil
}

func newConfig(o connector.Options) (*config, error) { return newConfigFor(o, false) }

// newConfigFor reads the options of a SQL table's source or, with pipe
// set, of a pipeline's.
func newConfigFor(o connector.Options, pipe bool) (*config, error) {
	c := &config{
		host: o.String("hostname"), user: o.String("username"), password: o.String("password"),
		port: int(o.Int("port")), slot: o.String("slot.name"),
		startup:   strings.ToLower(o.String("scan.startup.mode")),
		chunkSize: int(o.Int("scan.incremental.snapshot.chunk.size")), chunkKey: o.String("scan.incremental.snapshot.chunk.key-column"),
		connectTimeout: o.Duration("connect.timeout"),
		retries:        int(o.Int("connect.max-retries")), publication: o.String("debezium.publication.name"),
		autocreate: strings.ToLower(o.String("debezium.publication.autocreate.mode")), dropOnStop: o.Bool("debezium.slot.drop.on.stop"),
		ddlTrigger: strings.EqualFold(o.String("schema-change.capture"), "event-trigger"),
	}
	if p := o.String("decoding.plugin.name"); !strings.EqualFold(strings.TrimSpace(p), "pgoutput") {
		return nil, fmt.Errorf("postgres-cdc: option 'decoding.plugin.name' = '%s' is not supported: eddy decodes 'pgoutput', PostgreSQL's built-in plug-in (10 and later); set 'decoding.plugin.name' = 'pgoutput' or leave it out", p)
	}
	if c.publication == "" {
		return nil, fmt.Errorf("postgres-cdc: option 'debezium.publication.name' is empty; name a publication or leave it out for 'dbz_publication'")
	}
	var err error
	if pipe {
		c.pipeline, c.schemaChanges, c.heartbeat = true, o.Bool("schema-change.enabled"), o.Duration("heartbeat.interval")
		c.tableExpr = o.String("tables")
		if c.database, err = tablesDatabase(c.tableExpr); err != nil {
			return nil, err
		}
		if c.tables, err = pipeline.ParseSelector(c.tableExpr); err != nil {
			return nil, fmt.Errorf("postgres-cdc: option 'tables': %w", err)
		}
		if o.IsSet("tables.exclude") {
			if c.exclude, err = pipeline.ParseSelector(o.String("tables.exclude")); err != nil {
				return nil, fmt.Errorf("postgres-cdc: option 'tables.exclude': %w", err)
			}
		}
	} else {
		c.database, c.heartbeat = o.String("database-name"), o.Duration("heartbeat.interval.ms")
		c.upsert = strings.EqualFold(o.String("changelog-mode"), "upsert")
	}
	if c.heartbeat <= 0 {
		c.heartbeat = 30 * time.Second
	}
	if pipe {
		return c, nil
	}
	c.schemaExpr, c.tableExpr = o.String("schema-name"), o.String("table-name")
	if c.schema, err = wholeMatch("schema-name", c.schemaExpr); err != nil {
		return nil, err
	}
	if c.table, err = wholeMatch("table-name", c.tableExpr); err != nil {
		return nil, err
	}
	return c, nil
}

// tablesDatabase returns the database the patterns of 'tables' name: each
// is database.schema.table, with the same database, a plain name (a
// replication slot and a connection belong to one database).
func tablesDatabase(expr string) (string, error) {
	db := ""
	for _, p := range strings.Split(expr, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		var parts []string
		start := 0
		for i := 0; i < len(p); i++ {
			switch {
			case p[i] == '\\' && i+1 < len(p) && p[i+1] == '.':
				i++
			case p[i] == '.':
				parts = append(parts, p[start:i])
				start = i + 1
			}
		}
		parts = append(parts, p[start:])
		if len(parts) != 3 {
			return "", fmt.Errorf("postgres-cdc: option 'tables': pattern %q has %d dot-separated parts; write database.schema.table (app_db.public.\\.* is every table of schema public of database app_db), with '\\.' for a regular expression's '.'",
				p, len(parts))
		}
		if !plainName.MatchString(parts[0]) {
			return "", fmt.Errorf("postgres-cdc: option 'tables': pattern %q names database %q, and the database of a pattern is a name, not a regular expression: the source reads one database (a replication slot belongs to one)",
				p, parts[0])
		}
		if db != "" && parts[0] != db {
			return "", fmt.Errorf("postgres-cdc: option 'tables' names databases %q and %q: the source reads one database (a replication slot belongs to one); capture each database with a pipeline of its own",
				db, parts[0])
		}
		db = parts[0]
	}
	if db == "" {
		return "", fmt.Errorf("postgres-cdc: option 'tables' has no table pattern; write database.schema.table patterns, comma-separated")
	}
	return db, nil
}

// plainName matches a database name without regular expression syntax.
var plainName = regexp.MustCompile(`^[\p{L}\p{N}_$ -]+$`)
