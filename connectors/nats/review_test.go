package nats_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/connectors/nats"
	natsgo "github.com/nats-io/nats.go"
)

// TestBoundedReadEndsWhenItsLastMessageIsGone reads a stream whose last
// message, the end of the bounded read, was deleted: the read ends with the
// messages before it instead of waiting for one at or after the end.
func TestBoundedReadEndsWhenItsLastMessageIsGone(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	createStream(t, js, "GONE", "gone.>")
	publishLines(t, js, "gone", 0, 10, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, "GONE")
	if err != nil {
		t.Fatal(err)
	}
	// Sequence 10 is the last message, of gone.1; sequence 8 the last of
	// gone.1 before it.
	for _, seq := range []uint64{10, 8} {
		if err := st.DeleteMsg(ctx, seq); err != nil {
			t.Fatal(err)
		}
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.LastSeq != 10 {
		t.Fatalf("the stream's last sequence is %d after deleting its last message, want 10", info.State.LastSeq)
	}
	for _, subject := range []string{"", "gone.0,gone.1"} {
		opts := map[string]string{"url": url, "stream": "GONE", "format": "json", "scan.bounded.mode": "latest-offset"}
		if subject != "" {
			opts["subject"] = subject
		}
		mem := connectortest.NewMemorySink[line]()
		env := eddy.NewEnvironment(eddy.WithParallelism(1))
		eddy.WriteTo(eddy.FromSource(env, "gone", openSource(t, opts), eddy.NoWatermarks[line]()), "memory", mem.Sink())
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err := env.Execute(ctx, "gone")
		cancel()
		if err != nil {
			t.Fatalf("subject %q: the bounded read did not end: %v", subject, err)
		}
		var got []int64
		for _, l := range mem.Committed() {
			got = append(got, l.N)
		}
		slices.Sort(got)
		if want := []int64{0, 1, 2, 3, 4, 5, 6, 8}; !slices.Equal(got, want) {
			t.Fatalf("subject %q: read %v, want %v", subject, got, want)
		}
	}
}

// TestOverlappingFilters refuses subject filters some subject matches
// twice, and takes filters no subject matches twice.
func TestOverlappingFilters(t *testing.T) {
	for _, c := range []struct {
		subjects string
		overlap  bool
	}{
		{"ov.*,ov.0", true},
		{"ov.0,ov.0", true},
		{"ov.>,ov.a.b", true},
		{"*.a,x.*", true},
		{">,a", true},
		{"a.*.c,a.b.*", true},
		{"ov.0,ov.1", false},
		{"ov.*,ov.*.x", false},
		{"ov.>,ov", false},
		{"a.*.c,a.b.d", false},
		{"a.b,a.b.>", false},
	} {
		for _, stream := range []string{"", "S"} {
			opts := map[string]string{"format": "json", "subject": c.subjects}
			if stream != "" {
				opts["stream"] = stream
			}
			_, err := connector.OpenSource[line](connector.Default, "nats", opts)
			var oe *connector.OptionError
			if !c.overlap {
				if err != nil {
					t.Errorf("%v: %v, want no error", opts, err)
				}
				continue
			}
			parts := strings.Split(c.subjects, ",")
			if !errors.As(err, &oe) || oe.Key != "subject" || !strings.Contains(err.Error(), "'"+parts[0]+"'") || !strings.Contains(err.Error(), "'"+parts[1]+"'") {
				t.Errorf("%v: got %v, want an error of option 'subject' naming both filters", opts, err)
			}
		}
	}
}

// TestLostAcknowledgementFailsTheCommit publishes to a subject that a
// plain subscriber takes and never acknowledges: the exactly-once and
// at-least-once writers fail once the publication timeout passes instead
// of waiting for ever.
func TestLostAcknowledgementFailsTheCommit(t *testing.T) {
	defer nats.SetPublishTimeout(200 * time.Millisecond)()
	url := startServer(t)
	nc, js := connect(t, url)
	createStream(t, js, "ACKS", "acks.>")
	if _, err := nc.Subscribe("silent", func(*natsgo.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"exactly-once", "at-least-once"} {
		sink, err := connector.OpenSink[line](connector.Default, "nats", map[string]string{
			"url": url, "stream": "ACKS", "subject": "silent", "format": "json", "sink.delivery-guarantee": g})
		if err != nil {
			t.Fatal(err)
		}
		w, err := sink.NewWriter(connectortest.WriterContext{Name: "nats out"})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			if err := w.Write([]line{{N: 1}, {N: 2}}, nil); err != nil {
				done <- err
				return
			}
			done <- w.Flush()
		}()
		select {
		case err = <-done:
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: the flush still waits for an acknowledgement that will never come", g)
		}
		if err == nil || !strings.Contains(err.Error(), "did not acknowledge") || !strings.Contains(err.Error(), `"ACKS"`) {
			t.Fatalf("%s: flushing: %v, want an error saying the stream ACKS did not acknowledge", g, err)
		}
		_ = w.Close()
	}
}
