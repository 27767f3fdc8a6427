package subscribe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
	"github.com/eddystream/eddy/subscribe"
)

// TestLastIsWhereTheSubscriptionStarts checks that a subscription that
// has delivered nothing says where it started, so that one that ends
// before its first event (here: the table is unpublished) tells its
// subscriber to resume there, not after position 0 (which would deliver
// again every event the table keeps, or be refused).
func TestLastIsWhereTheSubscriptionStarts(t *testing.T) {
	h := subscribe.NewHub()
	topic, err := h.Publish("orders", orderType, subscribe.TopicOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= 5; i++ {
		if err := topic.Publish(changelog.Insert, order(t, i, "eu", 1)); err != nil {
			t.Fatal(err)
		}
	}
	now, err := h.Subscribe("orders", subscribe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer now.Close()
	if now.Last() != 5 {
		t.Errorf("a subscription from the next event has Last() = %d, want 5 (the last event before it)", now.Last())
	}
	after2, err := h.Subscribe("orders", subscribe.Options{After: ptr(2)})
	if err != nil {
		t.Fatal(err)
	}
	defer after2.Close()
	if after2.Last() != 2 {
		t.Errorf("a subscription after position 2 has Last() = %d, want 2", after2.Last())
	}

	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	c := openSSE(t, srv.URL+"/v1/subscriptions/orders/events", nil)
	waitSubscribers(t, topic, 3)
	h.Unpublish("orders")
	_, typ, data := c.event(t)
	var e struct {
		Error string
		After int64
	}
	if err := json.Unmarshal([]byte(data), &e); err != nil || typ != "error" {
		t.Fatalf("got a %q event %s (%v), want an error", typ, data, err)
	}
	if e.After != 5 || !strings.Contains(e.Error, "no longer published") {
		t.Errorf("the subscriber was told %+v, want to resume after position 5", e)
	}
}

// waitSubscribers waits until topic has n subscriptions.
func waitSubscribers(t *testing.T, topic *subscribe.Topic, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for topic.Subscribers() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d subscriptions after a minute, want %d", topic.Subscribers(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// streamFixture starts a NATS server with a stream of one subject and
// publishes table name, backed by it, in a hub of its own.
func streamFixture(t *testing.T, name string) (h *subscribe.Hub, js jetstream.JetStream, stream, subject, url string) {
	t.Helper()
	url = startNATS(t)
	nc, err := natsgo.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err = jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, subject = fmt.Sprintf("REVIEW%d", rand.Int64()), fmt.Sprintf("review.%d", rand.Int64())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: stream, Subjects: []string{subject}}); err != nil {
		t.Fatal(err)
	}
	h = subscribe.NewHub()
	topic, err := h.PublishStream(name, orderType, subscribe.StreamOptions{URL: url, Stream: stream, Subject: subject}, subscribe.TopicOptions{Changelog: changelog.InsertOnly})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { topic.Close(); h.Unpublish(name) })
	return h, js, stream, subject, url
}

