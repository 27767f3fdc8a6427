package mysqlcdc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/eddystream/eddy/internal/cdc"
)

// connect opens a connection to the server, retrying as
// 'connect.max-retries' says. Errors never show the password.
func (c *config) connect(ctx context.Context) (*client.Conn, error) {
	open := func() (*client.Conn, error) {
		conn, err := client.ConnectWithContext(ctx, c.addr(), c.user, c.password, "", c.connectTimeout)
		if err != nil {
			return nil, err
		}
		// Statements are utf8mb4 text, whatever collation the client
		// asked for when it logged in (one the server may not know, which
		// leaves the session in the server's character set); results come
		// as the bytes the columns store, as the binary log has them
		// (decodeText). TIMESTAMP values come out in UTC, as the binary log
		// has them.
		if _, err = conn.Execute("SET NAMES utf8mb4, character_set_results = binary, time_zone = '+00:00'"); err != nil {
			conn.Close()
			return nil, err
		}
		return conn, nil
	}
	// A wrong password does not get better.
	denied := func(err error) bool {
		var me *mysql.MyError
		return errors.As(err, &me) && (me.Code == mysql.ER_ACCESS_DENIED_ERROR || me.Code == mysql.ER_DBACCESS_DENIED_ERROR)
	}
	return cdc.Connect(ctx, c.retries, open, denied, c.connError)
}

// connError says what a connection failure means and what to do.
func (c *config) connError(err error) error {
	var me *mysql.MyError
	if errors.As(err, &me) && me.Code == mysql.ER_ACCESS_DENIED_ERROR {
		return fmt.Errorf("mysql-cdc: the server at %s refused user '%s': check 'username' and 'password': %w", c.addr(), c.user, err)
	}
	return fmt.Errorf("mysql-cdc: cannot connect to %s (options 'hostname' and 'port'): %w", c.addr(), err)
}

// variable returns a server variable, "" if the server has none.
func variable(conn *client.Conn, name string) (string, error) {
	r, err := conn.Execute("SHOW GLOBAL VARIABLES LIKE '" + name + "'")
	if err != nil {
		return "", fmt.Errorf("mysql-cdc: reading the server variable %s: %w", name, err)
	}
	defer r.Close()
	if r.RowNumber() == 0 {
		return "", nil
	}
	v := text(r, 0, 1)
	return v, nil
}

// checkServer checks that the server writes a binary log a CDC source can
// read: on, in ROW format, with full row images.
func checkServer(conn *client.Conn) error {
	checks := []struct{ name, want, fix string }{
		{"log_bin", "ON", "start the server with --log-bin (log_bin = ON in my.cnf)"},
		{"binlog_format", "ROW", "set binlog_format = ROW (SET GLOBAL binlog_format = 'ROW', and in my.cnf)"},
		{"binlog_row_image", "FULL", "set binlog_row_image = FULL (SET GLOBAL binlog_row_image = 'FULL', and in my.cnf)"},
	}
	for _, ch := range checks {
		v, err := variable(conn, ch.name)
		if err != nil {
			return err
		}
		if v == "" && ch.name == "binlog_row_image" {
			continue // servers before the variable write full images
		}
		if !strings.EqualFold(v, ch.want) {
			return fmt.Errorf("mysql-cdc: the server's %s is %q, and a CDC source needs %s: %s", ch.name, v, ch.want, ch.fix)
		}
	}
	return nil
}

// isMariaDB tells whether the server is MariaDB.
func isMariaDB(conn *client.Conn) bool {
	return strings.Contains(strings.ToLower(conn.GetServerVersion()), "mariadb")
}

// flavor returns the binlog flavor of the server.
func flavor(conn *client.Conn) string {
	if isMariaDB(conn) {
		return mysql.MariaDBFlavor
	}
	return mysql.MySQLFlavor
}

// binlogEnd returns the end of the server's binary log; for MySQL with the
// GTID set SHOW MASTER STATUS shows executed (Executed_Gtid_Set).
// A set that does not parse (MySQL 8.3's tagged GTIDs, 'uuid:tag:n') is
// left out, as log says once: positions then have no GTID set.
func binlogEnd(conn *client.Conn, log *slog.Logger) (position, error) {
	r, err := conn.Execute("SHOW MASTER STATUS")
	if err != nil {
		// MySQL 8.4 renamed it.
		var err2 error
		if r, err2 = conn.Execute("SHOW BINARY LOG STATUS"); err2 != nil {
			return position{}, fmt.Errorf("mysql-cdc: reading the binlog position (SHOW MASTER STATUS; the user needs REPLICATION CLIENT): %w", err)
		}
	}
	defer r.Close()
	if r.RowNumber() == 0 {
		return position{}, fmt.Errorf("mysql-cdc: the server writes no binary log (SHOW MASTER STATUS is empty): start it with --log-bin")
	}
	file := text(r, 0, 0)
	pos, _ := r.GetUint(0, 1)
	p := position{File: file, Pos: uint32(pos)}
	if !isMariaDB(conn) && len(r.Fields) > 4 {
		p = withExecutedGTIDs(p, text(r, 0, 4), log)
	}
	return p, nil
}

