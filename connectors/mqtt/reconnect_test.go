package mqtt_test

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector/connectortest"
)

// proxy forwards TCP connections to the broker, and cuts them on demand.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startProxy(t testing.TB) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	t.Cleanup(func() {
		ln.Close()
		p.cut()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", brokerAddr)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, b)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(b, c); b.Close() }()
			go func() { _, _ = io.Copy(c, b); c.Close() }()
		}
	}()
	return p
}

func (p *proxy) url() string { return "tcp://" + p.ln.Addr().String() }

// cut closes every connection through the proxy, as a network failure
// would; new ones go through.
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

// TestSourceReconnects cuts the source's connections while it reads: it
// reconnects to its sessions and reads on, every message at least once,
// without the job failing.
func TestSourceReconnects(t *testing.T) {
	needBroker(t)
	const n = 3000
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			p, client := unique(t), unique(t)
			filters := []string{p + "/a", p + "/b"}
			presubscribe(t, client, "", 0, filters...)
			px := startProxy(t)
			src := openSource(t, map[string]string{"url": px.url(), "topic": strings.Join(filters, ","), "client-id": client, "format": "json", "mqtt.version": version})
			mem := connectortest.NewMemorySink[line]()
			env := checkpointed(t, 2, eddy.WithRestartStrategy(eddy.NoRestart()))
			eddy.WriteTo(eddy.FromSource(env, "mqtt in", src, eddy.NoWatermarks[line]()), "memory", mem.Sink())
			j := startJob(t, env)
			pub := dialRaw(t, client+"-pub", true, 0)
			defer pub.close()
			topic := func(n int) string { return filters[n%2] }
			cuts := 0
			for from := 0; from < n; from += 500 {
				pub.publishLines(topic, from, from+500, 2)
				if from == 1000 || from == 2000 {
					committedUntil(t, j, mem, time.Minute, "messages before the cut", func(got []line) bool { return distinct(got) >= from-500 })
					cuts += px.cut()
				}
			}
			got := committedUntil(t, j, mem, time.Minute, "every message", func(got []line) bool { return distinct(got) == n })
			if err := j.stop(); err != nil {
				t.Fatal(err)
			}
			if cuts < 4 {
				t.Fatalf("cut %d connections of the two readers' sessions, want at least 4 in two cuts", cuts)
			}
			t.Logf("MQTT %s: %d messages committed (%d again) through %d cut connections", version, len(got), len(got)-n, cuts)
		})
	}
}

// TestSinkReconnects cuts a writer's connection while publications await
// acknowledgement: the writer publishes again what the broker had not
// acknowledged, and the flush sees every message acknowledged.
func TestSinkReconnects(t *testing.T) {
	needBroker(t)
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			topic := unique(t) + "/out"
			input := sinkInput(4000)
			readBack := collect(t, topic, input)
			px := startProxy(t)
			w, err := openSink(t, map[string]string{"url": px.url(), "topic": topic, "format": "json", "mqtt.version": version}).NewWriter(writerCtx{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			for i := 0; i < len(input); i += 500 {
				if err := w.Write(input[i:i+500], nil); err != nil {
					t.Fatal(err)
				}
				if i == 1000 || i == 2500 {
					if px.cut() != 1 {
						t.Fatal("the writer had no connection to cut")
					}
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			got := readBack()
			t.Logf("MQTT %s: %d messages arrived for %d written", version, len(got), len(input))
		})
	}
}
