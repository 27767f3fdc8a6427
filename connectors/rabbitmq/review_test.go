package rabbitmq_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/eddystream/eddy/connector"
)

// enumCtx is an EnumeratorContext that does nothing.
type enumCtx struct{}

func (enumCtx) SourceName() string                                    { return "rabbitmq in" }
func (enumCtx) Parallelism() int                                      { return 1 }
func (enumCtx) AssignSplits(int, ...connector.Split)                  {}
func (enumCtx) SignalNoMoreSplits(int)                                {}
func (enumCtx) SendEvent(int, []byte)                                 {}
func (enumCtx) CallAsync(func() (any, error), func(any, error) error) {}
func (enumCtx) Every(time.Duration, func() error)                     {}
func (enumCtx) Log() *slog.Logger                                     { return slog.New(slog.DiscardHandler) }
func (enumCtx) Checkpointing() bool                                   { return true }

// TestLatestOffsetOfBusyStream starts a job at the latest offset of a
// stream that producers write to without a pause: the enumerator finds
// where to start and the job starts, rather than reading on as long as
// messages keep coming.
func TestLatestOffsetOfBusyStream(t *testing.T) {
	conn := connect(t)
	q := freshQueue(t, conn, "stream")
	publishLines(t, conn, q, 0, 10, 1, false)

	ctx, stop := context.WithCancel(context.Background())
	published := make(chan struct{})
	go func() {
		defer close(published)
		ch, err := conn.Channel()
		if err != nil {
			return
		}
		defer ch.Close()
		body, _ := json.Marshal(line{N: -1})
		if err := ch.Confirm(false); err != nil {
			return
		}
		for ctx.Err() == nil {
			c, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", q, false, false, amqp.Publishing{Body: body})
			if err != nil {
				return
			}
			if _, err := c.WaitContext(ctx); err != nil {
				return
			}
		}
	}()
	defer func() { stop(); <-published }()

	src := openSource(t, map[string]string{"url": brokerURL, "queue": q, "format": "json", "scan.startup.mode": "latest-offset"})
	type result struct {
		e   connector.Enumerator
		err error
	}
	done := make(chan result, 1)
	go func() {
		e, err := src.NewEnumerator(enumCtx{}, nil)
		done <- result{e, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		r.e.Close()
	case <-time.After(60 * time.Second):
		t.Fatal("the enumerator of a source starting at the latest offset of a busy stream has not found where to start after a minute")
	}
}
