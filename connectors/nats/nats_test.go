package nats_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	_ "github.com/eddystream/eddy/connectors/nats"
	"github.com/eddystream/eddy/sql"
)

type line struct {
	Part int   `json:"part"`
	N    int64 `json:"n"`
}

// startServer starts a NATS server with JetStream on a random local port
// and returns its URL.
func startServer(t testing.TB) string {
	t.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	t.Cleanup(ns.Shutdown)
	return ns.ClientURL()
}

func connect(t testing.TB, url string) (*natsgo.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := natsgo.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

func createStream(t testing.TB, js jetstream.JetStream, name string, subjects ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: subjects, Duplicates: 5 * time.Minute}); err != nil {
		t.Fatal(err)
	}
}

// publishLines publishes lines [from, to) into the stream, line n to
// subject prefix.<n mod parts>.
func publishLines(t testing.TB, js jetstream.JetStream, prefix string, from, to, parts int) []line {
	t.Helper()
	var out []line
	var futures []jetstream.PubAckFuture
	for n := from; n < to; n++ {
		l := line{Part: n % parts, N: int64(n)}
		b, _ := json.Marshal(l)
		f, err := js.PublishAsync(fmt.Sprintf("%s.%d", prefix, l.Part), b)
		if err != nil {
			t.Fatal(err)
		}
		futures = append(futures, f)
		out = append(out, l)
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			t.Fatal(err)
		}
	}
	return out
}

// readStream returns the data of every message of a stream, in order.
func readStream(t testing.TB, js jetstream.JetStream, name string) [][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m.Data)
	}
	return out
}

func readLines(t testing.TB, js jetstream.JetStream, name string) []line {
	t.Helper()
	var out []line
	for _, b := range readStream(t, js, name) {
		var l line
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatalf("stream %s holds %q: %v", name, b, err)
		}
		out = append(out, l)
	}
	return out
}

var streams atomic.Int64

// freshStream creates a stream of a new name taking subjects prefix.>,
// and returns its name and prefix.
func freshStream(t testing.TB, js jetstream.JetStream) (name, prefix string) {
	n := streams.Add(1)
	name, prefix = fmt.Sprintf("S%d", n), fmt.Sprintf("s%d", n)
	createStream(t, js, name, prefix+".>")
	return name, prefix
}

