package postgrescdc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/eddystream/eddy/internal/cdc"
)

// sessionParams are the settings of every connection of the source: the
// text of values, in snapshots and in pgoutput's messages alike (the
// walsender formats them in its session), is then what convert.go reads.
var sessionParams = map[string]string{
	"application_name":   "eddy postgres-cdc",
	"TimeZone":           "UTC",
	"DateStyle":          "ISO, YMD",
	"IntervalStyle":      "postgres",
	"extra_float_digits": "3",
	"bytea_output":       "hex",
}

// pgConfig returns the configuration of a connection to the database; a
// replication connection speaks the replication protocol too. The password
// goes into the configuration, never into a connection string or an error.
func (c *config) pgConfig(replication bool) (*pgconn.Config, error) {
	pc, err := pgconn.ParseConfig("")
	if err != nil {
		return nil, fmt.Errorf("postgres-cdc: connection defaults: %w", err)
	}
	pc.Host, pc.Port, pc.User, pc.Password, pc.Database = c.host, uint16(c.port), c.user, c.password, c.database
	pc.ConnectTimeout = c.connectTimeout
	pc.Fallbacks = nil
	pc.RuntimeParams = map[string]string{}
	for k, v := range sessionParams {
		pc.RuntimeParams[k] = v
	}
	if replication {
		pc.RuntimeParams["replication"] = "database"
	}
	return pc, nil
}

// connect opens a connection, retrying as 'connect.max-retries' says. A
// refused login is not retried.
func (c *config) connect(ctx context.Context, replication bool) (*pgconn.PgConn, error) {
	pc, err := c.pgConfig(replication)
	if err != nil {
		return nil, err
	}
	return cdc.Connect(ctx, c.retries,
		func() (*pgconn.PgConn, error) { return pgconn.ConnectConfig(ctx, pc) },
		// The server answered: trying again gives the same answer.
		func(err error) bool { return pgCode(err) != "" },
		func(err error) error { return c.connError(err, replication) })
}

// pgCode returns the SQLSTATE of a server error, "" for other errors.
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// connError says what a connection failure means and what to do.
func (c *config) connError(err error, replication bool) error {
	switch code := pgCode(err); {
	case code == "28P01" || code == "28000":
		return fmt.Errorf("postgres-cdc: the server at %s refused user '%s' for database '%s': check 'username' and 'password' (and the server's pg_hba.conf): %w",
			c.addr(), c.user, c.database, err)
	case code == "3D000":
		return fmt.Errorf("postgres-cdc: the server at %s has no database '%s' ('%s'): %w", c.addr(), c.database, c.databaseOption(), err)
	case code == "42501" && replication:
		return fmt.Errorf("postgres-cdc: user '%s' may not open a replication connection: give it the REPLICATION attribute (ALTER ROLE %s REPLICATION): %w",
			c.user, quoteIdent(c.user), err)
	case code == "53300":
		return fmt.Errorf("postgres-cdc: the server at %s has no free connection (max_connections, or max_wal_senders for replication connections): %w", c.addr(), err)
	}
	return fmt.Errorf("postgres-cdc: cannot connect to %s (options 'hostname' and 'port'): %w", c.addr(), err)
}

// query runs a statement through the simple protocol and returns its rows
// as text, copied; a NULL is nil.
func query(ctx context.Context, conn *pgconn.PgConn, sql string) ([][][]byte, error) {
	res, err := conn.Exec(ctx, sql).ReadAll()
	if err != nil {
		return nil, err
	}
	var rows [][][]byte
	for _, r := range res {
		if r.Err != nil {
			return nil, r.Err
		}
		for _, row := range r.Rows {
			cp := make([][]byte, len(row))
			for i, v := range row {
				if v != nil {
					cp[i] = append([]byte{}, v...)
				}
			}
			rows = append(rows, cp)
		}
	}
	return rows, nil
}

// exec runs statements, discarding their rows.
func exec(ctx context.Context, conn *pgconn.PgConn, sql string) error {
	_, err := conn.Exec(ctx, sql).ReadAll()
	return err
}

// quoteIdent quotes an identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// quoteLiteral quotes a string literal (standard_conforming_strings on, as
// it has been by default since PostgreSQL 9.1; E” is used otherwise).
func quoteLiteral(s string) string {
	if strings.Contains(s, `\`) {
		return `E'` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `'`, `''`) + `'`
	}
	return `'` + strings.ReplaceAll(s, `'`, `''`) + `'`
}

