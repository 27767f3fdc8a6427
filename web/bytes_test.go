package web

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector/connectortest"
)

// TestBytesInOut checks that the REST API (flat metrics, vertices and their
// subtasks) and /metrics report the bytes a source's connector read and a
// sink's connector wrote.
func TestBytesInOut(t *testing.T) {
	payloads := []string{"one", "three", "fifteen", strings.Repeat("z", 300)}
	var in int64
	for _, p := range payloads {
		in += int64(len(p))
	}
	out := 2 * in
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	s := eddy.FromSource[string](env, "payloads", &connectortest.BytesSource{Payloads: payloads}, eddy.NoWatermarks[string]())
	eddy.WriteTo(eddy.Map(s.Rebalance(), strings.ToUpper).Name("upper"), "copies", connectortest.BytesSink{Bytes: func(r string) int { return 2 * len(r) }})
	if err := env.Execute(context.Background(), "bytes"); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t)
	srv.Set("bytes", env)
	url := serve(t, srv)

	var flat []struct {
		Operator                            string
		BytesIn, BytesOut                   *int64
		BytesInPerSecond, BytesOutPerSecond *float64
	}
	get(t, url+"/v1/jobs/bytes/metrics", &flat)
	got := map[string][2]int64{}
	for _, m := range flat {
		if m.BytesIn == nil || m.BytesOut == nil || m.BytesInPerSecond == nil || m.BytesOutPerSecond == nil {
			t.Fatalf("operator %q lacks bytesIn, bytesOut or their rates: %+v", m.Operator, m)
		}
		b := got[m.Operator]
		got[m.Operator] = [2]int64{b[0] + *m.BytesIn, b[1] + *m.BytesOut}
	}
	want := map[string][2]int64{"Source: payloads": {in, 0}, "upper": {0, 0}, "Sink: copies": {0, out}}
	for op, w := range want {
		if got[op] != w {
			t.Errorf("/metrics: operator %q has bytes in, out %v, want %v (all: %v)", op, got[op], w, got)
		}
	}

	var job struct {
		Vertices []struct {
			ID        int
			Operators []struct{ Name string }
		}
	}
	get(t, url+"/v1/jobs/bytes", &job)
	var vin, vout int64
	for _, v := range job.Vertices {
		var vj struct {
			Metrics  struct{ BytesIn, BytesOut int64 }
			Subtasks []struct{ BytesIn, BytesOut int64 }
		}
		get(t, url+"/v1/jobs/bytes/vertices/"+strconv.Itoa(v.ID), &vj)
		var sin, sout int64
		for _, st := range vj.Subtasks {
			sin += st.BytesIn
			sout += st.BytesOut
		}
		if sin != vj.Metrics.BytesIn || sout != vj.Metrics.BytesOut {
			t.Errorf("vertex %d: bytes in, out %d, %d, but its subtasks' add up to %d, %d", v.ID, vj.Metrics.BytesIn, vj.Metrics.BytesOut, sin, sout)
		}
		vin += vj.Metrics.BytesIn
		vout += vj.Metrics.BytesOut
	}
	if vin != in || vout != out {
		t.Errorf("the vertices' bytes in, out add up to %d, %d, want %d, %d", vin, vout, in, out)
	}

	js := &Jobs{}
	js.Set("bytes", env)
	fams, _ := scrape(t, prometheusHandler(js))
	for _, c := range []struct {
		metric, operator string
		want             int64
	}{
		{"eddy_job_task_operator_numBytesIn_total", "Source: payloads", in},
		{"eddy_job_task_operator_numBytesOut_total", "Source: payloads", 0},
		{"eddy_job_task_operator_numBytesIn_total", "upper", 0},
		{"eddy_job_task_operator_numBytesOut_total", "upper", 0},
		{"eddy_job_task_operator_numBytesOut_total", "Sink: copies", out},
		{"eddy_job_task_operator_numBytesIn_total", "Sink: copies", 0},
	} {
		if v, n := sum(fams, c.metric, map[string]string{"operator_name": c.operator}); n != 2 || v != float64(c.want) {
			t.Errorf("%s of %q: %v over %d series, want %d over 2", c.metric, c.operator, v, n, c.want)
		}
	}
	for _, rate := range []string{"eddy_job_task_operator_numBytesInPerSecond", "eddy_job_task_operator_numBytesOutPerSecond"} {
		if _, n := sum(fams, rate, nil); n == 0 {
			t.Errorf("no %s", rate)
		}
	}
}
