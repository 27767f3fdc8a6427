package rabbitmq_test

import (
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

// proxy forwards TCP connections from a local port to the broker, and can
// cut every connection it carries.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() { _, _ = io.Copy(c, s); c.Close() }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.cut()
	})
	return p
}

// cut closes every connection the proxy carries, as a network failure
// would.
func (p *proxy) cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	n := len(p.conns) / 2
	p.conns = nil
	return n
}

func (p *proxy) url() string { return "amqp://guest:guest@" + p.ln.Addr().String() + "/" }

// TestConnectionLoss copies a queue into another through a job whose
// connections to the broker are cut twice while it runs: the job fails,
// restarts from its checkpoint and reconnects; the source, deduplicating by
// message-id, reads each message once, and the output queue holds every
// record at least once.
func TestConnectionLoss(t *testing.T) {
	conn := connect(t)
	const n = 3000
	in := freshQueue(t, conn, "classic")
	out := freshQueue(t, conn, "classic")
	publishLines(t, conn, in, 0, n, 3, true)
	px := startProxy(t, "127.0.0.1:5672")
	src := openSource(t, map[string]string{"url": px.url(), "queue": in, "format": "json", "scan.deduplication": "message-id", "scan.prefetch-count": "100"})
	sink, err := connector.OpenSink[line](connector.Default, "rabbitmq", map[string]string{"url": px.url(), "queue": out, "format": "json"})
	if err != nil {
		t.Fatal(err)
	}
	mem := connectortest.NewMemorySink[line]()
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()),
		eddy.WithRestartStrategy(eddy.FixedDelayRestart(10, 50*time.Millisecond)))
	s := eddy.FromSource(env, "rabbitmq in", src, eddy.NoWatermarks[line]())
	eddy.WriteTo(s, "memory", mem.Sink())
	eddy.WriteTo(s, "rabbitmq out", sink)
	j := startEnv(t, env)
	for _, at := range []int{n / 3, 2 * n / 3} {
		j.waitFor(t, mem, at)
		if c := px.cut(); c == 0 {
			t.Fatal("the proxy carried no connection to cut")
		}
	}
	j.waitFor(t, mem, n)
	j.stop()
	if r := env.Restarts(); r < 2 {
		t.Errorf("the job restarted %d times after two connection losses, want at least 2", r)
	}
	if got := keys(mem.Committed()); !slices.Equal(got, keys(wantLines(n, 3))) {
		t.Fatalf("the job committed %d records, want each of the %d messages once", len(got), n)
	}
	seen := map[int64]bool{}
	written := readLines(t, conn, out)
	for _, l := range written {
		seen[l.N] = true
	}
	if len(seen) != n {
		t.Fatalf("the output queue holds %d distinct records (%d messages), want all %d", len(seen), len(written), n)
	}
	report(t, mem)
}