// checkServer checks that the server can serve a CDC source: wal_level is
// logical and the user may replicate.
func (c *config) checkServer(ctx context.Context, conn *pgconn.PgConn) error {
	rows, err := query(ctx, conn, "SHOW wal_level")
	if err != nil {
		return fmt.Errorf("postgres-cdc: reading wal_level: %w", err)
	}
	if len(rows) == 1 && string(rows[0][0]) != "logical" {
		return fmt.Errorf("postgres-cdc: the server's wal_level is '%s', and logical replication needs 'logical': set wal_level = logical (ALTER SYSTEM SET wal_level = logical, or in postgresql.conf) and restart the server",
			rows[0][0])
	}
	rows, err = query(ctx, conn, "SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user")
	if err != nil {
		return fmt.Errorf("postgres-cdc: reading the user's attributes: %w", err)
	}
	if len(rows) == 1 && string(rows[0][0]) != "t" {
		return fmt.Errorf("postgres-cdc: user '%s' lacks the REPLICATION attribute that logical replication needs: ALTER ROLE %s REPLICATION (as a superuser)",
			c.user, quoteIdent(c.user))
	}
	return nil
}

// slotInfo is a replication slot as pg_replication_slots shows it.
type slotInfo struct {
	exists         bool
	plugin         string
	database       string
	active         bool
	pid            string
	confirmedFlush uint64
}

// slot reads the replication slot called name.
func slot(ctx context.Context, conn *pgconn.PgConn, name string) (slotInfo, error) {
	rows, err := query(ctx, conn, "SELECT plugin, database, active, active_pid, confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = "+quoteLiteral(name))
	if err != nil {
		return slotInfo{}, fmt.Errorf("postgres-cdc: reading replication slot '%s': %w", name, err)
	}
	if len(rows) == 0 {
		return slotInfo{}, nil
	}
	r := rows[0]
	s := slotInfo{exists: true, plugin: string(r[0]), database: string(r[1]), active: string(r[2]) == "t", pid: string(r[3])}
	if r[4] != nil {
		lsn, err := pglogrepl.ParseLSN(string(r[4]))
		if err != nil {
			return slotInfo{}, fmt.Errorf("postgres-cdc: slot '%s' has confirmed_flush_lsn %q: %w", name, r[4], err)
		}
		s.confirmedFlush = uint64(lsn)
	}
	return s, nil
}

// checkSlot checks that an existing slot is one the source can read.
func (c *config) checkSlot(s slotInfo) error {
	switch {
	case s.plugin != "pgoutput":
		return fmt.Errorf("postgres-cdc: replication slot '%s' ('slot.name') decodes with plug-in '%s', and eddy reads 'pgoutput': name another slot, or drop it (SELECT pg_drop_replication_slot('%s'))",
			c.slot, s.plugin, c.slot)
	case s.database != c.database:
		return fmt.Errorf("postgres-cdc: replication slot '%s' ('slot.name') belongs to database '%s', not '%s' ('%s'): name another slot",
			c.slot, s.database, c.database, c.databaseOption())
	case s.active:
		return c.slotInUse(s.pid)
	}
	return nil
}

func (c *config) slotInUse(pid string) error {
	return fmt.Errorf("postgres-cdc: replication slot '%s' ('slot.name') is in use by another process (PID %s): every job (and every source table of a job) needs a 'slot.name' of its own",
		c.slot, pid)
}

// createdSlot is a slot the source created, with its consistent point and
// the name of the snapshot it exported ("" if none).
type createdSlot struct {
	lsn      uint64
	snapshot string
}

