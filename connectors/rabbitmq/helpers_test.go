package rabbitmq_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/eddystream/eddy/connector"
)

// brokerURL is the RabbitMQ server the tests use.
const brokerURL = "amqp://guest:guest@127.0.0.1:5672/"

type line struct {
	Part int   `json:"part"`
	N    int64 `json:"n"`
}

// connect connects to the test broker, skipping the test when it is
// unreachable (failing it under CI).
func connect(t testing.TB) *amqp.Connection {
	t.Helper()
	conn, err := amqp.Dial(brokerURL)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("RabbitMQ at %s is unreachable: %v", brokerURL, err)
		}
		t.Skipf("RabbitMQ at %s is unreachable: %v", brokerURL, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func channel(t testing.TB, conn *amqp.Connection) *amqp.Channel {
	t.Helper()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// freshQueue declares a durable queue of the type ("classic", "quorum",
// "stream") with a new name, deleted when the test ends.
func freshQueue(t testing.TB, conn *amqp.Connection, typ string) string {
	t.Helper()
	name := fmt.Sprintf("eddy-test-%s-%s", typ, randomSuffix())
	ch := channel(t, conn)
	defer ch.Close()
	if _, err := ch.QueueDeclare(name, true, false, false, false, amqp.Table{"x-queue-type": typ}); err != nil {
		t.Fatal(err)
	}
	deleteAfter(t, conn, name)
	return name
}

// deleteAfter deletes the queue when the test ends.
func deleteAfter(t testing.TB, conn *amqp.Connection, name string) {
	t.Cleanup(func() {
		c, err := amqp.Dial(brokerURL)
		if err != nil {
			return
		}
		defer c.Close()
		if ch, err := c.Channel(); err == nil {
			_, _ = ch.QueueDelete(name, false, false, false)
		}
	})
}

// publishLines publishes lines [from, to) to the queue through the default
// exchange, with message-ids "m<n>" if ids, and waits for the confirms.
func publishLines(t testing.TB, conn *amqp.Connection, queue string, from, to, parts int, ids bool) []line {
	t.Helper()
	var out []line
	var bodies [][]byte
	var msgIDs []string
	for n := from; n < to; n++ {
		l := line{Part: n % parts, N: int64(n)}
		b, _ := json.Marshal(l)
		out = append(out, l)
		bodies = append(bodies, b)
		id := ""
		if ids {
			id = fmt.Sprintf("m%d", n)
		}
		msgIDs = append(msgIDs, id)
	}
	publishRaw(t, conn, queue, bodies, msgIDs)
	return out
}

// publishRaw publishes bodies to the queue, with the message-ids given
// (none where empty), and waits for the confirms.
func publishRaw(t testing.TB, conn *amqp.Connection, queue string, bodies [][]byte, ids []string) {
	t.Helper()
	keys := make([]string, len(bodies))
	msgs := make([]amqp.Publishing, len(bodies))
	for i, b := range bodies {
		keys[i], msgs[i] = queue, amqp.Publishing{Body: b}
		if ids != nil {
			msgs[i].MessageId = ids[i]
		}
	}
	publishConfirmed(t, conn, "", true, keys, msgs)
}

// publishConfirmed publishes msgs, persistent, to the exchange, message i
// with routing key keys[i], and waits for the confirms: once they come,
// the broker has routed every message.
func publishConfirmed(t testing.TB, conn *amqp.Connection, exchange string, mandatory bool, keys []string, msgs []amqp.Publishing) {
	t.Helper()
	ch := channel(t, conn)
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	var dcs []*amqp.DeferredConfirmation
	for i, msg := range msgs {
		msg.DeliveryMode = amqp.Persistent
		dc, err := ch.PublishWithDeferredConfirm(exchange, keys[i], mandatory, false, msg)
		if err != nil {
			t.Fatal(err)
		}
		dcs = append(dcs, dc)
	}
	for _, dc := range dcs {
		if !dc.Wait() {
			t.Fatal("the broker refused a message")
		}
	}
}

// inspect returns the ready messages and the consumers of a queue.
func inspect(t testing.TB, conn *amqp.Connection, queue string) (ready, consumers int) {
	t.Helper()
	ch := channel(t, conn)
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return q.Messages, q.Consumers
}

// eventually waits up to a minute for cond, failing with what.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readQueue returns the bodies of every message a classic queue holds,
// leaving them in it. Nothing may consume the queue meanwhile.
func readQueue(t testing.TB, conn *amqp.Connection, queue string) []amqp.Delivery {
	t.Helper()
	ready, _ := inspect(t, conn, queue)
	if ready == 0 {
		return nil
	}
	ch := channel(t, conn)
	defer ch.Close() // puts the messages back
	deliveries, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []amqp.Delivery
	timeout := time.After(time.Minute)
	for len(out) < ready {
		select {
		case d := <-deliveries:
			out = append(out, d)
		case <-timeout:
			t.Fatalf("read %d of the %d messages of queue %s", len(out), ready, queue)
		}
	}
	return out
}

// readLines decodes the messages of a classic queue.
func readLines(t testing.TB, conn *amqp.Connection, queue string) []line {
	t.Helper()
	var out []line
	for _, d := range readQueue(t, conn, queue) {
		var l line
		if err := json.Unmarshal(d.Body, &l); err != nil {
			t.Fatalf("queue %s holds %q: %v", queue, d.Body, err)
		}
		out = append(out, l)
	}
	return out
}

func openSource(t testing.TB, opts map[string]string) connector.Source[line] {
	t.Helper()
	src, err := connector.OpenSource[line](connector.Default, "rabbitmq", opts)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// watched wraps a source to see what its readers emit and when the
// checkpoints that cover it complete.
type watched[T any] struct {
	src     connector.Source[T]
	emitted atomic.Int64 // records emitted and bad records reported

	mu       sync.Mutex
	target   int64 // the count to cover; 0: none
	covering int64 // the first checkpoint snapshotted with target reached
	covered  chan struct{}
	closed   bool
	failLeft int // completions still to fail instead of passing on
	failGap  int // completions to pass on before failing one
	since    int // completions passed on since the last failure
}

func watch[T any](src connector.Source[T]) *watched[T] {
	return &watched[T]{src: src, covered: make(chan struct{})}
}

// coverAt arms covered: it closes once a checkpoint snapshotted after the
// readers emitted n records (and bad ones) completes and the readers are
// told. Parallelism 1 only.
func (w *watched[T]) coverAt(n int64) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.target = n
	return w.covered
}

func (w *watched[T]) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return w.src.NewEnumerator(ctx, restored)
}

func (w *watched[T]) NewReader(ctx connector.ReaderContext) (connector.Reader[T], error) {
	r, err := w.src.NewReader(ctx)
	if err != nil {
		return nil, err
	}
	return &watchedReader[T]{Reader: r, w: w}, nil
}

type watchedReader[T any] struct {
	connector.Reader[T]
	w       *watched[T]
	emitted int64           // records this reader emitted (under w.mu)
	at      map[int64]int64 // emitted at each checkpoint's snapshot
	heard   int64           // emitted up to the last completion passed on
}

func (r *watchedReader[T]) Read(out connector.Output[T]) error {
	return r.Reader.Read(&countingOutput[T]{Output: out, r: r})
}

// count notes an emitted record.
func (r *watchedReader[T]) count() {
	r.w.emitted.Add(1)
	r.w.mu.Lock()
	r.emitted++
	r.w.mu.Unlock()
}

func (r *watchedReader[T]) HandleEvent(e []byte) error {
	return r.Reader.(connector.ReaderEventHandler).HandleEvent(e)
}

// failNotifications makes count checkpoint completions fail the job
// before the reader hears of them, as a failure right after a checkpoint
// completes would: each one after at least gap completions were passed on
// since the start or the last failure, and only a completion that covers
// records the reader emitted since the last completion it heard of, so
// that the broker has messages to deliver again.
func (w *watched[T]) failNotifications(count, gap int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failLeft, w.failGap = count, gap
}

func (r *watchedReader[T]) SnapshotState(id int64) ([]connector.Split, error) {
	w := r.w
	w.mu.Lock()
	if w.target > 0 && w.covering == 0 && w.emitted.Load() >= w.target {
		w.covering = id
	}
	if r.at == nil {
		r.at = map[int64]int64{}
	}
	r.at[id] = r.emitted
	w.mu.Unlock()
	return r.Reader.SnapshotState(id)
}

func (r *watchedReader[T]) NotifyCheckpointComplete(id int64) error {
	w := r.w
	w.mu.Lock()
	covered := r.heard
	for c, n := range r.at {
		if c <= id {
			covered = max(covered, n)
			delete(r.at, c)
		}
	}
	if w.failLeft > 0 && w.since >= w.failGap && covered > r.heard {
		w.failLeft--
		w.since = 0
		w.mu.Unlock()
		return fmt.Errorf("injected failure before checkpoint %d reached the reader", id)
	}
	w.since++
	r.heard = covered
	w.mu.Unlock()
	err := r.Reader.(connector.CheckpointListener).NotifyCheckpointComplete(id)
	w.mu.Lock()
	if w.covering > 0 && id >= w.covering && !w.closed {
		w.closed = true
		close(w.covered)
	}
	w.mu.Unlock()
	return err
}

type countingOutput[T any] struct {
	connector.Output[T]
	r *watchedReader[T]
}

func (o *countingOutput[T]) Split(id string) connector.SplitOutput[T] {
	return countingSplit[T]{o.Output.Split(id), o.r}
}

func (o *countingOutput[T]) BadRecord(d connector.DeadLetter) error {
	o.r.count()
	return o.Output.BadRecord(d)
}

type countingSplit[T any] struct {
	connector.SplitOutput[T]
	r *watchedReader[T]
}

func (s countingSplit[T]) Emit(v T)             { s.r.count(); s.SplitOutput.Emit(v) }
func (s countingSplit[T]) EmitAt(v T, ts int64) { s.r.count(); s.SplitOutput.EmitAt(v, ts) }
