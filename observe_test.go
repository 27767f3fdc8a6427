package eddy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
)

// TestSubtaskTimes runs a fast source into a sink that waits for each
// record: the source's subtask must report backpressure, the sink's its
// busy time, and each subtask's times must add up to no more than its
// running time.
func TestSubtaskTimes(t *testing.T) {
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithChannelCapacity(2), eddy.WithBatchSize(10))
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: 3000}, func(i int64) int64 { return i }, eddy.NoWatermarks[int64]())
	eddy.SinkTo(src.Rebalance(), func(int64) error {
		time.Sleep(100 * time.Microsecond)
		return nil
	})
	if err := env.Execute(context.Background(), "times"); err != nil {
		t.Fatal(err)
	}
	ms := env.Metrics()
	if len(ms) < 2 {
		t.Fatalf("got metrics of %d subtasks, want the source's and the sink's", len(ms))
	}
	var source, sink *eddy.OperatorMetrics
	for i := range ms {
		m := &ms[i]
		if m.Running {
			t.Errorf("%s/%d still runs after the job ended", m.Name, m.Subtask)
		}
		if m.Started.IsZero() || m.Chain == "" {
			t.Errorf("%s/%d: no start time or chain: %+v", m.Name, m.Subtask, m)
		}
		if m.RecordsOut > 0 && source == nil {
			source = m
		}
		if strings.HasPrefix(m.Chain, "Sink") {
			sink = m
		}
	}
	if source == nil || sink == nil {
		t.Fatalf("no source or sink among %+v", ms)
	}
	if source.BackPressuredTime <= 0 {
		t.Errorf("the source of a sink slower than it reports no backpressure: %+v", *source)
	}
	// 3000 records at 100µs each at least.
	if sink.BusyTime < 300*time.Millisecond {
		t.Errorf("the sink reports %v busy for 3000 records of 100µs each", sink.BusyTime)
	}
	if sink.BackPressuredTime != 0 {
		t.Errorf("the sink sends nothing downstream yet reports %v of backpressure", sink.BackPressuredTime)
	}
}

// TestJobGraph describes a job of two vertices (the source chained with its
// map, and the sink) joined by a rebalancing exchange.
func TestJobGraph(t *testing.T) {
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	src := eddy.FromSlice(env, []int64{1, 2, 3, 4}, eddy.NoWatermarks[int64]())
	m := eddy.Map(src, func(v int64) int64 { return v % 2 }).Name("parity")
	eddy.SinkTo(m.Rebalance(), func(int64) error { return nil })
	g, err := env.JobGraph()
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Vertices) != 2 || len(g.Edges) != 1 {
		t.Fatalf("got %d vertices and %d edges, want 2 and 1: %+v", len(g.Vertices), len(g.Edges), g)
	}
	v0, v1 := g.Vertices[0], g.Vertices[1]
	if len(v0.Operators) != 2 || v0.Operators[1].Name != "parity" || v0.Parallelism != 2 {
		t.Errorf("first vertex %+v: want the source chained with parity, parallelism 2", v0)
	}
	if !strings.HasPrefix(v1.Name, "Sink") {
		t.Errorf("second vertex %+v: want the sink", v1)
	}
	e := g.Edges[0]
	if e.Source != 0 || e.Target != 1 || e.Partitioning != "REBALANCE" {
		t.Errorf("edge %+v: want 0 -REBALANCE-> 1", e)
	}
	for _, v := range g.Vertices {
		for _, o := range v.Operators {
			if o.Changelog != "[I]" || o.UID == "" {
				t.Errorf("operator %+v: want insert-only with a UID", o)
			}
		}
	}
	if err := env.Execute(context.Background(), "graph"); err != nil {
		t.Fatal(err)
	}
	if g2, err := env.JobGraph(); err != nil || len(g2.Vertices) != 2 {
		t.Fatalf("graph of the executed job: %+v, %v", g2, err)
	}
	// Every operator counts its records in and out, chained or not.
	in, out := map[string]int64{}, map[string]int64{}
	for _, m := range env.Metrics() {
		in[m.Name] += m.RecordsIn
		out[m.Name] += m.RecordsOut
	}
	if out["Source: Slice"] != 4 || in["parity"] != 4 || out["parity"] != 4 || in["Sink: Func"] != 4 {
		t.Errorf("records in %v and out %v: want 4 out of the source, into and out of parity, into the sink", in, out)
	}
}

// statusSource emits one record per Read until release is closed; its
// reader and enumerator report their progress.
type statusSource struct{ release chan struct{} }

type statusEnumerator struct{ connector.Enumerator }

func (statusEnumerator) Status() map[string]any { return map[string]any{"splitsAssigned": 1} }

func (s *statusSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	e, err := connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) {
		return []connector.Split{{ID: "only"}}, nil
	})
	return statusEnumerator{e}, err
}

func (s *statusSource) NewReader(connector.ReaderContext) (connector.Reader[int64], error) {
	return &statusReader{s: s}, nil
}

type statusReader struct {
	s    *statusSource
	has  bool
	read int64
}

func (r *statusReader) AddSplits(s []connector.Split) error { r.has = r.has || len(s) > 0; return nil }

func (r *statusReader) Read(out connector.Output[int64]) error {
	if !r.has {
		return nil
	}
	select {
	case <-r.s.release:
		out.Split("only").Finish()
		r.has = false
	case <-time.After(time.Millisecond):
		r.read++
		out.Split("only").Emit(r.read)
	}
	return nil
}

func (r *statusReader) Status() map[string]any { return map[string]any{"readRecords": r.read} }

func (r *statusReader) SnapshotState(int64) ([]connector.Split, error) { return nil, nil }
func (r *statusReader) Close() error                                   { return nil }

// TestConnectorStatus reads the progress reports of a source's reader and
// enumerator while the job runs.
func TestConnectorStatus(t *testing.T) {
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	src := &statusSource{release: make(chan struct{})}
	eddy.Discard(eddy.FromSource[int64](env, "status", src, eddy.NoWatermarks[int64]()))
	done := make(chan error, 1)
	go func() { done <- env.Execute(context.Background(), "status") }()
	waitFor(t, "the reader's and the enumerator's progress reports", func() bool {
		for _, m := range env.Metrics() {
			if n, ok := m.Status["readRecords"].(int64); ok && n > 0 && m.EnumeratorStatus["splitsAssigned"] == 1 {
				return true
			}
		}
		return false
	})
	if st := env.JobStatus(); st.State != eddy.JobRunning || st.Started.IsZero() {
		t.Errorf("status of the running job: %+v", st)
	}
	close(src.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := env.JobStatus(); st.State != eddy.JobFinished || st.Ended.IsZero() {
		t.Errorf("status of the finished job: %+v", st)
	}
}
