package main

import (
	"context"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/jackc/pgx/v5"

	"github.com/eddystream/eddy/internal/testservers"
)

// mirrorServers are what an end-to-end test of a job between MariaDB and
// PostgreSQL starts with: the eddy binary, a private server of each, and a
// connection to each, closed when the test ends.
type mirrorServers struct {
	bin string
	m   *testservers.MariaDB
	p   *testservers.Postgres
	my  *client.Conn
	pg  *pgx.Conn
}

// startMirrorServers builds eddy and starts the servers; it skips the test
// under -short.
func startMirrorServers(t *testing.T) *mirrorServers {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the eddy binary against private database servers")
	}
	s := &mirrorServers{bin: buildEddy(t), m: testservers.StartMariaDB(t), p: testservers.StartPostgres(t)}
	var err error
	if s.my, err = client.Connect(s.m.Addr(), "root", "", ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.my.Close() })
	if s.pg, err = pgx.Connect(context.Background(), s.p.DSN("postgres")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.pg.Close(context.Background()) })
	return s
}

// execMy runs q on c, failing the test on an error.
func execMy(t *testing.T, c *client.Conn, q string) {
	t.Helper()
	if _, err := c.Execute(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
