// Package testservers starts private database servers for eddy's tests:
// each on a free port of 127.0.0.1, with a data directory of its own under a
// temporary directory, stopped by its pid when the tests are done. Tests
// never depend on how a server installed on the machine is configured.
//
// A test that needs a server whose binaries are missing is skipped, unless
// the environment variable CI is "true", where it fails: CI installs them.
package testservers

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// MariaDB is a running private MariaDB server with a row-based binary log.
type MariaDB struct {
	// Host and Port are where it listens.
	Host string
	Port int
	// User is "root", with no password.
	User string
	dir  string
	cmd  *exec.Cmd
}

// Addr returns host:port.
func (m *MariaDB) Addr() string { return net.JoinHostPort(m.Host, strconv.Itoa(m.Port)) }

// Dir returns the server's directory (its data directory is Dir()/data).
func (m *MariaDB) Dir() string { return m.dir }

var (
	mariaTemplateOnce sync.Once
	mariaTemplate     string
	mariaTemplateErr  error
)

// missing skips or fails t for a server binary that is not installed.
func missing(t testing.TB, what, pkg string) {
	t.Helper()
	msg := fmt.Sprintf("%s is not installed (apt-get install -y %s)", what, pkg)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// StartMariaDB starts a private MariaDB server for t with the given extra
// server options ("--binlog-row-image=MINIMAL", say) and stops it when t
// ends. The binary log is on, in ROW format, with server id 1.
func StartMariaDB(t testing.TB, extra ...string) *MariaDB {
	t.Helper()
	bin, err := exec.LookPath("mariadbd")
	if err != nil {
		if _, err2 := os.Stat("/usr/sbin/mariadbd"); err2 != nil {
			missing(t, "mariadbd", "mariadb-server")
		}
		bin = "/usr/sbin/mariadbd"
	}
	mariaTemplateOnce.Do(func() { mariaTemplate, mariaTemplateErr = initMariaDBTemplate() })
	if mariaTemplateErr != nil {
		t.Fatal(mariaTemplateErr)
	}
	var last string
	for attempt := 0; attempt < 5; attempt++ {
		m, log, taken := startMariaDB(t, bin, extra)
		if m != nil {
			return m
		}
		if !taken {
			t.Fatalf("mariadbd did not start: %s", log)
		}
		last = log
	}
	t.Fatalf("mariadbd found its port taken five times: %s", last)
	return nil
}

// startMariaDB starts mariadbd on a port that was free a moment ago and
// waits until it takes connections. Another process can take the port in
// that moment (a test server of another package, run at the same time):
// then mariadbd exits, and startMariaDB returns its log and taken = true so
// that the caller tries another port. The server is known to be up only
// when its own Unix socket, in its own directory, takes a connection: a
// connection to the TCP port alone may reach the other process.
func startMariaDB(t testing.TB, bin string, extra []string) (m *MariaDB, log string, taken bool) {
	t.Helper()
	dir, err := os.MkdirTemp("", "eddy-mariadb-")
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if out, err := exec.Command("cp", "-a", mariaTemplate, data).CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		t.Fatalf("copying the MariaDB template: %v: %s", err, out)
	}
	port := freePort(t)
	sock := filepath.Join(dir, "mysqld.sock")
	errLog := filepath.Join(dir, "err.log")
	args := []string{"--no-defaults", "--user=root", "--datadir=" + data, "--port=" + strconv.Itoa(port),
		"--bind-address=127.0.0.1", "--socket=" + sock,
		"--pid-file=" + filepath.Join(dir, "mysqld.pid"), "--log-error=" + errLog,
		"--log-bin=" + filepath.Join(data, "binlog"), "--binlog-format=ROW", "--server-id=1",
		"--innodb-log-file-size=8M", "--innodb-buffer-pool-size=32M", "--skip-name-resolve"}
	args = append(args, extra...)
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		t.Fatalf("starting mariadbd: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	readLog := func() string {
		b, _ := os.ReadFile(errLog)
		return strings.TrimSpace(string(b))
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-exited:
			log := readLog()
			os.RemoveAll(dir)
			return nil, log, strings.Contains(log, "Address already in use") || strings.Contains(log, "Bind on TCP/IP port")
		default:
		}
		if c, err := net.DialTimeout("unix", sock, time.Second); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			log := readLog()
			os.RemoveAll(dir)
			t.Fatalf("mariadbd did not take connections on %s within 60 s:\n%s", sock, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	m = &MariaDB{Host: "127.0.0.1", Port: port, User: "root", dir: dir, cmd: cmd}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		os.RemoveAll(dir)
	})
	return m, "", false
}

// initMariaDBTemplate initialises a data directory once per test process,
// which each server copies.
func initMariaDBTemplate() (string, error) {
	install, err := exec.LookPath("mariadb-install-db")
	if err != nil {
		return "", fmt.Errorf("mariadb-install-db is not installed (apt-get install -y mariadb-server)")
	}
	removeStaleTemplates(os.TempDir())
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", templatePrefix, os.Getpid()))
	if err != nil {
		return "", err
	}
	data := filepath.Join(dir, "data")
	out, err := exec.Command(install, "--no-defaults", "--user=root", "--datadir="+data,
		"--auth-root-authentication-method=normal", "--skip-test-db",
		"--innodb-log-file-size=8M", "--innodb-buffer-pool-size=32M").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("mariadb-install-db: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return data, nil
}

// templatePrefix starts the name of a template's directory, followed by the
// pid of the test process that made it.
const templatePrefix = "eddy-mariadb-template-"

// removeStaleTemplates removes the templates under dir of test processes
// that are gone: Main removes a process's own, but test binaries whose
// TestMain does not call it, or that were killed, leave theirs behind.
func removeStaleTemplates(dir string) {
	paths, _ := filepath.Glob(filepath.Join(dir, templatePrefix+"*-*"))
	for _, p := range paths {
		pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(filepath.Base(p), templatePrefix), "-", 2)[0])
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(p)
		}
	}
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago; a
// variable, so that a test can hand out a port that is taken.
var freePort = func(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Main runs the tests of a package that starts servers and then removes the
// data directory templates it made: call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if mariaTemplate != "" {
		os.RemoveAll(filepath.Dir(mariaTemplate))
	}
	os.Exit(code)
}
