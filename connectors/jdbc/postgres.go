package jdbc

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// postgres writes through a pgx connection.
type postgres struct {
	c    *config
	conn *pgx.Conn
	st   statements
}

// quotePG quotes a table name, 'schema.name' as two identifiers.
func quotePG(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = quotePGIdent(p)
	}
	return strings.Join(parts, ".")
}

// quotePGIdent quotes one identifier: a column's name, dots and all.
func quotePGIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

func newPostgres(c *config, cols []string, key []int) *postgres {
	p := &postgres{c: c}
	table := quotePG(c.table)
	q := make([]string, len(cols))
	ph := make([]string, len(cols))
	for i, col := range cols {
		q[i], ph[i] = quotePGIdent(col), fmt.Sprintf("$%d", i+1)
	}
	p.st.insert = "INSERT INTO " + table + " (" + strings.Join(q, ", ") + ") VALUES (" + strings.Join(ph, ", ") + ")"
	if len(key) > 0 {
		var keys, sets, where []string
		isKey := map[int]bool{}
		for j, k := range key {
			isKey[k] = true
			keys = append(keys, q[k])
			where = append(where, fmt.Sprintf("%s = $%d", q[k], j+1))
		}
		for i := range cols {
			if !isKey[i] {
				sets = append(sets, q[i]+" = EXCLUDED."+q[i])
			}
		}
		action := "DO NOTHING"
		if len(sets) > 0 {
			action = "DO UPDATE SET " + strings.Join(sets, ", ")
		}
		p.st.upsert = p.st.insert + " ON CONFLICT (" + strings.Join(keys, ", ") + ") " + action
		p.st.delete = "DELETE FROM " + table + " WHERE " + strings.Join(where, " AND ")
	}
	return p
}

func (p *postgres) connect(ctx context.Context) error {
	dsn := fmt.Sprintf("host=%s port=%d", p.c.url.host, p.c.url.port)
	if m := p.c.url.params.Get("sslmode"); m != "" {
		dsn += " sslmode=" + m
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return fmt.Errorf("jdbc: %s: %w", p.c.where(), err)
	}
	// The database's name goes in as it is: in the string it would need
	// quoting.
	cfg.Database, cfg.User, cfg.Password = p.c.url.database, p.c.user, p.c.password
	cfg.ConnectTimeout = p.c.connectTimeout
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("jdbc: connecting to %s as user %q (options 'url', 'username' and 'password'): %w", p.c.where(), p.c.user, err)
	}
	p.conn = conn
	return nil
}

func (p *postgres) apply(ctx context.Context, ops []op) error {
	if p.conn == nil {
		if err := p.connect(ctx); err != nil {
			return err
		}
	}
	var b pgx.Batch
	for _, o := range ops {
		b.Queue(p.st.of(o), o.args...)
	}
	err := pgx.BeginFunc(ctx, p.conn, func(tx pgx.Tx) error {
		return tx.SendBatch(ctx, &b).Close()
	})
	if err != nil {
		p.close()
		return fmt.Errorf("jdbc: writing %d changes to %s: %w", len(ops), p.c.where(), err)
	}
	return nil
}

func (p *postgres) close() {
	if p.conn != nil {
		p.conn.Close(context.Background())
		p.conn = nil
	}
}
