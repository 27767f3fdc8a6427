package rabbitmq

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/connector"
)

type logCtx struct{ log *slog.Logger }

func (logCtx) SinkName() string      { return "rabbitmq out" }
func (logCtx) Subtask() int          { return 0 }
func (logCtx) Parallelism() int      { return 1 }
func (logCtx) ProcessingTime() int64 { return 0 }
func (c logCtx) Log() *slog.Logger   { return c.log }

// TestWarnsWithoutCheckpoints holds records in the checkpoint-aligned
// committer with no checkpoint's barrier passing: once checkpointWarning
// has passed it warns, naming the option and the two ways out; a barrier
// starts the wait again.
func TestWarnsWithoutCheckpoints(t *testing.T) {
	var logs bytes.Buffer
	clock := time.Unix(1000, 0)
	cfg := &config{name: "out", queue: "out", routingKey: "out", guarantee: atLeastOnce, onCheckpoint: true}
	c := &committer[string]{cfg: cfg, ctx: logCtx{slog.New(slog.NewTextHandler(&logs, nil))},
		enc: connector.EncoderFunc[string](func(b []byte, v string) ([]byte, error) { return append(b, v...), nil }),
		now: func() time.Time { return clock }, since: clock}
	tx, _ := c.Begin()
	write := func(n int) {
		for i := 0; i < n; i++ {
			if err := c.Write(&tx, "x"); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(1)
	clock = clock.Add(checkpointWarning / 2)
	write(300)
	if logs.Len() != 0 {
		t.Fatalf("warned before %s without a checkpoint: %s", checkpointWarning, logs.String())
	}
	clock = clock.Add(checkpointWarning)
	write(300)
	got := logs.String()
	for _, want := range []string{"sink.publish-on-checkpoint", "enable checkpointing", "513 records"} {
		if !strings.Contains(got, want) {
			t.Fatalf("the warning %q does not say %q", got, want)
		}
	}
	if n := strings.Count(got, "level=WARN"); n != 1 {
		t.Fatalf("warned %d times, want once: %s", n, got)
	}
	logs.Reset()
	if err := c.PreCommit(&tx); err != nil {
		t.Fatal(err)
	}
	tx, _ = c.Begin()
	clock = clock.Add(checkpointWarning / 2)
	write(300)
	if logs.Len() != 0 {
		t.Fatalf("warned though a checkpoint passed %s ago: %s", checkpointWarning/2, logs.String())
	}
}