// createSlot creates a logical replication slot on a replication
// connection. With export, the snapshot it exports stays valid while conn
// is open and idle.
func (c *config) createSlot(ctx context.Context, conn *pgconn.PgConn, name string, temporary, export bool) (createdSlot, error) {
	action := "NOEXPORT_SNAPSHOT"
	if export {
		action = "EXPORT_SNAPSHOT"
	}
	res, err := pglogrepl.CreateReplicationSlot(ctx, conn, name, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Temporary: temporary, SnapshotAction: action, Mode: pglogrepl.LogicalReplication})
	if err != nil {
		switch pgCode(err) {
		case "53400":
			return createdSlot{}, fmt.Errorf("postgres-cdc: the server has no free replication slot for '%s' (max_replication_slots): drop unused slots (SELECT slot_name, active FROM pg_replication_slots; SELECT pg_drop_replication_slot('...')) or raise max_replication_slots and restart the server: %w",
				name, err)
		case "42710":
			return createdSlot{}, fmt.Errorf("postgres-cdc: replication slot '%s' was created by someone else at the same time: every job needs a 'slot.name' of its own: %w", name, err)
		case "55000":
			return createdSlot{}, fmt.Errorf("postgres-cdc: the server cannot create logical replication slot '%s' (wal_level must be logical): %w", name, err)
		}
		return createdSlot{}, fmt.Errorf("postgres-cdc: creating replication slot '%s': %w", name, err)
	}
	lsn, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return createdSlot{}, fmt.Errorf("postgres-cdc: slot '%s' has consistent point %q: %w", name, res.ConsistentPoint, err)
	}
	return createdSlot{lsn: uint64(lsn), snapshot: res.SnapshotName}, nil
}

// dropSlot drops the source's slot, waiting for its reader to let go.
func (c *config) dropSlot(ctx context.Context) error {
	conn, err := c.connect(ctx, false)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for i := 0; ; i++ {
		err := exec(ctx, conn, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = "+quoteLiteral(c.slot))
		if err == nil {
			return nil
		}
		if pgCode(err) != "55006" || i >= 50 {
			return fmt.Errorf("postgres-cdc: dropping replication slot '%s' ('debezium.slot.drop.on.stop'): %w", c.slot, err)
		}
		time.Sleep(100 * time.Millisecond) // still held by the closing stream
	}
}

// ensurePublication makes sure the publication exists and publishes the
// captured tables, creating it as 'debezium.publication.autocreate.mode'
// says.
func (c *config) ensurePublication(ctx context.Context, conn *pgconn.PgConn, tables []*tableInfo) error {
	rows, err := query(ctx, conn, "SELECT puballtables FROM pg_publication WHERE pubname = "+quoteLiteral(c.publication))
	if err != nil {
		return fmt.Errorf("postgres-cdc: reading publication '%s': %w", c.publication, err)
	}
	if len(rows) == 1 {
		if string(rows[0][0]) == "t" {
			return nil
		}
		pub, err := query(ctx, conn, "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = "+quoteLiteral(c.publication))
		if err != nil {
			return fmt.Errorf("postgres-cdc: reading the tables of publication '%s': %w", c.publication, err)
		}
		in := map[string]bool{}
		for _, r := range pub {
			in[string(r[0])+"."+string(r[1])] = true
		}
		for _, t := range tables {
			if !in[t.id()] {
				return fmt.Errorf("postgres-cdc: publication '%s' ('debezium.publication.name') does not publish table %s, which the source captures: ALTER PUBLICATION %s ADD TABLE %s, or name another publication",
					c.publication, t.id(), quoteIdent(c.publication), t.quoted())
			}
		}
		return nil
	}
	var q string
	switch c.autocreate {
	case "disabled":
		return fmt.Errorf("postgres-cdc: publication '%s' ('debezium.publication.name') does not exist and 'debezium.publication.autocreate.mode' is 'disabled': create it (CREATE PUBLICATION %s FOR TABLE ...) or set the mode to 'filtered'",
			c.publication, quoteIdent(c.publication))
	case "filtered":
		names := make([]string, len(tables))
		for i, t := range tables {
			names[i] = t.quoted()
		}
		q = "CREATE PUBLICATION " + quoteIdent(c.publication) + " FOR TABLE " + strings.Join(names, ", ")
	default:
		q = "CREATE PUBLICATION " + quoteIdent(c.publication) + " FOR ALL TABLES"
	}
	if err := exec(ctx, conn, q); err != nil {
		if pgCode(err) == "42501" {
			return fmt.Errorf("postgres-cdc: user '%s' may not run %s: a publication FOR ALL TABLES needs a superuser, one FOR TABLE the tables' owner; create the publication as such a user, or set 'debezium.publication.autocreate.mode' = 'filtered' for a user that owns the tables: %w",
				c.user, q, err)
		}
		if pgCode(err) == "42710" {
			return nil // created at the same time by another source
		}
		return fmt.Errorf("postgres-cdc: %s: %w", q, err)
	}
	return nil
}
