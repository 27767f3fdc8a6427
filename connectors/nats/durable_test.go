package nats_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
)

// durableJob runs a job reading opts into a sink that counts the records,
// until stop says so (given the records so far), and returns the records.
func durableJob(t *testing.T, opts map[string]string, stop func([]line) bool) []line {
	t.Helper()
	var mu sync.Mutex
	var got []line
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	eddy.SinkTo(eddy.FromSource(env, "durable", openSource(t, opts), eddy.NoWatermarks[line]()), func(l line) error {
		mu.Lock()
		got = append(got, l)
		mu.Unlock()
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "durable") }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		enough := stop(append([]line(nil), got...))
		mu.Unlock()
		if enough {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the job ended: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job read %d records and did not get there in 60 s", len(got))
		}
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	return append([]line(nil), got...)
}

func consumerInfo(t *testing.T, js jetstream.JetStream, stream, name string) *jetstream.ConsumerInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := js.Consumer(ctx, stream, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// TestDurableConsumerFollowsCheckpoints reads a stream with 'consumer':
// the durable consumer's ack floor follows the completed checkpoints, and
// a job started without state resumes where it is, ignoring
// 'scan.startup.mode'.
func TestDurableConsumerFollowsCheckpoints(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	name, prefix := freshStream(t, js)
	publishLines(t, js, prefix, 0, 100, 1)
	opts := map[string]string{"url": url, "stream": name, "format": "json", "consumer": "EDDY"}
	got := durableJob(t, opts, func(ls []line) bool {
		if len(ls) < 100 {
			return false
		}
		info := consumerInfo(t, js, name, "EDDY")
		return info.AckFloor.Stream == 100 && info.NumPending == 0
	})
	if len(got) != 100 {
		t.Fatalf("the first job read %d records, want 100", len(got))
	}
	info := consumerInfo(t, js, name, "EDDY")
	if info.Config.DeliverSubject != "" || info.Config.AckPolicy != jetstream.AckAllPolicy || !strings.Contains(info.Config.Description, "eddy") {
		t.Fatalf("the durable consumer is %+v", info.Config)
	}
	// 50 more messages: the consumer shows them pending.
	publishLines(t, js, prefix, 100, 150, 1)
	if info := consumerInfo(t, js, name, "EDDY"); info.NumPending != 50 || info.AckFloor.Stream != 100 {
		t.Fatalf("after 50 more messages the consumer has %d pending and its ack floor at %d, want 50 and 100", info.NumPending, info.AckFloor.Stream)
	}
	// A job without state starts after the consumer's ack floor.
	got = durableJob(t, opts, func(ls []line) bool { return len(ls) >= 50 && consumerInfo(t, js, name, "EDDY").AckFloor.Stream == 150 })
	for _, l := range got {
		if l.N < 100 {
			t.Fatalf("the job started without state read record %d, which the consumer had acknowledged", l.N)
		}
	}
	if len(got) != 50 {
		t.Fatalf("the second job read %d records, want the 50 new ones", len(got))
	}
}

// TestDurableConsumersOfFilters creates one durable consumer per filter,
// each at the startup position, and refuses a consumer of another filter.
func TestDurableConsumersOfFilters(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	name, prefix := freshStream(t, js)
	publishLines(t, js, prefix, 0, 40, 2) // prefix.0 and prefix.1, alternating
	opts := map[string]string{"url": url, "stream": name, "format": "json", "consumer": "F",
		"subject": prefix + ".0," + prefix + ".1", "scan.startup.mode": "specific-offset", "scan.startup.specific-offset": "21"}
	got := durableJob(t, opts, func(ls []line) bool {
		return len(ls) >= 20 && consumerInfo(t, js, name, "F-1").AckFloor.Stream == 39 && consumerInfo(t, js, name, "F-2").AckFloor.Stream == 40
	})
	if len(got) != 20 {
		t.Fatalf("read %d records from sequence 21, want 20", len(got))
	}
	for i, f := range []string{prefix + ".0", prefix + ".1"} {
		info := consumerInfo(t, js, name, "F-"+string(rune('1'+i)))
		if info.Config.FilterSubject != f || info.NumPending != 0 {
			t.Fatalf("consumer F-%d filters %q with %d pending, want %q and none", i+1, info.Config.FilterSubject, info.NumPending, f)
		}
	}
	// The same names with other filters are refused, naming the consumer.
	opts["subject"] = prefix + ".1," + prefix + ".0"
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	eddy.SinkTo(eddy.FromSource(env, "durable", openSource(t, opts), eddy.NoWatermarks[line]()), func(line) error { return nil })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := env.Execute(ctx, "other filters"); err == nil || !strings.Contains(err.Error(), `consumer "F-1"`) || !strings.Contains(err.Error(), "another name") {
		t.Fatalf("reading with consumers of other filters: %v, want an error naming consumer F-1", err)
	}
}

// TestDurableConsumerHoldsInterest reads an interest stream: its messages
// stay while the durable consumer has not passed them, and go once a
// checkpoint that accounts for them completes.
func TestDurableConsumerHoldsInterest(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "INTEREST", Subjects: []string{"interest.>"}, Retention: jetstream.InterestPolicy})
	if err != nil {
		t.Fatal(err)
	}
	opts := map[string]string{"url": url, "stream": "INTEREST", "format": "json", "consumer": "KEEP"}
	// A first job creates the consumer and stops.
	durableJob(t, opts, func([]line) bool {
		_, err := js.Consumer(ctx, "INTEREST", "KEEP")
		return err == nil
	})
	publishLines(t, js, "interest", 0, 30, 1)
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 30 {
		t.Fatalf("the interest stream holds %d messages while its consumer has not read them, want 30", info.State.Msgs)
	}
	got := durableJob(t, opts, func(ls []line) bool {
		info, err := st.Info(ctx)
		return err == nil && len(ls) >= 30 && info.State.Msgs == 0
	})
	if len(got) != 30 {
		t.Fatalf("read %d records, want 30", len(got))
	}
}

