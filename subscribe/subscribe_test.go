package subscribe_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
	"github.com/eddystream/eddy/subscribe"
)

var orderType = func() *types.RowType {
	t, err := types.ParseType("ROW<id BIGINT, region STRING, amount INT>")
	if err != nil {
		panic(err)
	}
	return t.Row()
}()

func order(t testing.TB, id int64, region string, amount int32) types.Row {
	w := types.NewRowWriter(orderType, types.NewArena(0))
	for i, v := range []any{id, region, amount} {
		if err := w.SetValue(i, v); err != nil {
			t.Fatal(err)
		}
	}
	return w.Finish()
}

// next returns the next event's JSON, failing after a minute.
func next(t *testing.T, s *subscribe.Subscription) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := s.Next(ctx)
	if err != nil {
		t.Fatalf("waiting for an event: %v", err)
	}
	return string(e.JSON)
}

func ptr(v int64) *int64 { return &v }

// TestSubscribeInProcess publishes events and subscribes with conditions,
// from now and after a position, and checks what each subscriber gets.
func TestSubscribeInProcess(t *testing.T) {
	h := subscribe.NewHub()
	topic, err := h.Publish("orders", orderType, subscribe.TopicOptions{Retain: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := topic.Publish(changelog.Insert, order(t, 1, "eu", 50)); err != nil {
		t.Fatal(err)
	}
	big, err := h.Subscribe("orders", subscribe.Options{Where: "amount > 100"})
	if err != nil {
		t.Fatal(err)
	}
	all, err := h.Subscribe("orders", subscribe.Options{After: ptr(0)})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range []struct {
		region string
		amount int32
	}{{"us", 150}, {"eu", 10}, {"eu", 300}} {
		if err := topic.Publish(changelog.Insert, order(t, int64(i+2), r.region, r.amount)); err != nil {
			t.Fatal(err)
		}
	}
	if err := topic.Publish(changelog.Delete, order(t, 4, "eu", 300)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"op":"+I","position":2,"row":{"id":2,"region":"us","amount":150}}`,
		`{"op":"+I","position":4,"row":{"id":4,"region":"eu","amount":300}}`,
		`{"op":"-D","position":5,"row":{"id":4,"region":"eu","amount":300}}`,
	} {
		if got := next(t, big); got != want {
			t.Fatalf("the subscriber of amount > 100 got %s, want %s", got, want)
		}
	}
	for p := 1; p <= 5; p++ {
		if got := next(t, all); !strings.Contains(got, fmt.Sprintf(`"position":%d,`, p)) {
			t.Fatalf("the subscriber after position 0 got %s, want position %d", got, p)
		}
	}
	// Four events are kept: positions 2 to 5.
	if _, err := h.Subscribe("orders", subscribe.Options{After: ptr(0)}); err == nil || !strings.Contains(err.Error(), "no longer kept") {
		t.Fatalf("resuming after a position no longer kept: %v", err)
	}
	s, err := h.Subscribe("orders", subscribe.Options{After: ptr(3), Where: "region = 'eu'"})
	if err != nil {
		t.Fatal(err)
	}
	if got := next(t, s); !strings.Contains(got, `"position":4,`) {
		t.Fatalf("resuming after position 3 for region eu gave %s, want position 4", got)
	}
	if _, err := h.Subscribe("orders", subscribe.Options{After: ptr(9)}); err == nil || !strings.Contains(err.Error(), "ahead of its last event") {
		t.Fatalf("resuming after a position not reached: %v", err)
	}
	if _, err := h.Subscribe("orders", subscribe.Options{Where: "amout > 1"}); err == nil || !strings.Contains(err.Error(), "unknown column amout") {
		t.Fatalf("a condition over a column that does not exist: %v", err)
	}
	if _, err := h.Subscribe("ordrs", subscribe.Options{}); err == nil || !strings.Contains(err.Error(), "the published tables are orders") {
		t.Fatalf("a subscription to a table not published: %v", err)
	}
	info := h.Advertise()
	if len(info) != 1 || info[0].Name != "orders" || info[0].Last != 5 || info[0].Oldest != 2 || len(info[0].Columns) != 3 || info[0].Columns[2].Type != "INT" {
		t.Fatalf("advertised %+v", info)
	}
	s.Close()
	if _, err := s.Next(context.Background()); err != subscribe.ErrClosed {
		t.Fatalf("a closed subscription gave %v", err)
	}
}

// TestSlowSubscriberIsCutOff publishes more events than a subscriber
// that reads nothing may queue: the publisher never waits, the subscriber
// receives what was queued and then an error saying where to resume, and
// resuming there gives the rest.
func TestSlowSubscriberIsCutOff(t *testing.T) {
	h := subscribe.NewHub()
	topic, err := h.Publish("orders", orderType, subscribe.TopicOptions{QueueSize: 3, Retain: 100})
	if err != nil {
		t.Fatal(err)
	}
	slow, err := h.Subscribe("orders", subscribe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= 10; i++ {
		if err := topic.Publish(changelog.Insert, order(t, i, "eu", 1)); err != nil {
			t.Fatal(err)
		}
	}
	for p := 1; p <= 3; p++ {
		if got := next(t, slow); !strings.Contains(got, fmt.Sprintf(`"position":%d,`, p)) {
			t.Fatalf("got %s, want position %d", got, p)
		}
	}
	_, err = slow.Next(context.Background())
	if err == nil || !strings.Contains(err.Error(), "fell 3 events behind and was cut off") || !strings.Contains(err.Error(), "after position 3") {
		t.Fatalf("the slow subscriber ended with %v", err)
	}
	if topic.Subscribers() != 0 {
		t.Fatalf("%d subscribers left", topic.Subscribers())
	}
	again, err := h.Subscribe("orders", subscribe.Options{After: ptr(slow.Last())})
	if err != nil {
		t.Fatal(err)
	}
	for p := 4; p <= 10; p++ {
		if got := next(t, again); !strings.Contains(got, fmt.Sprintf(`"position":%d,`, p)) {
			t.Fatalf("resumed: got %s, want position %d", got, p)
		}
	}
}

// sseClient reads a Server-Sent Events stream.
type sseClient struct {
	resp *http.Response
	r    *bufio.Reader
}

func openSSE(t testing.TB, u string, header http.Header) *sseClient {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return &sseClient{resp: resp, r: bufio.NewReader(resp.Body)}
}

// event returns the next event's id, type and data, skipping comments.
func (c *sseClient) event(t testing.TB) (id, typ, data string) {
	t.Helper()
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the event stream: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && typ != "":
			return id, typ, data
		case strings.HasPrefix(line, "id: "):
			id = line[4:]
		case strings.HasPrefix(line, "event: "):
			typ = line[7:]
		case strings.HasPrefix(line, "data: "):
			data = line[6:]
		}
	}
}

// TestSQLJobPublishesOverHTTP runs SQL jobs that publish an insert-only
// table and an updating one with the 'publish' connector, and subscribes
// to them over HTTP with conditions, resuming with Last-Event-ID.
func TestSQLJobPublishesOverHTTP(t *testing.T) {
	s := sql.NewSession()
	if _, err := s.Execute(`
CREATE TABLE big_orders (id BIGINT, region STRING, amount INT) WITH ('connector' = 'publish', 'name' = 'http-orders');
CREATE TABLE per_region (region STRING, n BIGINT, PRIMARY KEY (region) NOT ENFORCED) WITH ('connector' = 'publish', 'name' = 'http-per-region', 'changelog-mode' = 'upsert');
INSERT INTO big_orders SELECT * FROM (VALUES (1, 'eu', 50), (2, 'us', 150), (3, 'eu', 250), (4, 'apac', 120)) AS t(id, region, amount) WHERE amount > 100;
INSERT INTO per_region SELECT region, COUNT(*) FROM (VALUES (1, 'eu'), (2, 'us'), (3, 'eu')) AS t(id, region) GROUP BY region;
`); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	if err := env.Execute(context.Background(), "publish"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(subscribe.Default.Handler())
	t.Cleanup(srv.Close) // after the event streams close (cleanups run last first)
	// The process's hub keeps the tables: remove them, so that the test
	// can run again in the same process.
	t.Cleanup(func() {
		subscribe.Default.Unpublish("http-orders")
		subscribe.Default.Unpublish("http-per-region")
	})

	resp, err := http.Get(srv.URL + "/v1/subscriptions")
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Tables []subscribe.Info }
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	byName := map[string]subscribe.Info{}
	for _, i := range list.Tables {
		byName[i.Name] = i
	}
	if i := byName["http-orders"]; i.Last != 3 || i.Changelog != "all" || len(i.Columns) != 3 {
		t.Fatalf("advertised %+v", i)
	}
	if i := byName["http-per-region"]; i.Changelog != "upsert" || strings.Join(i.PrimaryKey, ",") != "region" {
		t.Fatalf("advertised %+v", i)
	}

	c := openSSE(t, srv.URL+"/v1/subscriptions/http-orders/events?after=0&where="+url.QueryEscape("region <> 'us'"), nil)
	if c.resp.StatusCode != 200 || c.resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", c.resp.StatusCode, c.resp.Header.Get("Content-Type"))
	}
	var got []string
	for range 2 {
		id, typ, data := c.event(t)
		got = append(got, id+" "+typ+" "+data)
	}
	want := []string{
		`2 change {"op":"+I","position":2,"row":{"id":3,"region":"eu","amount":250}}`,
		`3 change {"op":"+I","position":3,"row":{"id":4,"region":"apac","amount":120}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A reconnecting EventSource sends the last id it received.
	c2 := openSSE(t, srv.URL+"/v1/subscriptions/http-orders/events", http.Header{"Last-Event-Id": {"2"}})
	if id, _, data := c2.event(t); id != "3" || !strings.Contains(data, `"apac"`) {
		t.Fatalf("resumed after 2: %s %s", id, data)
	}
	// The updating table: the changes of the count of eu, applied in
	// order, end at 2, and every -U retracts what the table held.
	sub, err := subscribe.Default.Subscribe("http-per-region", subscribe.Options{After: ptr(0), Where: "region = 'eu'"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	held, n := map[string]int64{}, 0
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		e, err := sub.Next(ctx)
		cancel()
		if err != nil {
			break
		}
		n++
		region, count := e.Row.String(0), e.Row.Int64(1)
		switch e.Kind {
		case changelog.Insert, changelog.UpdateAfter:
			held[region] = count
		case changelog.UpdateBefore, changelog.Delete:
			if held[region] != count {
				t.Fatalf("%s retracts %s=%d, which the table does not hold (%v)", e.JSON, region, count, held)
			}
			delete(held, region)
		}
	}
	if len(held) != 1 || held["eu"] != 2 {
		t.Fatalf("after %d events of eu the subscriber holds %v, want eu=2", n, held)
	}
	for _, bad := range []struct{ path, want string }{
		{"/v1/subscriptions/http-orders/events?where=" + url.QueryEscape("amount >"), "expected"},
		{"/v1/subscriptions/http-orders/events?after=x", "is not a position"},
		{"/v1/subscriptions/nope/events", "no such published table"},
	} {
		resp, err := http.Get(srv.URL + bad.path)
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Error string }
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode < 400 || !strings.Contains(e.Error, bad.want) {
			t.Errorf("%s: status %d, error %q; want one containing %q", bad.path, resp.StatusCode, e.Error, bad.want)
		}
	}
}

func startNATS(t testing.TB) string {
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

// natsSubscriber subscribes over NATS and collects what arrives.
type natsSubscriber struct {
	id   string
	msgs chan *natsgo.Msg
}

func subscribeNATS(t *testing.T, nc *natsgo.Conn, name string, req map[string]any) *natsSubscriber {
	t.Helper()
	inbox := natsgo.NewInbox()
	ns := &natsSubscriber{msgs: make(chan *natsgo.Msg, 1000)}
	sub, err := nc.ChanSubscribe(inbox, ns.msgs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	req["deliver"] = inbox
	b, _ := json.Marshal(req)
	m, err := nc.Request("eddy.subscribe."+name, b, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var resp struct{ ID, Error string }
	if err := json.Unmarshal(m.Data, &resp); err != nil || resp.Error != "" {
		t.Fatalf("subscribing to %s: %s %v", name, m.Data, err)
	}
	ns.id = resp.ID
	return ns
}

func (s *natsSubscriber) next(t *testing.T) (pos, data string) {
	t.Helper()
	select {
	case m := <-s.msgs:
		if m.Header.Get("Eddy-Error") != "" {
			t.Fatalf("the subscription ended: %s", m.Data)
		}
		return m.Header.Get("Eddy-Position"), string(m.Data)
	case <-time.After(time.Minute):
		t.Fatal("no event within a minute")
	}
	return "", ""
}

// TestDurableTableOverNATS runs a SQL job publishing a table backed by a
// JetStream stream and served over NATS; a subscriber with a condition
// receives the rows it matches with their stream positions, and one that
// resumes after a position gets exactly the rows after it, also after the
// job has ended and the in-process hub has forgotten the table (the
// stream keeps them).
func TestDurableTableOverNATS(t *testing.T) {
	url := startNATS(t)
	nc, err := natsgo.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"eddy.tables.>"}}); err != nil {
		t.Fatal(err)
	}
	run := func(values string) {
		s := sql.NewSession()
		if _, err := s.Execute(fmt.Sprintf(`
CREATE TABLE orders (id BIGINT, region STRING, amount INT) WITH (
  'connector' = 'publish', 'name' = 'durable-orders', 'stream' = 'ORDERS', 'url' = '%s', 'serve.nats-url' = '%s', 'changelog-mode' = 'insert-only');
INSERT INTO orders SELECT * FROM (VALUES %s) AS t(id, region, amount);
`, url, url, values)); err != nil {
			t.Fatal(err)
		}
		env := eddy.NewEnvironment(eddy.WithParallelism(1))
		if err := s.Build(env); err != nil {
			t.Fatal(err)
		}
		if err := env.Execute(context.Background(), "publish"); err != nil {
			t.Fatal(err)
		}
	}
	run("(1, 'eu', 50), (2, 'us', 150), (3, 'eu', 250)")
	// The job has ended; its table stays published while the process
	// lives, and its events are in the stream.
	m, err := nc.Request("eddy.advertise", nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Tables []subscribe.Info }
	if err := json.Unmarshal(m.Data, &list); err != nil {
		t.Fatal(err)
	}
	var info subscribe.Info
	for _, i := range list.Tables {
		if i.Name == "durable-orders" {
			info = i
		}
	}
	if !info.Durable || info.Stream != "ORDERS" || info.Last != 3 || info.Oldest != 1 {
		t.Fatalf("advertised %s", m.Data)
	}
	eu := subscribeNATS(t, nc, "durable-orders", map[string]any{"where": "region = 'eu'", "after": 0})
	for _, want := range []string{"1", "3"} {
		if pos, data := eu.next(t); pos != want || !strings.Contains(data, `"region":"eu"`) {
			t.Fatalf("got %s %s, want position %s", pos, data, want)
		}
	}
	after2 := subscribeNATS(t, nc, "durable-orders", map[string]any{"after": 2})
	if pos, _ := after2.next(t); pos != "3" {
		t.Fatalf("resuming after 2 gave position %s", pos)
	}
	// A second run of the job appends; live subscribers get it.
	run("(4, 'eu', 400)")
	if pos, data := eu.next(t); pos != "4" || !strings.Contains(data, `"id":4`) {
		t.Fatalf("got %s %s after the second run", pos, data)
	}
	if pos, _ := after2.next(t); pos != "4" {
		t.Fatalf("the resumed subscriber got position %s, want 4", pos)
	}
	// Renew and unsubscribe.
	for _, verb := range []string{"renew", "unsubscribe"} {
		m, err := nc.Request("eddy."+verb+"."+eu.id, nil, 10*time.Second)
		if err != nil || string(m.Data) != `{"ok":true}` {
			t.Fatalf("%s: %s %v", verb, m.Data, err)
		}
	}
	m, err = nc.Request("eddy.renew."+eu.id, nil, 10*time.Second)
	if err != nil || !strings.Contains(string(m.Data), "no subscription") {
		t.Fatalf("renewing an ended subscription: %s %v", m.Data, err)
	}
	// A subscription ends when its unsubscribe is answered: renewing it
	// right after is refused, not answered by a subscription that is
	// still winding down.
	for i := 0; i < 200; i++ {
		s := subscribeNATS(t, nc, "durable-orders", map[string]any{"after": 4})
		if m, err := nc.Request("eddy.unsubscribe."+s.id, nil, 10*time.Second); err != nil || string(m.Data) != `{"ok":true}` {
			t.Fatalf("unsubscribe: %v %v", m, err)
		}
		m, err := nc.Request("eddy.renew."+s.id, nil, 10*time.Second)
		if err != nil || !strings.Contains(string(m.Data), "no subscription") {
			t.Fatalf("renewing subscription %d right after unsubscribing it: %s %v", i, m.Data, err)
		}
	}
	m, err = nc.Request("eddy.subscribe.durable-orders", []byte(`{"where": "amount >"}`), 10*time.Second)
	if err != nil || !strings.Contains(string(m.Data), "error") {
		t.Fatalf("a bad condition: %s %v", m.Data, err)
	}
}
