package jdbc

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"
)

// mysql writes through a go-mysql connection with prepared statements.
type mysql struct {
	c     *config
	conn  *client.Conn
	st    statements
	stmts map[string]*client.Stmt
}

// quoteMySQL quotes a table name, 'database.name' as two identifiers.
func quoteMySQL(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = quoteMySQLIdent(p)
	}
	return strings.Join(parts, ".")
}

// quoteMySQLIdent quotes one identifier: a column's name, dots and all.
func quoteMySQLIdent(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

func newMySQL(c *config, cols []string, key []int) *mysql {
	m := &mysql{c: c}
	table := quoteMySQL(c.table)
	q := make([]string, len(cols))
	ph := make([]string, len(cols))
	for i, col := range cols {
		q[i], ph[i] = quoteMySQLIdent(col), "?"
	}
	m.st.insert = "INSERT INTO " + table + " (" + strings.Join(q, ", ") + ") VALUES (" + strings.Join(ph, ", ") + ")"
	if len(key) > 0 {
		var sets, where []string
		for _, k := range key {
			where = append(where, q[k]+" = ?")
		}
		for i := range cols {
			sets = append(sets, q[i]+" = VALUES("+q[i]+")")
		}
		m.st.upsert = m.st.insert + " ON DUPLICATE KEY UPDATE " + strings.Join(sets, ", ")
		m.st.delete = "DELETE FROM " + table + " WHERE " + strings.Join(where, " AND ")
	}
	return m
}

func (m *mysql) connect(ctx context.Context) error {
	addr := fmt.Sprintf("%s:%d", m.c.url.host, m.c.url.port)
	conn, err := client.ConnectWithContext(ctx, addr, m.c.user, m.c.password, m.c.url.database, m.c.connectTimeout)
	if err != nil {
		return fmt.Errorf("jdbc: connecting to %s as user %q (options 'url', 'username' and 'password'): %w", m.c.where(), m.c.user, err)
	}
	// Text goes and comes as utf8mb4, whatever collation the client asked
	// for when it logged in (one the server may not know, which leaves the
	// session in the server's character set): the server converts it from
	// and to each column's character set. TIMESTAMP_LTZ values go as their
	// UTC wall clock: a TIMESTAMP column reads them in the session's time
	// zone.
	if _, err := conn.Execute("SET NAMES utf8mb4, time_zone = '+00:00'"); err != nil {
		conn.Close()
		return fmt.Errorf("jdbc: setting the session's character set (utf8mb4) and time zone of %s: %w", m.c.where(), err)
	}
	m.conn, m.stmts = conn, map[string]*client.Stmt{}
	return nil
}

func (m *mysql) stmt(q string) (*client.Stmt, error) {
	if s := m.stmts[q]; s != nil {
		return s, nil
	}
	s, err := m.conn.Prepare(q)
	if err != nil {
		return nil, err
	}
	m.stmts[q] = s
	return s, nil
}

func (m *mysql) apply(ctx context.Context, ops []op) error {
	if m.conn == nil {
		if err := m.connect(ctx); err != nil {
			return err
		}
	}
	err := func() error {
		if err := m.conn.Begin(); err != nil {
			return err
		}
		for _, o := range ops {
			s, err := m.stmt(m.st.of(o))
			if err != nil {
				return err
			}
			r, err := s.Execute(o.args...)
			if err != nil {
				return err
			}
			r.Close()
		}
		return m.conn.Commit()
	}()
	if err != nil {
		m.close()
		return fmt.Errorf("jdbc: writing %d changes to %s: %w", len(ops), m.c.where(), err)
	}
	return nil
}

func (m *mysql) close() {
	if m.conn != nil {
		m.conn.Close()
		m.conn = nil
	}
}
