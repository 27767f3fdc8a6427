package mqtt_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

// The benchmarks measure messages per second through the connector alone:
// BenchmarkSource reads with a reader driven directly (a checkpoint taken
// and completed every 20 ms, as a job checkpointing at that interval
// would), while four raw clients publish; BenchmarkSink writes with a
// writer and flushes at the end. Run them with
//
//	go test -run '^$' -bench . -benchtime 3s ./connectors/mqtt/

// benchSizes are the payload sizes measured.
var benchSizes = []int{100, 1024}

func BenchmarkSource(b *testing.B) {
	needBroker(b)
	for _, version := range versions {
		for _, qos := range []byte{0, 1} {
			for _, size := range benchSizes {
				b.Run(fmt.Sprintf("%s/qos%d/%dB", version, qos, size), func(b *testing.B) { benchSource(b, version, qos, size) })
			}
		}
	}
}

// fakeEnumerator is the enumerator context of a source read outside a job.
type fakeEnumerator struct {
	splits []connector.Split
	events [][]byte
}

func (f *fakeEnumerator) SourceName() string                                    { return "bench" }
func (f *fakeEnumerator) Parallelism() int                                      { return 1 }
func (f *fakeEnumerator) AssignSplits(_ int, s ...connector.Split)              { f.splits = append(f.splits, s...) }
func (f *fakeEnumerator) SignalNoMoreSplits(int)                                {}
func (f *fakeEnumerator) SendEvent(_ int, e []byte)                             { f.events = append(f.events, e) }
func (f *fakeEnumerator) CallAsync(func() (any, error), func(any, error) error) {}
func (f *fakeEnumerator) Every(time.Duration, func() error)                     {}
func (f *fakeEnumerator) Log() *slog.Logger                                     { return quiet() }
func (f *fakeEnumerator) Checkpointing() bool                                   { return true }

type fakeReaderCtx struct{}

func (fakeReaderCtx) SourceName() string    { return "bench" }
func (fakeReaderCtx) Subtask() int          { return 0 }
func (fakeReaderCtx) Parallelism() int      { return 1 }
func (fakeReaderCtx) RequestSplit()         {}
func (fakeReaderCtx) SendEvent([]byte)      {}
func (fakeReaderCtx) ProcessingTime() int64 { return time.Now().UnixMilli() }
func (fakeReaderCtx) Log() *slog.Logger     { return quiet() }

// countingOutput counts what a reader emits.
type countingOutput struct{ n int }

func (o *countingOutput) Split(string) connector.SplitOutput[[]byte] { return o }
func (o *countingOutput) Room() int                                  { return 1024 }
func (o *countingOutput) BadRecord(d connector.DeadLetter) error {
	return fmt.Errorf("bad record: %+v", d)
}
func (o *countingOutput) Emit([]byte)          { o.n++ }
func (o *countingOutput) EmitAt([]byte, int64) { o.n++ }
func (o *countingOutput) Finish()              {}

func benchSource(b *testing.B, version string, qos byte, size int) {
	p, client := unique(b), unique(b)
	src, err := connector.OpenSource[[]byte](connector.Default, "mqtt", map[string]string{"url": brokerURL, "topic": p + "/#", "qos": fmt.Sprint(qos),
		"client-id": client, "format": "raw", "mqtt.version": version})
	if err != nil {
		b.Fatal(err)
	}
	if qos > 0 {
		b.Cleanup(func() { dropSession(b, client+"-0") })
	}
	en := &fakeEnumerator{}
	e, err := src.NewEnumerator(en, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := e.AddReader(0); err != nil {
		b.Fatal(err)
	}
	r, err := src.NewReader(fakeReaderCtx{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	if err := r.AddSplits(en.splits); err != nil {
		b.Fatal(err)
	}
	for _, ev := range en.events {
		if err := r.(connector.ReaderEventHandler).HandleEvent(ev); err != nil {
			b.Fatal(err)
		}
	}
	out := &countingOutput{}
	// Until the reader has subscribed, nothing reaches it: publish until a
	// message does.
	warm := dialRaw(b, client+"-warm", true, 0)
	for out.n == 0 {
		warm.publish(p+"/warm", []byte("warm"), qos, false)
		if err := r.Read(out); err != nil {
			b.Fatal(err)
		}
	}
	warm.close()
	payload := bytes.Repeat([]byte("x"), size)
	const publishers = 4
	var clients []*rawClient
	for i := 0; i < publishers; i++ {
		clients = append(clients, dialRaw(b, fmt.Sprintf("%s-pub%d", client, i), true, 0))
	}
	defer func() {
		for _, c := range clients {
			c.close()
		}
	}()
	var published atomic.Int64
	var wg sync.WaitGroup
	b.SetBytes(int64(size))
	b.ResetTimer()
	m := connectortest.StartMeter()
	base := out.n
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for k := i; k < b.N; k += publishers {
				if _, err := c.cli.PublishWithOptions(ctx, &paho.Publish{Topic: p + "/data", Payload: payload, QoS: qos}, paho.PublishOptions{Method: paho.PublishMethod_AsyncSend}); err != nil {
					b.Error(err)
					return
				}
				published.Add(1)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var id int64
	lastCkpt, lastGrowth, seen := time.Now(), time.Now(), out.n
	finished := false
	for out.n-base < b.N {
		if err := r.Read(out); err != nil {
			b.Fatal(err)
		}
		now := time.Now()
		if now.Sub(lastCkpt) >= 20*time.Millisecond {
			id++
			if _, err := r.SnapshotState(id); err != nil {
				b.Fatal(err)
			}
			if err := r.(connector.CheckpointListener).NotifyCheckpointComplete(id); err != nil {
				b.Fatal(err)
			}
			lastCkpt = now
		}
		if out.n != seen {
			seen, lastGrowth = out.n, now
		}
		select {
		case <-done:
			finished = true
		default:
		}
		// QoS 0 messages a broker could not deliver in time are dropped:
		// stop once nothing came for a second after the publishers ended.
		if finished && now.Sub(lastGrowth) > time.Second {
			break
		}
	}
	b.StopTimer()
	got := out.n - base
	m.Report(b, got, 0, "msgs")
	<-done
	if got < b.N {
		b.ReportMetric(float64(b.N-got), "dropped")
	}
}

func BenchmarkSink(b *testing.B) {
	needBroker(b)
	for _, version := range versions {
		for _, qos := range []byte{0, 1} {
			for _, size := range benchSizes {
				b.Run(fmt.Sprintf("%s/qos%d/%dB", version, qos, size), func(b *testing.B) { benchSink(b, version, qos, size) })
			}
		}
	}
}

func benchSink(b *testing.B, version string, qos byte, size int) {
	topic := unique(b) + "/out"
	sink, err := connector.OpenSink[[]byte](connector.Default, "mqtt", map[string]string{"url": brokerURL, "topic": topic, "qos": fmt.Sprint(qos),
		"format": "raw", "mqtt.version": version})
	if err != nil {
		b.Fatal(err)
	}
	w, err := sink.NewWriter(writerCtx{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	payload := bytes.Repeat([]byte("x"), size)
	batch := make([][]byte, 512)
	for i := range batch {
		batch[i] = payload
	}
	// Connect before the clock starts.
	if err := w.Write(batch[:1], nil); err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	m := connectortest.StartMeter()
	for i := 0; i < b.N; i += len(batch) {
		if err := w.Write(batch[:min(len(batch), b.N-i)], nil); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	m.Report(b, b.N, 0, "msgs")
}
