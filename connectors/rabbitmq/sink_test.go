package rabbitmq_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/sql"
)

func TestSinkConformance(t *testing.T) {
	conn := connect(t)
	var in []line
	for i := 0; i < 3000; i++ {
		in = append(in, line{Part: i % 5, N: int64(i)})
	}
	connectortest.RunSink(t, connectortest.SinkCase[line]{
		Open: func(t testing.TB) (connector.Sink[line], func() []line) {
			q := freshQueue(t, conn, "classic")
			sink, err := connector.OpenSink[line](connector.Default, "rabbitmq", map[string]string{"url": brokerURL, "queue": q, "format": "json"})
			if err != nil {
				t.Fatal(err)
			}
			return sink, func() []line { return readLines(t, conn, q) }
		},
		Input:     in,
		Guarantee: connectortest.AtLeastOnce,
	})
}

// freshExchange declares an exchange of the kind with a new name, deleted
// when the test ends.
func freshExchange(t *testing.T, conn *amqp.Connection, kind string) string {
	t.Helper()
	name := fmt.Sprintf("eddy-test-%s-%s", kind, randomSuffix())
	ch := channel(t, conn)
	defer ch.Close()
	if err := ch.ExchangeDeclare(name, kind, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, err := amqp.Dial(brokerURL); err == nil {
			defer c.Close()
			if ch, err := c.Channel(); err == nil {
				_ = ch.ExchangeDelete(name, false, false)
			}
		}
	})
	return name
}

// write writes lines through a writer of a sink of opts and flushes.
func write(t *testing.T, opts map[string]string, lines []line, timestamps []int64) error {
	t.Helper()
	sink, err := connector.OpenSink[line](connector.Default, "rabbitmq", opts)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sink.NewWriter(connectortest.WriterContext{Name: "rabbitmq out"})
	if err != nil {
		return err
	}
	defer w.Close()
	if err := w.Write(lines, timestamps); err != nil {
		return err
	}
	return w.Flush()
}

// TestSinkToHeadersExchange publishes to a headers exchange: the sink
// declares the queue and binds it with the binding's arguments, and the
// messages carry the sink's headers, unique message-ids, the content type
// of the format, persistence and the records' timestamps.
func TestSinkToHeadersExchange(t *testing.T) {
	conn := connect(t)
	ex := freshExchange(t, conn, "headers")
	q := fmt.Sprintf("eddy-test-bound-%s", randomSuffix())
	deleteAfter(t, conn, q)
	opts := map[string]string{"url": brokerURL, "exchange": ex, "queue": q, "format": "json",
		"binding.arguments": "x-match=all,region=eu", "sink.headers": "region=eu,kind=order"}
	ts := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC).UnixMilli()
	if err := write(t, opts, []line{{N: 1}, {N: 2}, {N: 3}}, []int64{ts, ts, ts}); err != nil {
		t.Fatal(err)
	}
	got := readQueue(t, conn, q)
	if len(got) != 3 {
		t.Fatalf("queue %s holds %d messages, want 3", q, len(got))
	}
	ids := map[string]bool{}
	for i, d := range got {
		var l line
		if err := json.Unmarshal(d.Body, &l); err != nil || l.N != int64(i+1) {
			t.Fatalf("message %d is %q, want the record n=%d", i, d.Body, i+1)
		}
		if d.Headers["region"] != "eu" || d.Headers["kind"] != "order" {
			t.Errorf("message %d has headers %v, want region=eu and kind=order", i, d.Headers)
		}
		if d.ContentType != "application/json" || d.DeliveryMode != amqp.Persistent || !d.Timestamp.Equal(time.UnixMilli(ts)) {
			t.Errorf("message %d: content type %q, delivery mode %d, timestamp %v; want application/json, persistent, %v", i, d.ContentType, d.DeliveryMode, d.Timestamp, time.UnixMilli(ts))
		}
		if d.MessageId == "" || ids[d.MessageId] {
			t.Errorf("message %d has message-id %q, empty or not unique", i, d.MessageId)
		}
		ids[d.MessageId] = true
	}
	// A message the binding does not match is returned: the flush fails.
	opts["sink.headers"] = "region=us"
	err := write(t, opts, []line{{N: 4}}, nil)
	if err == nil || !strings.Contains(err.Error(), "no queue takes it") || !strings.Contains(err.Error(), "sink.mandatory") {
		t.Fatalf("publishing a message no binding matches: %v, want an error saying no queue takes it", err)
	}
	opts["sink.mandatory"] = "false"
	if err := write(t, opts, []line{{N: 4}}, nil); err != nil {
		t.Fatalf("publishing a message no binding matches with 'sink.mandatory' = 'false': %v", err)
	}
	if n := len(readQueue(t, conn, q)); n != 3 {
		t.Fatalf("queue %s holds %d messages, want 3", q, n)
	}
}

