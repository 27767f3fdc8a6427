package testservers

import (
	"context"
	"io"
	"net"
	"testing"

	"github.com/jackc/pgx/v5"
)

// takenPort makes the next call of freePort or freePorts hand out a port that another
// listener holds, one that greets like a NATS server, and returns it.
func takenPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, "INFO {}\r\n")
			c.Close()
		}
	}()
	held := l.Addr().(*net.TCPAddr).Port
	real, realN := freePort, freePorts
	t.Cleanup(func() { freePort, freePorts = real, realN })
	first := true
	freePort = func(t testing.TB) int {
		if first {
			first = false
			return held
		}
		return real(t)
	}
	freePorts = func(t testing.TB, n int) []int {
		ports := realN(t, n)
		if first {
			first = false
			ports[0] = held
		}
		return ports
	}
	return held
}

// TestMariaDBPortTaken starts a server whose first port is taken by
// another process: the server starts on another port, and what answers
// there is MariaDB's greeting (packet number 0, protocol 10), not the
// other process's.
func TestMariaDBPortTaken(t *testing.T) {
	held := takenPort(t)
	m := StartMariaDB(t)
	if m.Port == held {
		t.Fatalf("the server says it listens on %d, the port another process holds", held)
	}
	c, err := net.Dial("tcp", m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var head [5]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		t.Fatal(err)
	}
	if head[3] != 0 || head[4] != 10 {
		t.Fatalf("%s greets with % x, not a MySQL protocol 10 greeting", m.Addr(), head)
	}
}

// TestPostgresPortTaken starts a server whose first port is taken by
// another process: the server starts on another port and takes queries.
func TestPostgresPortTaken(t *testing.T) {
	held := takenPort(t)
	p := StartPostgres(t)
	if p.Port == held {
		t.Fatalf("the server says it listens on %d, the port another process holds", held)
	}
	c, err := pgx.Connect(context.Background(), p.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var one int
	if err := c.QueryRow(context.Background(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1: %d, %v", one, err)
	}
}

// TestSeaweedFSPortTaken starts a server one of whose first ports is
// taken by another process: the server starts on other ports and answers
// S3 requests.
func TestSeaweedFSPortTaken(t *testing.T) {
	takenPort(t)
	s := StartSeaweedFS(t)
	s.CreateBucket(t, "taken")
}
