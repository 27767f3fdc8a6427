package rabbitmq

import (
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/eddystream/eddy/connector"
)

type reviewReaderCtx struct{}

func (reviewReaderCtx) SourceName() string                      { return "rabbitmq in" }
func (reviewReaderCtx) Subtask() int                            { return 0 }
func (reviewReaderCtx) Parallelism() int                        { return 1 }
func (reviewReaderCtx) RequestSplit()                           {}
func (reviewReaderCtx) SendEvent([]byte)                        {}
func (reviewReaderCtx) ProcessingTime() int64                   { return time.Now().UnixMilli() }
func (reviewReaderCtx) Log() *slog.Logger                       { return slog.New(slog.DiscardHandler) }
func (o *reviewOutput) Split(string) connector.SplitOutput[any] { return o }
func (o *reviewOutput) Room() int                               { return 1 << 20 }
func (o *reviewOutput) BadRecord(d connector.DeadLetter) error {
	return fmt.Errorf("bad record: %s", d.Error)
}
func (o *reviewOutput) Emit(any)          { o.n++ }
func (o *reviewOutput) EmitAt(any, int64) { o.n++ }
func (o *reviewOutput) Finish()           {}

type reviewOutput struct{ n int }

// TestDeduplicationWithoutCheckpoints reads a queue with 'scan.deduplication'
// = 'message-id' in a job that takes no checkpoints: the reader
// acknowledges messages as it emits them and keeps none of their ids,
// which no checkpoint would ever let it forget.
func TestDeduplicationWithoutCheckpoints(t *testing.T) {
	const url = "amqp://guest:guest@127.0.0.1:5672/"
	conn, err := amqp.Dial(url)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("RabbitMQ at %s is unreachable: %v", url, err)
		}
		t.Skipf("RabbitMQ at %s is unreachable: %v", url, err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	q := fmt.Sprintf("eddy-test-dedup-%s", randomID())
	if _, err := ch.QueueDeclare(q, true, false, false, false, amqp.Table{"x-queue-type": "classic"}); err != nil {
		t.Fatal(err)
	}
	defer ch.QueueDelete(q, false, false, false)
	const n = 200
	for i := 0; i < n; i++ {
		msg := amqp.Publishing{Body: []byte(fmt.Sprintf(`{"n":%d}`, i)), MessageId: fmt.Sprintf("m%d", i)}
		if err := ch.Publish("", q, false, false, msg); err != nil {
			t.Fatal(err)
		}
	}

	src, err := connector.OpenSource[any](connector.Default, "rabbitmq", map[string]string{"url": url, "queue": q, "format": "json", "scan.deduplication": "message-id"})
	if err != nil {
		t.Fatal(err)
	}
	rd, err := src.(*source[any]).NewReader(reviewReaderCtx{})
	if err != nil {
		t.Fatal(err)
	}
	r := rd.(*reader[any])
	defer r.Close()
	st := splitState{kind: queueSplit, queue: q}
	if err := r.AddSplits([]connector.Split{{ID: st.id(), State: st.encode()}}); err != nil {
		t.Fatal(err)
	}
	if err := r.HandleEvent(encodeEvent(readSingle, false)); err != nil {
		t.Fatal(err)
	}
	out := &reviewOutput{}
	deadline := time.Now().Add(time.Minute)
	for out.n < n {
		if time.Now().After(deadline) {
			t.Fatalf("read %d of %d messages in a minute", out.n, n)
		}
		if err := r.Read(out); err != nil {
			t.Fatal(err)
		}
	}
	held := len(r.seen)
	for _, sp := range r.splits {
		held += len(sp.cur)
	}
	if held != 0 {
		t.Fatalf("after emitting and acknowledging %d messages without checkpoints the reader holds %d message-ids, want none", n, held)
	}
}