// withExecutedGTIDs returns p with a MySQL server's executed GTID set, if
// it parses; otherwise without one, as log says once.
func withExecutedGTIDs(p position, set string, log *slog.Logger) position {
	set = strings.Join(strings.Fields(set), "")
	if _, err := parseGTIDs(mysql.MySQLFlavor, set); err != nil {
		warnGTIDsOff(log, set, err)
		p.GTIDs, p.HasGTIDs = "", false
		return p
	}
	p.GTIDs, p.HasGTIDs = set, true
	return p
}

// gtidsOff makes warnGTIDsOff log once.
var gtidsOff sync.Once

// warnGTIDsOff logs, once, that the server's GTID set is not read and that
// positions go by file and offset.
func warnGTIDsOff(log *slog.Logger, set string, err error) {
	gtidsOff.Do(func() {
		log.Warn("mysql-cdc: the server's GTID set is not read (tagged GTIDs, 'uuid:tag:n', are not supported): binlog positions carry no GTID set, and a restore resumes at its binary log file and offset, on the same server only",
			"gtid_set", set, "error", err)
	})
}

// currentPosition returns the end of the server's binary log with the GTID
// set executed there. MariaDB shows the set (@@gtid_binlog_pos) apart from
// the position: it is read between two readings of the position, again
// until they agree (no transaction was written in between), and after a few
// tries the server computes it for the position (BINLOG_GTID_POS, which reads
// the binary log file up to it).
func currentPosition(conn *client.Conn, log *slog.Logger) (position, error) {
	maria := isMariaDB(conn)
	for try := 0; ; try++ {
		p, err := binlogEnd(conn, log)
		if err != nil {
			return position{}, err
		}
		var gtids string
		if maria {
			if gtids, err = selectText(conn, "SELECT @@gtid_binlog_pos"); err != nil {
				return position{}, err
			}
		}
		again, err := binlogEnd(conn, log)
		if err != nil {
			return position{}, err
		}
		if again == p {
			if maria {
				p.GTIDs, p.HasGTIDs = gtids, true
			}
			return p, nil
		}
		if try == 4 {
			return gtidsAt(conn, again)
		}
	}
}

// gtidsAt returns a position with the GTID set executed at it where the
// server can tell (MariaDB's BINLOG_GTID_POS); without one otherwise.
func gtidsAt(conn *client.Conn, p position) (position, error) {
	p.GTIDs, p.HasGTIDs = "", false
	if !isMariaDB(conn) {
		return p, nil
	}
	r, err := conn.Execute(fmt.Sprintf("SELECT BINLOG_GTID_POS(%s, %d)", quoteString(p.File), p.Pos))
	if err != nil {
		return position{}, fmt.Errorf("mysql-cdc: reading the GTID set at binlog %s: %w", p, err)
	}
	defer r.Close()
	if r.RowNumber() == 0 {
		return p, nil
	}
	if v, _ := r.GetValue(0, 0); v != nil {
		p.GTIDs, p.HasGTIDs = text(r, 0, 0), true
	}
	return p, nil
}

// selectText returns the one value a query selects, as text.
func selectText(conn *client.Conn, q string) (string, error) {
	r, err := conn.Execute(q)
	if err != nil {
		return "", fmt.Errorf("mysql-cdc: %s: %w", q, err)
	}
	defer r.Close()
	if r.RowNumber() == 0 {
		return "", nil
	}
	return text(r, 0, 0), nil
}

// earliestPosition returns the start of the oldest binary log the server
// has, with the GTID set executed there where the server can tell.
func earliestPosition(conn *client.Conn) (position, error) {
	r, err := conn.Execute("SHOW BINARY LOGS")
	if err != nil {
		return position{}, fmt.Errorf("mysql-cdc: listing the binary logs (SHOW BINARY LOGS; the user needs REPLICATION CLIENT): %w", err)
	}
	defer r.Close()
	if r.RowNumber() == 0 {
		return position{}, fmt.Errorf("mysql-cdc: the server has no binary logs: start it with --log-bin")
	}
	file := text(r, 0, 0)
	return gtidsAt(conn, position{File: file, Pos: 4})
}

// binlogFiles lists the server's binary logs, oldest first.
func binlogFiles(conn *client.Conn) ([]string, error) {
	r, err := conn.Execute("SHOW BINARY LOGS")
	if err != nil {
		return nil, fmt.Errorf("mysql-cdc: listing the binary logs (SHOW BINARY LOGS; the user needs REPLICATION CLIENT): %w", err)
	}
	defer r.Close()
	files := make([]string, 0, r.RowNumber())
	for i := 0; i < r.RowNumber(); i++ {
		f := text(r, i, 0)
		files = append(files, f)
	}
	return files, nil
}

// quote quotes an identifier.
func quote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// quoteString quotes a string literal.
func quoteString(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
}

// text returns a value of a result as a string of its own: the result's
// strings share its buffers, which go back to a pool when it is closed.
func text(r *mysql.Result, row, col int) string {
	s, _ := r.GetString(row, col)
	return strings.Clone(s)
}
