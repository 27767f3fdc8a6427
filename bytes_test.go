package eddy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
)

// payloadSource reads its payloads, one split each, and counts their bytes
// as read from the outside.
type payloadSource struct{ payloads []string }

func (s *payloadSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) {
		splits := make([]connector.Split, len(s.payloads))
		for i, p := range s.payloads {
			splits[i] = connector.Split{ID: p}
		}
		return splits, nil
	})
}

func (s *payloadSource) NewReader(ctx connector.ReaderContext) (connector.Reader[string], error) {
	return &payloadReader{ctx: ctx}, nil
}

type payloadReader struct {
	ctx    connector.ReaderContext
	splits []string
}

func (r *payloadReader) AddSplits(s []connector.Split) error {
	for _, sp := range s {
		r.splits = append(r.splits, sp.ID)
	}
	return nil
}

func (r *payloadReader) Read(out connector.Output[string]) error {
	for len(r.splits) > 0 && out.Room() > 0 {
		p := r.splits[0]
		r.splits = r.splits[1:]
		connector.CountBytesIn(r.ctx, len(p))
		so := out.Split(p)
		so.Emit(p)
		so.Finish()
	}
	return nil
}

func (r *payloadReader) SnapshotState(int64) ([]connector.Split, error) {
	out := make([]connector.Split, len(r.splits))
	for i, p := range r.splits {
		out[i] = connector.Split{ID: p}
	}
	return out, nil
}

func (r *payloadReader) Close() error { return nil }

// lineSink counts, for every record, its bytes and a line ending as
// written to the outside.
type lineSink struct{}

func (lineSink) NewWriter(ctx connector.WriterContext) (connector.Writer[string], error) {
	return &lineWriter{ctx: ctx}, nil
}

type lineWriter struct{ ctx connector.WriterContext }

func (w *lineWriter) Write(records []string, _ []int64) error {
	for _, r := range records {
		connector.CountBytesOut(w.ctx, len(r)+1)
	}
	return nil
}

func (w *lineWriter) Flush() error { return nil }
func (w *lineWriter) Close() error { return nil }

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
	s := eddy.FromSource[string](env, "payloads", &payloadSource{payloads}, eddy.NoWatermarks[string]())
	m := eddy.Map(s.Rebalance(), func(p string) string { return "<" + p + ">" }).Name("wrap")
	eddy.WriteTo(m, "lines", lineSink{})
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