// TestSinkErrors opens sinks of an exchange that does not exist and of a
// queue that does not exist and may not be declared.
func TestSinkErrors(t *testing.T) {
	connect(t)
	missing := "eddy-test-missing-" + randomSuffix()
	for _, c := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"exchange": missing}, "exchange \"" + missing + "\" does not exist"},
		{map[string]string{"queue": missing, "queue.declare": "false"}, "queue \"" + missing + "\" does not exist"},
		{map[string]string{"queue": missing, "url": "amqp://guest:wrong-secret@127.0.0.1:5672/"}, "check the user and password"},
	} {
		opts := map[string]string{"url": brokerURL, "format": "json"}
		for k, v := range c.opts {
			opts[k] = v
		}
		err := write(t, opts, []line{{N: 1}}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error saying %q", c.opts, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "wrong-secret") {
			t.Errorf("%v: the error shows the password: %v", c.opts, err)
		}
	}
}

// TestSQLQueueToQueue runs INSERT INTO a table published to a direct
// exchange SELECT from a table read from a stream queue, in JSON; the sink
// declares its queue and binds it to the exchange.
func TestSQLQueueToQueue(t *testing.T) {
	conn := connect(t)
	in := freshQueue(t, conn, "stream")
	ex := freshExchange(t, conn, "direct")
	out := "eddy-test-big-" + randomSuffix()
	deleteAfter(t, conn, out)
	var bodies [][]byte
	for i := 0; i < 500; i++ {
		bodies = append(bodies, []byte(fmt.Sprintf(`{"id": %d, "customer": "c%d", "amount": %d}`, i, i%7, i)))
	}
	publishRaw(t, conn, in, bodies, nil)
	s := sql.NewSession(sql.WithParallelism(2))
	script := fmt.Sprintf(`
CREATE TABLE orders (id BIGINT, customer STRING, amount BIGINT) WITH (
  'connector' = 'rabbitmq', 'url' = '%[1]s', 'queue' = '%[2]s', 'format' = 'json');
CREATE TABLE big_orders (id BIGINT, customer STRING, doubled BIGINT) WITH (
  'connector' = 'rabbitmq', 'url' = '%[1]s', 'exchange' = '%[3]s', 'routing-key' = 'big',
  'queue' = '%[4]s', 'queue.type' = 'quorum', 'format' = 'json');
INSERT INTO big_orders SELECT id, UPPER(customer), amount * 2 FROM orders WHERE amount >= 100;
`, brokerURL, in, ex, out)
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "orders") }()
	eventually(t, "the job to publish 400 messages", func() bool {
		select {
		case err := <-done:
			t.Fatalf("the job ended: %v", err)
		default:
		}
		q, err := channel(t, conn).QueueDeclarePassive(out, true, false, false, false, nil)
		return err == nil && q.Messages >= 400
	})
	cancel()
	<-done
	type row struct {
		ID       int64  `json:"id"`
		Customer string `json:"customer"`
		Doubled  int64  `json:"doubled"`
	}
	var got []string
	for _, d := range readQueue(t, conn, out) {
		var r row
		if err := json.Unmarshal(d.Body, &r); err != nil {
			t.Fatalf("%q: %v", d.Body, err)
		}
		got = append(got, fmt.Sprintf("%d %s %d", r.ID, r.Customer, r.Doubled))
	}
	var want []string
	for i := 100; i < 500; i++ {
		want = append(want, fmt.Sprintf("%d C%d %d", i, i%7, 2*i))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("queue %s holds %d messages, want %d; first: %v", out, len(got), len(want), got[:min(5, len(got))])
	}
}

