package postgrescdc

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// With 'schema-change.capture' = 'event-trigger', two event triggers of
// the database write every CREATE, ALTER and DROP TABLE into the WAL as a
// transactional logical decoding message (pg_logical_emit_message), which
// pgoutput sends with the 'messages' option (PostgreSQL 14 and later) at
// its place in the DDL's transaction. A ddl_command_end trigger writes,
// for each table a CREATE or ALTER TABLE made or changed, its oid, schema,
// name, replica identity, primary key and columns with their numbers
// (attnum), types and NOT NULL, read from the catalog inside the DDL's
// transaction, so exact at that point of the WAL; a sql_drop trigger
// writes each dropped table. The stream matches columns by number and
// tables by oid: a column whose number has a new name was renamed, a table
// whose oid has a new name was renamed (or moved to another schema).
//
// The function and triggers belong to the database, shared by every job
// that reads it; creating event triggers needs a superuser. The function
// writes nothing unless wal_level is logical, so that it never makes a
// DDL statement fail.

// ddlPrefix is the prefix of the messages of eddy's event triggers; the
// stream reads no other.
const ddlPrefix = "eddy.ddl"

// ddlMessageVersion is the "v" of the messages the function writes.
const ddlMessageVersion = 1

// The names of the function and of the event triggers.
const (
	ddlFunction    = "public.eddy_capture_ddl"
	ddlTriggerEnd  = "eddy_capture_ddl_end"
	ddlTriggerDrop = "eddy_capture_ddl_drop"
)

// ddlFunctionBody is the PL/pgSQL body of the function. A message's "ddl"
// is the command and the table (ALTER TABLE s.t), never the statement's
// text: a client's query string may hold other statements, passwords
// included, and the messages are in the WAL for whoever reads the slot. It has no
// exception handler: a message written in a subtransaction of its own can
// be decoded after the changes that follow it in the transaction.
const ddlFunctionBody = `
DECLARE
  t record;
BEGIN
  IF current_setting('wal_level') <> 'logical' THEN
    RETURN;
  END IF;
  IF TG_EVENT = 'sql_drop' THEN
    FOR t IN SELECT objid, schema_name, object_name FROM pg_event_trigger_dropped_objects()
        WHERE object_type = 'table' AND NOT is_temporary LOOP
      PERFORM pg_logical_emit_message(true, 'eddy.ddl', json_build_object('v', 1, 'op', 'drop',
        'oid', t.objid::bigint, 'schema', t.schema_name, 'table', t.object_name,
        'ddl', 'DROP TABLE ' || quote_ident(t.schema_name) || '.' || quote_ident(t.object_name))::text);
    END LOOP;
    RETURN;
  END IF;
  FOR t IN SELECT DISTINCT c.oid, n.nspname, c.relname, c.relreplident, d.command_tag
      FROM pg_event_trigger_ddl_commands() d
      JOIN pg_class c ON c.oid = d.objid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE d.classid = 'pg_class'::regclass AND c.relkind = 'r' AND c.relpersistence <> 't' LOOP
    PERFORM pg_logical_emit_message(true, 'eddy.ddl', json_build_object('v', 1,
      'op', CASE WHEN t.command_tag = 'ALTER TABLE' THEN 'alter' ELSE 'create' END,
      'oid', t.oid::bigint, 'schema', t.nspname, 'table', t.relname, 'replident', t.relreplident,
      'columns', (SELECT json_agg(json_build_object('n', a.attnum, 'name', a.attname,
          'type', a.atttypid::bigint, 'typmod', a.atttypmod, 'format', format_type(a.atttypid, a.atttypmod),
          'typname', ty.typname, 'typtype', ty.typtype, 'notnull', a.attnotnull,
          'generated', a.attgenerated <> '') ORDER BY a.attnum)
        FROM pg_attribute a JOIN pg_type ty ON ty.oid = a.atttypid
        WHERE a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped),
      'pk', (SELECT json_agg(k.attnum ORDER BY k.ord) FROM pg_index i,
          unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) WHERE i.indrelid = t.oid AND i.indisprimary),
      'ddl', t.command_tag || ' ' || quote_ident(t.nspname) || '.' || quote_ident(t.relname))::text);
  END LOOP;
END
`