func openSource(t testing.TB, opts map[string]string) connector.Source[line] {
	t.Helper()
	src, err := connector.OpenSource[line](connector.Default, "nats", opts)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestJetStreamSourceConformance(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	var want []line
	for n := 0; n < 3000; n++ {
		want = append(want, line{Part: n % 3, N: int64(n)})
	}
	connectortest.RunSource(t, connectortest.SourceCase[line]{
		Open: func(t testing.TB) (connector.Source[line], func()) {
			name, prefix := freshStream(t, js)
			publishLines(t, js, prefix, 0, 3000, 3)
			return openSource(t, map[string]string{"url": url, "stream": name, "format": "json", "scan.bounded.mode": "latest-offset"}), nil
		},
		Want: want,
		Seq:  func(l line) int64 { return l.N },
	})
}

// TestFilteredJetStreamSourceConformance reads a stream as three splits,
// one per subject filter, two with wildcards.
func TestFilteredJetStreamSourceConformance(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	var want []line
	for n := 0; n < 3000; n++ {
		want = append(want, line{Part: n % 3, N: int64(n)})
	}
	connectortest.RunSource(t, connectortest.SourceCase[line]{
		Open: func(t testing.TB) (connector.Source[line], func()) {
			name, prefix := freshStream(t, js)
			publishLines(t, js, prefix+".k", 0, 3000, 3)
			subjects := fmt.Sprintf("%s.k.0,%s.*.1,*.k.2", prefix, prefix)
			return openSource(t, map[string]string{"url": url, "stream": name, "subject": subjects, "format": "json", "scan.bounded.mode": "latest-offset"}), nil
		},
		Want: want,
		Seq:  func(l line) int64 { return l.N },
	})
}

// TestUnboundedJetStreamSourceConformance reads a stream that grows while
// the job runs.
func TestUnboundedJetStreamSourceConformance(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	var want []line
	for n := 0; n < 2000; n++ {
		want = append(want, line{Part: n % 2, N: int64(n)})
	}
	connectortest.RunSource(t, connectortest.SourceCase[line]{
		Open: func(t testing.TB) (connector.Source[line], func()) {
			name, prefix := freshStream(t, js)
			publishLines(t, js, prefix, 0, 800, 2)
			grow := func() { publishLines(t, js, prefix, 800, 2000, 2) }
			return openSource(t, map[string]string{"url": url, "stream": name, "subject": prefix + ".>", "format": "json"}), grow
		},
		Want:       want,
		Unbounded:  true,
		Seq:        func(l line) int64 { return l.N },
		PauseAfter: 400,
	})
}

func sinkInput(n int) []line {
	var in []line
	for i := 0; i < n; i++ {
		in = append(in, line{Part: i % 5, N: int64(i)})
	}
	return in
}

func TestJetStreamSinkConformance(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	for _, g := range []struct {
		option    string
		guarantee connectortest.Guarantee
	}{{"exactly-once", connectortest.ExactlyOnce}, {"at-least-once", connectortest.AtLeastOnce}} {
		t.Run(g.option, func(t *testing.T) {
			connectortest.RunSink(t, connectortest.SinkCase[line]{
				Open: func(t testing.TB) (connector.Sink[line], func() []line) {
					name, prefix := freshStream(t, js)
					sink, err := connector.OpenSink[line](connector.Default, "nats", map[string]string{
						"url": url, "stream": name, "subject": prefix + ".out", "format": "json", "sink.delivery-guarantee": g.option})
					if err != nil {
						t.Fatal(err)
					}
					return sink, func() []line { return readLines(t, js, name) }
				},
				Input:     sinkInput(3000),
				Guarantee: g.guarantee,
			})
		})
	}
}

func TestOptionsConformance(t *testing.T) {
	connectortest.RunOptions[line](t, connectortest.OptionsCase{
		Name:  "nats",
		Valid: map[string]string{"subject": "orders.created", "format": "json", "password": "pw", "username": "u"},
	})
}

func TestOptionErrors(t *testing.T) {
	for _, c := range []struct {
		sink    bool
		opts    map[string]string
		key     string
		problem string
	}{
		{false, map[string]string{"format": "json"}, "subject", "required without 'stream'"},
		{false, map[string]string{"format": "json", "subject": "a", "scan.startup.mode": "timestamp"}, "scan.startup.mode", "needs a JetStream 'stream'"},
		{false, map[string]string{"format": "json", "stream": "S", "scan.startup.mode": "timestamp"}, "scan.startup.timestamp-millis", "is required"},
		{false, map[string]string{"format": "json", "stream": "S", "scan.startup.specific-offset": "3"}, "scan.startup.specific-offset", "is not 'specific-offset'"},
		{false, map[string]string{"format": "json", "stream": "S", "subject": "a..b"}, "subject", "not a subject"},
		{false, map[string]string{"format": "json", "subject": "a", "sink.delivery-guarantee": "none"}, "sink.delivery-guarantee", "option of sinks"},
		{true, map[string]string{"format": "json", "stream": "S"}, "subject", "required for a sink"},
		{true, map[string]string{"format": "json", "subject": "a.*"}, "subject", "wildcard"},
		{true, map[string]string{"format": "json", "subject": "a", "sink.delivery-guarantee": "exactly-once"}, "sink.delivery-guarantee", "at most once"},
		{true, map[string]string{"format": "json", "subject": "a", "password": "secret-pw"}, "password", "without 'username'"},
		{false, map[string]string{"format": "json", "subject": "a", "url": "http://x:1"}, "url", "scheme"},
	} {
		var err error
		if c.sink {
			_, err = connector.OpenSink[line](connector.Default, "nats", c.opts)
		} else {
			_, err = connector.OpenSource[line](connector.Default, "nats", c.opts)
		}
		var oe *connector.OptionError
		if !errors.As(err, &oe) || oe.Key != c.key || !strings.Contains(err.Error(), c.problem) {
			t.Errorf("%v: got %v, want an error of option '%s' saying %q", c.opts, err, c.key, c.problem)
		}
		if err != nil && strings.Contains(err.Error(), "secret-pw") {
			t.Errorf("%v: the error shows the password: %v", c.opts, err)
		}
	}
}

// TestSQLJetStreamToJetStream runs INSERT INTO a JetStream table SELECT
// from another, in JSON.
func TestSQLJetStreamToJetStream(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	createStream(t, js, "ORDERS", "orders.>")
	createStream(t, js, "BIG", "big.orders")
	var futures []jetstream.PubAckFuture
	for i := 0; i < 500; i++ {
		b := fmt.Sprintf(`{"id": %d, "customer": "c%d", "amount": %d}`, i, i%7, i)
		f, err := js.PublishAsync(fmt.Sprintf("orders.%d", i%4), []byte(b))
		if err != nil {
			t.Fatal(err)
		}
		futures = append(futures, f)
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			t.Fatal(err)
		}
	}
	s := sql.NewSession(sql.WithParallelism(2))
	script := fmt.Sprintf(`
CREATE TABLE orders (id BIGINT, customer STRING, amount BIGINT) WITH (
  'connector' = 'nats', 'url' = '%[1]s', 'stream' = 'ORDERS', 'subject' = 'orders.>',
  'format' = 'json', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE big_orders (id BIGINT, customer STRING, doubled BIGINT) WITH (
  'connector' = 'nats', 'url' = '%[1]s', 'stream' = 'BIG', 'subject' = 'big.orders', 'format' = 'json');
INSERT INTO big_orders SELECT id, UPPER(customer), amount * 2 FROM orders WHERE amount >= 100;
`, url)
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := env.Execute(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	type out struct {
		ID       int64  `json:"id"`
		Customer string `json:"customer"`
		Doubled  int64  `json:"doubled"`
	}
	var got []string
	for _, b := range readStream(t, js, "BIG") {
		var o out
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		got = append(got, fmt.Sprintf("%d %s %d", o.ID, o.Customer, o.Doubled))
	}
	var want []string
	for i := 100; i < 500; i++ {
		want = append(want, fmt.Sprintf("%d C%d %d", i, i%7, 2*i))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("stream BIG holds %d messages, want %d; first: %v", len(got), len(want), got[:min(5, len(got))])
	}
}

// TestExactlyOnceAcrossFailures copies a stream into another through a map
// that panics three times; the output stream holds each record once, as a
// run without failures does.
func TestExactlyOnceAcrossFailures(t *testing.T) {
	const n = 20000
	url := startServer(t)
	_, js := connect(t, url)
	createStream(t, js, "IN", "in.>")
	publishLines(t, js, "in", 0, n, 4)
	run := func(out string, panicAt map[int64]bool) int {
		createStream(t, js, out, strings.ToLower(out))
		env := eddy.NewEnvironment(eddy.WithParallelism(2),
			eddy.WithCheckpointing(10*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()),
			eddy.WithRestartStrategy(eddy.FixedDelayRestart(10, 5*time.Millisecond)))
		var mu sync.Mutex
		src := openSource(t, map[string]string{"url": url, "stream": "IN", "format": "json", "subject": "in.0,in.1,in.2,in.3", "scan.bounded.mode": "latest-offset"})
		sink, err := connector.OpenSink[line](connector.Default, "nats", map[string]string{"url": url, "stream": out, "subject": strings.ToLower(out), "format": "json"})
		if err != nil {
			t.Fatal(err)
		}
		s := eddy.FromSource(env, "nats in", src, eddy.NoWatermarks[line]())
		s = eddy.Map(s, func(l line) line {
			mu.Lock()
			boom := panicAt[l.N]
			delete(panicAt, l.N)
			mu.Unlock()
			if boom {
				panic(fmt.Sprintf("injected failure at record %d", l.N))
			}
			return line{Part: l.Part, N: l.N * 10}
		})
		eddy.WriteTo(s, "nats out", sink)
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		if err := env.Execute(ctx, "copy"); err != nil {
			t.Fatal(err)
		}
		return env.Restarts()
	}
	key := func(l line) string { return fmt.Sprintf("%d/%d", l.Part, l.N) }
	render := func(ls []line) []string {
		out := make([]string, len(ls))
		for i, l := range ls {
			out[i] = key(l)
		}
		slices.Sort(out)
		return out
	}
	if r := run("CLEAN", nil); r != 0 {
		t.Fatalf("the failure-free run restarted %d times", r)
	}
	want := render(readLines(t, js, "CLEAN"))
	if len(want) != n {
		t.Fatalf("the failure-free run wrote %d records, want %d", len(want), n)
	}
	// The failures are in records of different splits, which two subtasks
	// read at once: two that strike together cost one restart.
	failAt := map[int64]bool{3000: true, 9001: true, 15002: true}
	if r := run("FAILING", failAt); r < 2 || r > 3 || len(failAt) != 0 {
		t.Fatalf("the job restarted %d times and %d injected failures never struck; want 2 or 3 restarts and none left", r, len(failAt))
	}
	got := render(readLines(t, js, "FAILING"))
	if !slices.Equal(got, want) {
		seen := map[string]int{}
		var dups []string
		for _, k := range got {
			if seen[k]++; seen[k] == 2 {
				dups = append(dups, k)
			}
		}
		t.Fatalf("the output stream holds %d records (duplicates: %d, e.g. %v), want the failure-free run's %d", len(got), len(dups), dups[:min(5, len(dups))], len(want))
	}
}

// TestCoreWildcardSubscription reads core NATS subjects with a wildcard
// and writes them to a core subject.
func TestCoreWildcardSubscription(t *testing.T) {
	url := startServer(t)
	nc, _ := connect(t, url)
	got, err := nc.SubscribeSync("copied")
	if err != nil {
		t.Fatal(err)
	}
	src := openSource(t, map[string]string{"url": url, "subject": "sensors.*.temp", "format": "json"})
	sink, err := connector.OpenSink[line](connector.Default, "nats", map[string]string{"url": url, "subject": "copied", "format": "json"})
	if err != nil {
		t.Fatal(err)
	}
	mem := connectortest.NewMemorySink[line]()
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(10*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	s := eddy.FromSource(env, "core", src, eddy.NoWatermarks[line]())
	eddy.WriteTo(s, "memory", mem.Sink())
	eddy.WriteTo(s, "core out", sink)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "core") }()
	// Core NATS delivers only while the subscription runs: publish until
	// 200 matching messages have arrived.
	const enough = 200
	sent := 0
	for len(mem.Committed()) < enough {
		select {
		case err := <-done:
			t.Fatalf("the job ended: %v", err)
		default:
		}
		for i := 0; i < 50; i++ {
			b, _ := json.Marshal(line{Part: sent % 3, N: int64(sent)})
			_ = nc.Publish(fmt.Sprintf("sensors.%d.temp", sent%3), b)
			_ = nc.Publish("sensors.x.humidity", []byte(`{"part": -1, "n": -1}`))
			_ = nc.Publish("other.temp", []byte(`{"part": -2, "n": -2}`))
			sent++
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	recs := mem.Committed()
	last := int64(-1)
	for _, l := range recs {
		if l.N < 0 {
			t.Fatalf("a message of a subject the wildcard does not match arrived: %+v", l)
		}
		if l.N <= last {
			t.Fatalf("messages arrived out of order: %d after %d", l.N, last)
		}
		last = l.N
	}
	// What the job read, it published to the core subject.
	copied := 0
	for {
		m, err := got.NextMsg(100 * time.Millisecond)
		if err != nil {
			break
		}
		var l line
		if err := json.Unmarshal(m.Data, &l); err != nil || l.N < 0 {
			t.Fatalf("the sink published %q", m.Data)
		}
		copied++
	}
	if copied < len(recs) {
		t.Fatalf("the core sink published %d messages; the job read %d", copied, len(recs))
	}
}

// TestMalformedMessages sends a bad message to a job: it fails naming the
// stream and sequence, or, with dead letters, sets the message aside and
// goes on.
func TestMalformedMessages(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	createStream(t, js, "BAD", "bad.>")
	publishLines(t, js, "bad", 0, 10, 1)
	if _, err := js.Publish(context.Background(), "bad.0", []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	publishLines(t, js, "bad", 10, 20, 1)
	read := func(deadLetters bool) ([]line, []connector.DeadLetter, error) {
		opts := map[string]string{"url": url, "stream": "BAD", "format": "json", "scan.bounded.mode": "latest-offset"}
		mem := connectortest.NewMemorySink[line]()
		dead := connectortest.NewMemorySink[connector.DeadLetter]()
		env := eddy.NewEnvironment(eddy.WithParallelism(1))
		var sopts []eddy.SourceOption
		if deadLetters {
			sopts = append(sopts, eddy.OnBadRecord(eddy.DeadLetterBadRecords))
		}
		s := eddy.FromSource(env, "bad", openSource(t, opts), eddy.NoWatermarks[line](), sopts...)
		eddy.WriteTo(s, "memory", mem.Sink())
		if deadLetters {
			eddy.WriteTo(eddy.DeadLetters(s), "dead letters", dead.Sink())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := env.Execute(ctx, "bad")
		return mem.Committed(), dead.Committed(), err
	}
	if _, _, err := read(false); err == nil || !strings.Contains(err.Error(), "stream BAD sequence 11") {
		t.Fatalf("reading a malformed message: %v, want an error naming stream BAD sequence 11", err)
	}
	got, dead, err := read(true)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 20 {
		t.Fatalf("with dead letters the job read %d records, want 20", len(got))
	}
	if len(dead) != 1 || dead[0].Raw != "{not json" || !strings.Contains(dead[0].Location, "sequence 11") {
		t.Fatalf("dead letters: %+v, want the malformed message at sequence 11", dead)
	}
}

// TestStartupModes starts reading a stream at its end, at a sequence and
// at a time.
func TestStartupModes(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	createStream(t, js, "MODES", "modes.>")
	publishLines(t, js, "modes", 0, 5, 1)
	time.Sleep(20 * time.Millisecond)
	at := time.Now().UnixMilli()
	time.Sleep(20 * time.Millisecond)
	publishLines(t, js, "modes", 5, 10, 1)
	read := func(extra map[string]string) []int64 {
		opts := map[string]string{"url": url, "stream": "MODES", "format": "json", "scan.bounded.mode": "latest-offset"}
		for k, v := range extra {
			opts[k] = v
		}
		mem := connectortest.NewMemorySink[line]()
		env := eddy.NewEnvironment(eddy.WithParallelism(1))
		eddy.WriteTo(eddy.FromSource(env, "modes", openSource(t, opts), eddy.NoWatermarks[line]()), "memory", mem.Sink())
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := env.Execute(ctx, "modes"); err != nil {
			t.Fatalf("%v: %v", extra, err)
		}
		var ns []int64
		for _, l := range mem.Committed() {
			ns = append(ns, l.N)
		}
		slices.Sort(ns)
		return ns
	}
	for _, c := range []struct {
		opts map[string]string
		want []int64
	}{
		{map[string]string{}, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{map[string]string{"scan.startup.mode": "latest-offset"}, nil},
		{map[string]string{"scan.startup.mode": "specific-offset", "scan.startup.specific-offset": "8"}, []int64{7, 8, 9}},
		{map[string]string{"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": fmt.Sprint(at)}, []int64{5, 6, 7, 8, 9}},
		{map[string]string{"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": fmt.Sprint(time.Now().Add(time.Hour).UnixMilli())}, nil},
	} {
		if got := read(c.opts); !slices.Equal(got, c.want) {
			t.Errorf("%v: read %v, want %v", c.opts, got, c.want)
		}
	}
}
