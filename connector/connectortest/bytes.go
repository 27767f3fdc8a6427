package connectortest

import (
	"github.com/eddystream/eddy/connector"
)

// BytesSource is a bounded source of strings for tests of the bytes a job
// reports: it reads its payloads, a split each, and counts each payload's
// bytes as read from the outside (connector.CountBytesIn).
type BytesSource struct {
	// Payloads are the records read, a split each (so they must differ).
	Payloads []string
}

// NewEnumerator assigns the payloads' splits.
func (s *BytesSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) {
		splits := make([]connector.Split, len(s.Payloads))
		for i, p := range s.Payloads {
			splits[i] = connector.Split{ID: p}
		}
		return splits, nil
	})
}

// NewReader returns a reader that emits the payload of each split it is
// given, counting its bytes.
func (s *BytesSource) NewReader(ctx connector.ReaderContext) (connector.Reader[string], error) {
	return &bytesReader{ctx: ctx}, nil
}

type bytesReader struct {
	ctx    connector.ReaderContext
	splits []string
}

func (r *bytesReader) AddSplits(s []connector.Split) error {
	for _, sp := range s {
		r.splits = append(r.splits, sp.ID)
	}
	return nil
}

func (r *bytesReader) Read(out connector.Output[string]) error {
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

func (r *bytesReader) SnapshotState(int64) ([]connector.Split, error) {
	out := make([]connector.Split, len(r.splits))
	for i, p := range r.splits {
		out[i] = connector.Split{ID: p}
	}
	return out, nil
}

func (r *bytesReader) Close() error { return nil }

// BytesSink is a sink of strings for tests of the bytes a job reports: it
// writes nothing, but counts Bytes(record) bytes of each record as written
// to the outside (connector.CountBytesOut).
type BytesSink struct {
	// Bytes is how many bytes a record counts.
	Bytes func(record string) int
}

// NewWriter returns the writer of one subtask.
func (s BytesSink) NewWriter(ctx connector.WriterContext) (connector.Writer[string], error) {
	return bytesWriter{ctx: ctx, bytes: s.Bytes}, nil
}

type bytesWriter struct {
	ctx   connector.WriterContext
	bytes func(string) int
}

func (w bytesWriter) Write(records []string, _ []int64) error {
	for _, r := range records {
		connector.CountBytesOut(w.ctx, w.bytes(r))
	}
	return nil
}

func (bytesWriter) Flush() error { return nil }
func (bytesWriter) Close() error { return nil }