// TestDurableResumeAfterTheStreamEmptied empties a durable table's stream
// (as its age limit does on an idle table) and resumes after the last
// position a subscriber received: the stream still counts its sequences
// from there, so the subscription is accepted and gets the next message,
// and the table's description keeps its last position.
func TestDurableResumeAfterTheStreamEmptied(t *testing.T) {
	h, js, stream, subject, _ := streamFixture(t, "emptied")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := 1; i <= 3; i++ {
		if _, err := js.Publish(ctx, subject, []byte(fmt.Sprintf(`{"id": %d, "region": "eu", "amount": 1}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	if i := h.Advertise()[0]; i.Last != 3 || i.Oldest != 0 {
		t.Errorf("the emptied table is described with last %d and oldest %d, want 3 and 0", i.Last, i.Oldest)
	}
	s, err := h.Subscribe("emptied", subscribe.Options{After: ptr(3)})
	if err != nil {
		t.Fatalf("resuming after the last position of an emptied stream: %v", err)
	}
	defer s.Close()
	if _, err := js.Publish(ctx, subject, []byte(`{"id": 4, "region": "eu", "amount": 1}`)); err != nil {
		t.Fatal(err)
	}
	if got := next(t, s); !strings.Contains(got, `"position":4,`) {
		t.Errorf("resumed after 3: got %s, want position 4", got)
	}
	if _, err := h.Subscribe("emptied", subscribe.Options{After: ptr(1)}); err == nil || !strings.Contains(err.Error(), "no longer in stream") {
		t.Errorf("resuming after a position the stream no longer keeps: %v", err)
	}
}

// TestDurableSubscriptionFromNowStartsAfterTheLastMessage subscribes to a
// durable table without a position: Last says the last message before the
// subscription, and the first event is the next message.
func TestDurableSubscriptionFromNowStartsAfterTheLastMessage(t *testing.T) {
	h, js, _, subject, _ := streamFixture(t, "from-now")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := 1; i <= 2; i++ {
		if _, err := js.Publish(ctx, subject, []byte(fmt.Sprintf(`{"id": %d, "region": "eu", "amount": 1}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	s, err := h.Subscribe("from-now", subscribe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Last() != 2 {
		t.Errorf("Last() = %d before any event, want 2", s.Last())
	}
	if _, err := js.Publish(ctx, subject, []byte(`{"id": 3, "region": "eu", "amount": 1}`)); err != nil {
		t.Fatal(err)
	}
	if got := next(t, s); !strings.Contains(got, `"position":3,`) {
		t.Errorf("got %s, want position 3", got)
	}
}

// TestPublishSameNameOtherwise publishes a name already published with
// other options: while the first table has publishers it is an error
// naming the difference (rather than one job's events going to the
// other's subscribers under the wrong description); once none is left the
// table is published anew, and its old subscribers are told so.
func TestPublishSameNameOtherwise(t *testing.T) {
	h := subscribe.NewHub()
	first, err := h.Publish("orders", orderType, subscribe.TopicOptions{Changelog: changelog.InsertOnly})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Publish("orders", orderType, subscribe.TopicOptions{Changelog: changelog.Retract}); err == nil || !strings.Contains(err.Error(), "insert-only") {
		t.Errorf("publishing orders again with another changelog while it is published: %v", err)
	}
	if _, err := h.Publish("orders", orderType, subscribe.TopicOptions{Changelog: changelog.InsertOnly, PrimaryKey: []int{0}}); err == nil || !strings.Contains(err.Error(), "primary key") {
		t.Errorf("publishing orders again with a primary key while it is published: %v", err)
	}
	again, err := h.Publish("orders", orderType, subscribe.TopicOptions{Changelog: changelog.InsertOnly})
	if err != nil || again != first {
		t.Fatalf("publishing orders again alike: %v", err)
	}
	sub, err := h.Subscribe("orders", subscribe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	again.Close()
	// No publisher is left: a job publishing other columns takes the name.
	other, err := h.Publish("orders", sessionType(t), subscribe.TopicOptions{})
	if err != nil {
		t.Fatalf("publishing other columns under a name no job publishes any more: %v", err)
	}
	defer other.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := sub.Next(ctx); err == nil || !strings.Contains(err.Error(), "published again") {
		t.Errorf("the old table's subscriber got %v, want an error saying it was published again", err)
	}
	if i := h.Advertise(); len(i) != 1 || len(i[0].Columns) != 1 {
		t.Errorf("advertised %+v, want the new table", i)
	}
}

// sessionType is a row type other than orderType.
func sessionType(t *testing.T) *types.RowType {
	rt, err := types.ParseType("ROW<session STRING>")
	if err != nil {
		t.Fatal(err)
	}
	return rt.Row()
}

// TestPublishStreamSameNameOtherSubject publishes a durable table again
// under the same name and stream but another subject while it is
// published: an error, rather than subscribers reading the first subject
// only.
func TestPublishStreamSameNameOtherSubject(t *testing.T) {
	h, _, stream, subject, url := streamFixture(t, "durable")
	if _, err := h.PublishStream("durable", orderType, subscribe.StreamOptions{URL: url, Stream: stream, Subject: subject + ".other"}, subscribe.TopicOptions{Changelog: changelog.InsertOnly}); err == nil || !strings.Contains(err.Error(), subject) {
		t.Errorf("publishing the durable table again with another subject: %v", err)
	}
}

// runPublish plans a SQL script with the publish connector and, if run,
// runs it, returning the first error.
func runPublish(script string, run bool) error {
	s := sql.NewSession()
	if _, err := s.Execute(script); err != nil {
		return err
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	if err := s.Build(env); err != nil || !run {
		return err
	}
	return env.Execute(context.Background(), "publish")
}

// TestPublishChangelogModeIsEnforced checks that a published table carries
// the changes its 'changelog-mode' tells subscribers of: an updating query
// cannot write an 'insert-only' table, a table with a primary key is
// published as upserts (which is what eddy writes to a keyed sink), and
// 'all' with a key is refused, saying why.
func TestPublishChangelogModeIsEnforced(t *testing.T) {
	suffix := rand.Int64()
	err := runPublish(fmt.Sprintf(`
CREATE TABLE counts (region STRING, n BIGINT) WITH ('connector' = 'publish', 'name' = 'io-%d', 'changelog-mode' = 'insert-only');
INSERT INTO counts SELECT region, COUNT(*) FROM (VALUES (1, 'eu'), (2, 'eu')) AS t(id, region) GROUP BY region;`, suffix), false)
	if err == nil || !strings.Contains(err.Error(), "insert-only") {
		t.Errorf("an updating query into an insert-only published table: %v", err)
	}
	err = runPublish(fmt.Sprintf(`
CREATE TABLE counts (region STRING, n BIGINT, PRIMARY KEY (region) NOT ENFORCED) WITH ('connector' = 'publish', 'name' = 'all-%d', 'changelog-mode' = 'all');
INSERT INTO counts SELECT region, COUNT(*) FROM (VALUES (1, 'eu'), (2, 'eu')) AS t(id, region) GROUP BY region;`, suffix), false)
	if err == nil || !strings.Contains(err.Error(), "'changelog-mode' = 'upsert'") {
		t.Errorf("'changelog-mode' = 'all' with a primary key: %v", err)
	}
	name := fmt.Sprintf("keyed-%d", suffix)
	if err := runPublish(fmt.Sprintf(`
CREATE TABLE counts (region STRING, n BIGINT, PRIMARY KEY (region) NOT ENFORCED) WITH ('connector' = 'publish', 'name' = '%s');
INSERT INTO counts SELECT region, COUNT(*) FROM (VALUES (1, 'eu'), (2, 'eu')) AS t(id, region) GROUP BY region;`, name), true); err != nil {
		t.Fatal(err)
	}
	defer subscribe.Default.Unpublish(name)
	topic, ok := subscribe.Default.Topic(name)
	if !ok {
		t.Fatalf("%s is not published", name)
	}
	if c := topic.Info().Changelog; c != "upsert" {
		t.Errorf("a table with a primary key is published as %q, want upsert", c)
	}
}

// TestPublishOptionErrors checks that options which would be ignored are
// refused, naming the option and what to do.
func TestPublishOptionErrors(t *testing.T) {
	for _, c := range []struct{ with, want string }{
		{`'url' = 'nats://127.0.0.1:4222'`, "'url' applies to a table backed by a stream"},
		{`'stream' = 'S', 'retain' = '5'`, "'retain' applies to a table kept in the process"},
		{`'stream' = 'S', 'subscriber.queue-size' = '5'`, "'subscriber.queue-size' applies to a table kept in the process"},
		{`'serve.nats-prefix' = 'x'`, "'serve.nats-prefix' applies with 'serve.nats-url'"},
		{`'serve.nats-url' = 'nats://127.0.0.1:1', 'password' = 'p'`, "'password' goes with 'username'"},
		{`'username' = 'u', 'password' = 'p'`, "'username' applies with 'stream' or 'serve.nats-url'"},
	} {
		err := runPublish(fmt.Sprintf(`
CREATE TABLE t (id BIGINT) WITH ('connector' = 'publish', 'name' = 'opt-%d', %s);
INSERT INTO t VALUES (1);`, rand.Int64(), c.with), false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error containing %q", c.with, err, c.want)
		}
	}
}

// TestStoppedNATSServiceTellsItsSubscribers stops a hub's NATS service
// while a subscription made over it lasts: the subscriber receives a last
// message saying why it ends, as for any end other than its own
// unsubscribe, instead of events that just stop coming.
func TestStoppedNATSServiceTellsItsSubscribers(t *testing.T) {
	url := startNATS(t)
	h := subscribe.NewHub()
	topic, err := h.Publish("orders", orderType, subscribe.TopicOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer topic.Close()
	stop, err := h.ServeNATS(url, "eddy")
	if err != nil {
		t.Fatal(err)
	}
	nc, err := natsgo.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub := subscribeNATS(t, nc, "orders", map[string]any{})
	waitSubscribers(t, topic, 1)
	stop()
	select {
	case m := <-sub.msgs:
		if m.Header.Get("Eddy-Error") == "" || !strings.Contains(string(m.Data), "no longer served") {
			t.Errorf("the subscriber got %q %s, want a last message saying the service stopped", m.Header, m.Data)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the subscriber was not told that its subscription ended")
	}
	if n := topic.Subscribers(); n != 0 {
		t.Errorf("%d subscriptions left after the service stopped", n)
	}
}
