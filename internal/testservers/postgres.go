package testservers

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Postgres is a running private PostgreSQL server with logical
// replication enabled (wal_level = logical). User postgres connects without
// a password; other users created by a test sign in over TCP with their
// password (scram-sha-256), for tests of authentication.
type Postgres struct {
	Host string
	Port int
	dir  string
	bin  string
}

// DSN returns the connection string of database db as user postgres.
func (p *Postgres) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@%s:%d/%s?sslmode=disable", p.Host, p.Port, db)
}

// Addr returns host:port.
func (p *Postgres) Addr() string { return net.JoinHostPort(p.Host, strconv.Itoa(p.Port)) }

// postgresBin finds the directory of PostgreSQL's server binaries.
func postgresBin() string {
	if d := os.Getenv("EDDY_POSTGRES_BIN"); d != "" {
		return d
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i]
		}
	}
	return ""
}

// asPostgres runs a command as the postgres user when the tests run as
// root (initdb and postgres refuse root).
func asPostgres(name string, args ...string) *exec.Cmd {
	if u, err := user.Current(); err == nil && u.Uid == "0" {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
	}
	return exec.Command(name, args...)
}

// StartPostgres starts a private PostgreSQL server for t and stops it when
// t ends. extra are server settings ("wal_level=replica",
// "max_replication_slots=2") that take the place of the defaults.
func StartPostgres(t testing.TB, extra ...string) *Postgres {
	t.Helper()
	bin := postgresBin()
	if bin == "" {
		missing(t, "PostgreSQL's initdb", "postgresql")
	}
	dir, err := os.MkdirTemp("", "eddy-postgres-")
	if err != nil {
		t.Fatal(err)
	}
	if u, err := user.Current(); err == nil && u.Uid == "0" {
		if out, err := exec.Command("chown", "postgres:postgres", dir).CombinedOutput(); err != nil {
			t.Fatalf("chown %s: %v: %s", dir, err, out)
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := asPostgres(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v: %s", err, out)
	}
	hba := "local all all trust\nhost all postgres 127.0.0.1/32 trust\nhost replication postgres 127.0.0.1/32 trust\n" +
		"host all all 127.0.0.1/32 scram-sha-256\nhost replication all 127.0.0.1/32 scram-sha-256\n"
	if err := os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		t.Fatal(err)
	}
	if u, err := user.Current(); err == nil && u.Uid == "0" {
		if out, err := exec.Command("chown", "postgres:postgres", filepath.Join(data, "pg_hba.conf")).CombinedOutput(); err != nil {
			t.Fatalf("chown pg_hba.conf: %v: %s", err, out)
		}
	}
	// Another process can take the free port before the server binds it
	// (a test server of another package, run at the same time): the server
	// then exits, and it is started again on another port.
	var p *Postgres
	for attempt := 0; ; attempt++ {
		port := freePort(t)
		p = &Postgres{Host: "127.0.0.1", Port: port, dir: dir, bin: bin}
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c wal_level=logical -c max_replication_slots=16 -c max_wal_senders=16 -c fsync=off -c synchronous_commit=off", port, dir)
		for _, e := range extra {
			opts += " -c " + e
		}
		logFile := filepath.Join(dir, fmt.Sprintf("server-%d.log", attempt))
		out, err := asPostgres(filepath.Join(bin, "pg_ctl"), "-D", data, "-l", logFile, "-w", "-t", "60", "-o", opts, "start").CombinedOutput()
		if err == nil {
			break
		}
		log, _ := os.ReadFile(logFile)
		if attempt < 4 && strings.Contains(string(log), "Address already in use") {
			continue
		}
		t.Fatalf("pg_ctl start: %v: %s\n%s", err, out, log)
	}
	t.Cleanup(func() {
		_ = asPostgres(filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop").Run()
		os.RemoveAll(dir)
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", p.Addr(), time.Second)
		if err == nil {
			c.Close()
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("postgres did not listen on %s: %v", p.Addr(), strings.TrimSpace(err.Error()))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
