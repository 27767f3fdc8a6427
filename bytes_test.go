package eddy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector/connectortest"
)

// TestBytesInOut runs a source that counts the bytes it reads through a map
// into a sink that counts the bytes it writes: Metrics reports them as the
// source's bytes in and the sink's bytes out, summed over the subtasks, and
// no bytes for the map, which receives and emits Go values.
func TestBytesInOut(t *testing.T) {
	payloads := []string{"a", "bb", "ccc", "dddd", "hello, world", strings.Repeat("x", 1000)}
	var in, out int64
	for _, p := range payloads {
		in += int64(len(p))
		out += int64(len("<"+p+">")) + 1
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	s := eddy.FromSource[string](env, "payloads", &connectortest.BytesSource{Payloads: payloads}, eddy.NoWatermarks[string]())
	m := eddy.Map(s.Rebalance(), func(p string) string { return "<" + p + ">" }).Name("wrap")
	eddy.WriteTo(m, "lines", connectortest.BytesSink{Bytes: func(r string) int { return len(r) + 1 }}) // a line each
	if err := env.Execute(context.Background(), "bytes"); err != nil {
		t.Fatal(err)
	}
	got := map[string][2]int64{}
	for _, om := range env.Metrics() {
		b := got[om.Name]
		b[0] += om.BytesIn
		b[1] += om.BytesOut
		got[om.Name] = b
	}
	want := map[string][2]int64{"Source: payloads": {in, 0}, "wrap": {0, 0}, "Sink: lines": {0, out}}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("no metrics of operator %q in %v", name, got)
			continue
		}
		if g != w {
			t.Errorf("operator %q: bytes in, out = %v, want %v", name, g, w)
		}
	}
}