// TestPublishOnCheckpointConformance runs the conformance suite on the
// checkpoint-aligned sink, reading the queue as a consumer deduplicating by
// message-id does: such a consumer sees each record exactly once, through
// failures and restores that publish transactions again.
func TestPublishOnCheckpointConformance(t *testing.T) {
	conn := connect(t)
	var in []line
	for i := 0; i < 3000; i++ {
		in = append(in, line{Part: i % 5, N: int64(i)})
	}
	connectortest.RunSink(t, connectortest.SinkCase[line]{
		Open: func(t testing.TB) (connector.Sink[line], func() []line) {
			q := freshQueue(t, conn, "classic")
			sink, err := connector.OpenSink[line](connector.Default, "rabbitmq", map[string]string{"url": brokerURL, "queue": q, "format": "json", "sink.publish-on-checkpoint": "true"})
			if err != nil {
				t.Fatal(err)
			}
			return sink, func() []line {
				var out []line
				seen := map[string][]byte{}
				for _, d := range readQueue(t, conn, q) {
					if first, ok := seen[d.MessageId]; ok {
						if string(first) != string(d.Body) {
							t.Errorf("message-id %s was published with %q and with %q", d.MessageId, first, d.Body)
						}
						continue
					}
					seen[d.MessageId] = d.Body
					var l line
					if err := json.Unmarshal(d.Body, &l); err != nil {
						t.Fatalf("queue %s holds %q: %v", q, d.Body, err)
					}
					out = append(out, l)
				}
				return out
			}
		},
		Input:     in,
		Guarantee: connectortest.ExactlyOnce,
	})
}

// TestPublishOnCheckpointRecommit writes a transaction through the
// checkpoint-aligned sink: nothing is published before it commits, and
// committing it again (as a restored job does) publishes the same
// messages with the same message-ids.
func TestPublishOnCheckpointRecommit(t *testing.T) {
	conn := connect(t)
	q := freshQueue(t, conn, "classic")
	sink, err := connector.OpenSink[line](connector.Default, "rabbitmq", map[string]string{"url": brokerURL, "queue": q, "format": "json", "sink.publish-on-checkpoint": "true"})
	if err != nil {
		t.Fatal(err)
	}
	ts, ok := sink.(connector.TransactionalSink[line])
	if !ok {
		t.Fatalf("the sink is a %T, not a transactional sink", sink)
	}
	w, err := ts.NewTransactionalWriter(connectortest.WriterContext{Name: "rabbitmq out"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Write([]line{{N: 1}, {N: 2}, {N: 3}}, nil); err != nil {
		t.Fatal(err)
	}
	tx, err := w.PreCommit()
	if err != nil {
		t.Fatal(err)
	}
	if ready, _ := inspect(t, conn, q); ready != 0 {
		t.Fatalf("the queue holds %d messages before the transaction commits, want 0", ready)
	}
	for i := 0; i < 2; i++ {
		if err := w.Commit(tx); err != nil {
			t.Fatal(err)
		}
	}
	got := readQueue(t, conn, q)
	if len(got) != 6 {
		t.Fatalf("after committing a transaction of 3 records twice the queue holds %d messages, want 6", len(got))
	}
	for i := 0; i < 3; i++ {
		a, b := got[i], got[i+3]
		if a.MessageId == "" || a.MessageId != b.MessageId || string(a.Body) != string(b.Body) {
			t.Errorf("message %d was published as %s %q, then as %s %q; want the same id and body", i, a.MessageId, a.Body, b.MessageId, b.Body)
		}
		if i > 0 && a.MessageId == got[i-1].MessageId {
			t.Errorf("messages %d and %d of the transaction share the id %s", i-1, i, a.MessageId)
		}
	}
}
