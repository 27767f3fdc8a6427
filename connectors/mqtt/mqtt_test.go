package mqtt_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	_ "github.com/eddystream/eddy/connectors/mqtt"
)

// The tests run against the Mosquitto broker at brokerAddr (MQTT 5 and
// 3.1.1, anonymous). Without it they are skipped, unless CI=true.
const (
	brokerAddr = "127.0.0.1:1883"
	brokerURL  = "tcp://" + brokerAddr
)

// versions are the protocol versions every test of the source and sink
// runs with.
var versions = []string{"5", "3.1.1"}

// needBroker skips the test when Mosquitto is not reachable, or fails it
// under CI.
func needBroker(t testing.TB) {
	t.Helper()
	c, err := net.DialTimeout("tcp", brokerAddr, 2*time.Second)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Mosquitto is not reachable at %s: %v", brokerAddr, err)
		}
		t.Skipf("Mosquitto is not reachable at %s: %v", brokerAddr, err)
	}
	c.Close()
}

// unique returns a name no other test run uses: for topic prefixes and
// client ids.
func unique(t testing.TB) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := strings.NewReplacer("/", "-", " ", "-", ".", "").Replace(t.Name())
	if len(name) > 30 {
		name = name[len(name)-30:]
	}
	return "eddytest-" + name + "-" + hex.EncodeToString(b[:])
}

// line is the record of most tests.
type line struct {
	Part int   `json:"part"`
	N    int64 `json:"n"`
}

func (l line) json() []byte {
	b, _ := json.Marshal(l)
	return b
}

// rawMsg is a message a raw client received.
type rawMsg struct {
	topic    string
	payload  []byte
	qos      byte
	retained bool
	dup      bool
}

// rawClient is a plain MQTT 5 client of the tests, to publish input,
// subscribe to output, and look at sessions.
type rawClient struct {
	t       testing.TB
	cli     *paho.Client
	present bool
	mu      sync.Mutex
	got     []rawMsg
	changed chan struct{}
}

// dialRaw connects a raw client with clientID; clean begins a new session,
// expiry keeps it (seconds) after the connection.
func dialRaw(t testing.TB, clientID string, clean bool, expiry uint32) *rawClient {
	t.Helper()
	conn, err := net.DialTimeout("tcp", brokerAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c := &rawClient{t: t, changed: make(chan struct{})}
	c.cli = paho.NewClient(paho.ClientConfig{ClientID: clientID, Conn: conn,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(p paho.PublishReceived) (bool, error) {
			m := p.Packet
			c.mu.Lock()
			c.got = append(c.got, rawMsg{topic: m.Topic, payload: append([]byte(nil), m.Payload...), qos: m.QoS, retained: m.Retain, dup: m.Duplicate()})
			close(c.changed)
			c.changed = make(chan struct{})
			c.mu.Unlock()
			return true, nil
		}}})
	rm := uint16(65535)
	cp := &paho.Connect{ClientID: clientID, CleanStart: clean, KeepAlive: 30, Properties: &paho.ConnectProperties{ReceiveMaximum: &rm}}
	if expiry > 0 {
		cp.Properties.SessionExpiryInterval = &expiry
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ca, err := c.cli.Connect(ctx, cp)
	if err != nil {
		t.Fatalf("connecting %s: %v", clientID, err)
	}
	c.present = ca.SessionPresent
	return c
}

func (c *rawClient) subscribe(qos byte, filters ...string) {
	c.t.Helper()
	s := &paho.Subscribe{}
	for _, f := range filters {
		s.Subscriptions = append(s.Subscriptions, paho.SubscribeOptions{Topic: f, QoS: qos})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.cli.Subscribe(ctx, s); err != nil {
		c.t.Fatalf("subscribing to %v: %v", filters, err)
	}
}

// publish publishes one message and waits for the broker to have it.
func (c *rawClient) publish(topic string, payload []byte, qos byte, retain bool) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.cli.Publish(ctx, &paho.Publish{Topic: topic, Payload: payload, QoS: qos, Retain: retain}); err != nil {
		c.t.Fatalf("publishing to %s: %v", topic, err)
	}
}

// publishLines publishes lines [from, to) with QoS 1, line n to
// topic(n), and waits until the broker has them all.
func (c *rawClient) publishLines(topic func(n int) string, from, to, parts int) []line {
	c.t.Helper()
	var out []line
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for n := from; n < to; n++ {
		l := line{Part: n % parts, N: int64(n)}
		out = append(out, l)
		p := &paho.Publish{Topic: topic(n), Payload: l.json(), QoS: 1}
		opts := paho.PublishOptions{Method: paho.PublishMethod_AsyncSend}
		if n == to-1 {
			// The broker handles a connection's messages in order: once it
			// acknowledged the last, it has every one.
			opts.Method = paho.PublishMethod_Blocking
		}
		if _, err := c.cli.PublishWithOptions(ctx, p, opts); err != nil {
			c.t.Fatalf("publishing to %s: %v", p.Topic, err)
		}
	}
	return out
}

// received returns what the client received so far.
func (c *rawClient) received() []rawMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]rawMsg(nil), c.got...)
}