// ddlCaptureSQL installs the function and the triggers, replacing older
// ones; a superuser runs it (the source does when its user is one). The
// function is made the superuser's: CREATE OR REPLACE keeps the owner of
// a function that exists, and its owner may change its body, which the
// triggers then run for every user's DDL, superusers' too.
var ddlCaptureSQL = "CREATE OR REPLACE FUNCTION " + ddlFunction + "() RETURNS event_trigger\n" +
	"LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $eddy$" + ddlFunctionBody + "$eddy$;\n" +
	"ALTER FUNCTION " + ddlFunction + "() OWNER TO CURRENT_USER;\n" +
	"DROP EVENT TRIGGER IF EXISTS " + ddlTriggerEnd + ";\n" +
	"DROP EVENT TRIGGER IF EXISTS " + ddlTriggerDrop + ";\n" +
	"CREATE EVENT TRIGGER " + ddlTriggerEnd + " ON ddl_command_end\n" +
	"  WHEN TAG IN ('CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO', 'ALTER TABLE') EXECUTE FUNCTION " + ddlFunction + "();\n" +
	"CREATE EVENT TRIGGER " + ddlTriggerDrop + " ON sql_drop EXECUTE FUNCTION " + ddlFunction + "();\n"

// ddlCaptureInstalled tells whether both triggers exist, fire, and call
// this version's function, owned by a superuser (only its owner and
// superusers may change it).
func ddlCaptureInstalled(ctx context.Context, conn *pgconn.PgConn) (bool, error) {
	rows, err := query(ctx, conn, `SELECT e.evtname, e.evtenabled, p.prosrc FROM pg_event_trigger e JOIN pg_proc p ON p.oid = e.evtfoid
		JOIN pg_roles o ON o.oid = p.proowner
		WHERE e.evtname IN (`+quoteLiteral(ddlTriggerEnd)+`, `+quoteLiteral(ddlTriggerDrop)+`)
		AND o.rolsuper AND NOT p.prosecdef
		AND p.oid = `+quoteLiteral(ddlFunction+"()")+`::regprocedure::oid`)
	if err != nil {
		if pgCode(err) == "42883" { // no such function
			return false, nil
		}
		return false, err
	}
	ok := 0
	for _, r := range rows {
		if (string(r[1]) == "O" || string(r[1]) == "A") && string(r[2]) == ddlFunctionBody {
			ok++
		}
	}
	return ok == 2, nil
}

// ensureDDLCapture makes sure eddy's event triggers are installed in the
// database, installing them (in one transaction) when they are missing,
// disabled or of another version.
func (c *config) ensureDDLCapture(ctx context.Context, conn *pgconn.PgConn) error {
	if !c.ddlTrigger {
		return nil
	}
	rows, err := query(ctx, conn, "SHOW server_version_num")
	if err != nil {
		return fmt.Errorf("postgres-cdc: reading the server's version: %w", err)
	}
	if len(rows) == 1 {
		if n, _ := strconv.Atoi(string(rows[0][0])); n < 140000 {
			return fmt.Errorf("postgres-cdc: 'schema-change.capture' = 'event-trigger' needs PostgreSQL 14 or later (pgoutput's 'messages' option), and the server at %s is version %s: set 'schema-change.capture' = 'relation'",
				c.addr(), rows[0][0])
		}
	}
	installed, err := ddlCaptureInstalled(ctx, conn)
	if err != nil {
		return fmt.Errorf("postgres-cdc: reading the event triggers of database '%s' ('schema-change.capture'): %w", c.database, err)
	}
	if installed {
		return nil
	}
	err = exec(ctx, conn, "BEGIN;\n"+ddlCaptureSQL+"COMMIT")
	if err == nil {
		return nil
	}
	_ = exec(ctx, conn, "ROLLBACK")
	if again, _ := ddlCaptureInstalled(ctx, conn); again {
		return nil // installed at the same time by another source
	}
	if pgCode(err) == "42501" {
		return fmt.Errorf("postgres-cdc: 'schema-change.capture' = 'event-trigger' needs eddy's event triggers in database '%s', and user '%s' may not create them (event triggers need a superuser); have a superuser run this once in database '%s', or set 'schema-change.capture' = 'relation':\n%s: %w",
			c.database, c.user, c.database, strings.TrimSpace(ddlCaptureSQL), err)
	}
	return fmt.Errorf("postgres-cdc: installing eddy's event triggers in database '%s' ('schema-change.capture' = 'event-trigger'): %w", c.database, err)
}
