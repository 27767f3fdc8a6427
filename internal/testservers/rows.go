package testservers

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/jackc/pgx/v5"
)

// PostgresRows runs query q on conn and returns its rows as lines of
// fields joined by "|", NULL as "NULL", for tests to compare.
func PostgresRows(ctx context.Context, conn *pgx.Conn, q string) ([]string, error) {
	rows, err := conn.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, err
		}
		cols := make([]string, len(vals))
		for i, v := range vals {
			cols[i] = fieldText(v)
		}
		out = append(out, strings.Join(cols, "|"))
	}
	return out, rows.Err()
}

// MariaDBRows runs query q on conn and returns its rows as PostgresRows
// does.
func MariaDBRows(conn *client.Conn, q string) ([]string, error) {
	r, err := conn.Execute(q)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []string
	for i := range r.Values {
		cols := make([]string, len(r.Values[i]))
		for j := range r.Values[i] {
			cols[j] = fieldText(r.Values[i][j].Value())
		}
		out = append(out, strings.Join(cols, "|"))
	}
	return out, nil
}

func fieldText(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return string(v)
	}
	return fmt.Sprint(v)
}