// waitUntil waits until done says yes to what the client received, or
// fails the test after timeout.
func (c *rawClient) waitUntil(timeout time.Duration, what string, done func([]rawMsg) bool) []rawMsg {
	c.t.Helper()
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		got, ch := append([]rawMsg(nil), c.got...), c.changed
		c.mu.Unlock()
		if done(got) {
			return got
		}
		select {
		case <-ch:
		case <-deadline:
			c.t.Fatalf("waited %s for %s; received %d messages", timeout, what, len(got))
		}
	}
}

// close disconnects, once the broker has processed the acknowledgements
// the client sent: a broker that hands the session to the next client
// drops what it has not read of the old connection.
func (c *rawClient) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = c.cli.Unsubscribe(ctx, &paho.Unsubscribe{Topics: []string{"eddytest/barrier"}})
	_ = c.cli.Disconnect(&paho.Disconnect{})
}

// dropSession ends the session the broker keeps for clientID.
func dropSession(t testing.TB, clientID string) {
	t.Helper()
	dialRaw(t, clientID, true, 0).close()
}

// clearRetained removes the retained message of topic.
func clearRetained(t testing.TB, topic string) {
	t.Helper()
	c := dialRaw(t, unique(t)+"-clear", true, 0)
	c.publish(topic, nil, 1, true)
	c.close()
}

// presubscribe creates the sessions the source with client-id prefix
// will use, subscribed to filters, so that what is published before the
// job connects waits for it in the broker (Mosquitto queues up to 1000
// messages per session); the sessions are dropped when the test ends.
// Session n is the one of filters[n], or with group, the shared
// subscription session of reader n of readers.
func presubscribe(t testing.TB, prefix string, group string, readers int, filters ...string) {
	t.Helper()
	sessions := len(filters)
	if group != "" {
		sessions = readers
	}
	for n := 0; n < sessions; n++ {
		id := fmt.Sprintf("%s-%d", prefix, n)
		c := dialRaw(t, id, true, 3600)
		if group != "" {
			var shared []string
			for _, f := range filters {
				shared = append(shared, "$share/"+group+"/"+f)
			}
			c.subscribe(1, shared...)
		} else {
			c.subscribe(1, filters[n])
		}
		c.close()
		t.Cleanup(func() { dropSession(t, id) })
	}
}

// job is a job running in the background.
type job struct {
	env    *eddy.Environment
	cancel context.CancelFunc
	done   chan error
}

// quiet keeps the jobs' logs to errors, unless the test is verbose.
func quiet() *slog.Logger {
	level := slog.LevelError
	if testing.Verbose() {
		level = slog.LevelWarn
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// startJob runs env's job until stopped (or three minutes pass).
func startJob(t testing.TB, env *eddy.Environment) *job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	j := &job{env: env, cancel: cancel, done: make(chan error, 1)}
	go func() { j.done <- env.Execute(ctx, "mqtt test") }()
	t.Cleanup(func() { j.stop() })
	return j
}

// stop cancels the job and returns its error (nil once cancelled).
func (j *job) stop() error {
	j.cancel()
	err, ok := <-j.done
	if ok {
		close(j.done)
	}
	if err != nil && strings.Contains(err.Error(), context.Canceled.Error()) {
		return nil
	}
	return err
}

// failed returns the job's error if it has ended.
func (j *job) failed() error {
	select {
	case err := <-j.done:
		close(j.done)
		if err == nil {
			return fmt.Errorf("the job ended")
		}
		return err
	default:
		return nil
	}
}

// committedUntil waits until done says yes to the records sink has
// committed, failing the test if the job ends first or after timeout.
func committedUntil[T any](t testing.TB, j *job, sink interface{ Committed() []T }, timeout time.Duration, what string, done func([]T) bool) []T {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := sink.Committed()
		if done(got) {
			return got
		}
		if err := j.failed(); err != nil {
			t.Fatalf("the job failed while the test waited for %s: %v", what, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s; %d records committed", timeout, what, len(got))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// openSource opens the mqtt source of lines.
func openSource(t testing.TB, opts map[string]string) connector.Source[line] {
	t.Helper()
	src, err := connector.OpenSource[line](connector.Default, "mqtt", opts)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// counts renders how often each N occurs.
func counts(ls []line) map[int64]int {
	m := map[int64]int{}
	for _, l := range ls {
		m[l.N]++
	}
	return m
}