// TestConsumerOptionErrors refuses 'consumer' where it does not apply.
func TestConsumerOptionErrors(t *testing.T) {
	for _, c := range []struct {
		sink bool
		opts map[string]string
		want string
	}{
		{false, map[string]string{"subject": "a", "consumer": "C"}, "needs a JetStream 'stream'"},
		{false, map[string]string{"stream": "S", "consumer": "a.b"}, "no spaces, dots"},
		{true, map[string]string{"stream": "S", "subject": "a", "consumer": "C"}, "option of sources"},
	} {
		opts := map[string]string{"format": "json"}
		for k, v := range c.opts {
			opts[k] = v
		}
		var err error
		if c.sink {
			_, err = connector.OpenSink[line](connector.Default, "nats", opts)
		} else {
			_, err = connector.OpenSource[line](connector.Default, "nats", opts)
		}
		var oe *connector.OptionError
		if !errors.As(err, &oe) || oe.Key != "consumer" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error of 'consumer' saying %q", c.opts, err, c.want)
		}
	}
}

// TestReaderDeletesItsConsumers: the ordered consumers of a read are gone
// from the server once the read ends (the server would keep them for
// minutes, holding the messages of interest streams).
func TestReaderDeletesItsConsumers(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	name, prefix := freshStream(t, js)
	publishLines(t, js, prefix, 0, 100, 3)
	for _, bounded := range []bool{true, false} {
		opts := map[string]string{"url": url, "stream": name, "format": "json", "subject": prefix + ".0," + prefix + ".1," + prefix + ".2"}
		if bounded {
			opts["scan.bounded.mode"] = "latest-offset"
			env := eddy.NewEnvironment(eddy.WithParallelism(2))
			eddy.SinkTo(eddy.FromSource(env, "bounded", openSource(t, opts), eddy.NoWatermarks[line]()), func(line) error { return nil })
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			err := env.Execute(ctx, "bounded")
			cancel()
			if err != nil {
				t.Fatal(err)
			}
		} else {
			durableJob(t, opts, func(ls []line) bool { return len(ls) >= 100 })
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Consumers != 0 {
			t.Fatalf("bounded %v: the stream has %d consumers after the job ended, want none", bounded, info.State.Consumers)
		}
	}
}
