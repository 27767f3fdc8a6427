package connectortest_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/eddystream/eddy/connector"
)

// row is the record of the fake connectors.
type row struct {
	Range int
	N     int64
}

// pullSource is a source whose readers ask for splits one at a time (as
// Flink's FileSource does): the enumerator assigns them after the start, on
// request. Its splits are ranges of numbers. With forgetful, its enumerator
// snapshots no state, so the splits not yet assigned at a checkpoint are lost
// on restore; with stuckPositions, its readers snapshot the start of their
// ranges instead of their positions.
type pullSource struct {
	ranges, size   int
	forgetful      bool
	stuckPositions bool
}

func (s *pullSource) want() []row {
	var out []row
	for r := 0; r < s.ranges; r++ {
		for n := 0; n < s.size; n++ {
			out = append(out, row{r, int64(r*s.size + n)})
		}
	}
	return out
}

func rangeState(r int, pos int64) []byte {
	return binary.AppendVarint(binary.AppendUvarint(nil, uint64(r)), pos)
}

func (s *pullSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	e := &pullEnumerator{src: s, ctx: ctx}
	if restored == nil {
		for r := 0; r < s.ranges; r++ {
			e.pending = append(e.pending, connector.Split{ID: fmt.Sprintf("range-%d", r), State: rangeState(r, int64(r*s.size))})
		}
		return e, nil
	}
	splits, err := connector.DecodeSplits(restored)
	if err != nil {
		return nil, err
	}
	e.pending = splits
	return e, nil
}

type pullEnumerator struct {
	src     *pullSource
	ctx     connector.EnumeratorContext
	pending []connector.Split
}

func (e *pullEnumerator) AddReader(int) error { return nil }

func (e *pullEnumerator) HandleSplitRequest(subtask int) error {
	if len(e.pending) == 0 {
		e.ctx.SignalNoMoreSplits(subtask)
		return nil
	}
	e.ctx.AssignSplits(subtask, e.pending[0])
	e.pending = e.pending[1:]
	return nil
}

func (e *pullEnumerator) HandleEvent(int, []byte) error { return errors.New("no events expected") }

func (e *pullEnumerator) SnapshotState(int64) ([]byte, error) {
	if e.src.forgetful {
		return connector.EncodeSplits(nil), nil
	}
	return connector.EncodeSplits(e.pending), nil
}

func (e *pullEnumerator) Close() error { return nil }

func (s *pullSource) NewReader(ctx connector.ReaderContext) (connector.Reader[row], error) {
	return &pullReader{src: s, ctx: ctx}, nil
}

type pullSplit struct {
	id         string
	r          int
	start, pos int64
}

type pullReader struct {
	src       *pullSource
	ctx       connector.ReaderContext
	splits    []pullSplit
	requested bool
	noMore    bool
}

func (r *pullReader) AddSplits(splits []connector.Split) error {
	for _, s := range splits {
		rg, n := binary.Uvarint(s.State)
		pos, m := binary.Varint(s.State[max(n, 0):])
		if n <= 0 || m <= 0 {
			return fmt.Errorf("split %s: corrupt state", s.ID)
		}
		r.splits = append(r.splits, pullSplit{id: s.ID, r: int(rg), start: pos, pos: pos})
	}
	r.requested = false
	return nil
}

func (r *pullReader) NoMoreSplits() { r.noMore = true }

func (r *pullReader) Read(out connector.Output[row]) error {
	if len(r.splits) == 0 {
		if !r.requested && !r.noMore {
			r.ctx.RequestSplit()
			r.requested = true
		}
		return nil
	}
	sp := &r.splits[0]
	so := out.Split(sp.id)
	end := int64((sp.r + 1) * r.src.size)
	for sp.pos < end && out.Room() > 0 {
		so.Emit(row{sp.r, sp.pos})
		sp.pos++
	}
	if sp.pos == end {
		so.Finish()
		r.splits = r.splits[1:]
	}
	return nil
}

func (r *pullReader) SnapshotState(int64) ([]connector.Split, error) {
	out := make([]connector.Split, len(r.splits))
	for i, sp := range r.splits {
		pos := sp.pos
		if r.src.stuckPositions {
			pos = sp.start
		}
		out[i] = connector.Split{ID: sp.id, State: rangeState(sp.r, pos)}
	}
	return out, nil
}

func (r *pullReader) Close() error { return nil }

// kv is the record of the fake sinks.
type kv struct {
	K string
	V int
}

// appendSink appends each record to its list when it is written: an
// at-least-once sink.
type appendSink struct {
	mu   sync.Mutex
	rows []kv
}

func (s *appendSink) NewWriter(connector.WriterContext) (connector.Writer[kv], error) {
	return appendWriter{s}, nil
}

func (s *appendSink) all() []kv {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]kv(nil), s.rows...)
}

type appendWriter struct{ s *appendSink }

func (w appendWriter) Write(records []kv, _ []int64) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.rows = append(w.s.rows, records...)
	return nil
}
func (w appendWriter) Flush() error { return nil }
func (w appendWriter) Close() error { return nil }

// upsertSink keeps the last record of each key: an idempotent sink.
type upsertSink struct {
	mu    sync.Mutex
	table map[string]kv
}

func (s *upsertSink) NewWriter(connector.WriterContext) (connector.Writer[kv], error) {
	return upsertWriter{s}, nil
}

func (s *upsertSink) all() []kv {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []kv
	for _, v := range s.table {
		out = append(out, v)
	}
	return out
}

type upsertWriter struct{ s *upsertSink }

func (w upsertWriter) Write(records []kv, _ []int64) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	for _, r := range records {
		w.s.table[r.K] = r
	}
	return nil
}
func (w upsertWriter) Flush() error { return nil }
func (w upsertWriter) Close() error { return nil }

// fakeFactory is a registered connector with options of every type. With
// leaky, its check of the token quotes the value (which the errors must
// still hide); with unregistered, it lists a format no one registered.
type fakeFactory struct {
	leaky, unregistered bool
}

func (f fakeFactory) Spec() connector.Spec {
	formats := []string{"fakefmt"}
	if f.unregistered {
		formats = append(formats, "avro")
	}
	return connector.Spec{
		Name: "fake", Kind: connector.SourceKind | connector.SinkKind,
		Description: "A connector of every option type.",
		Formats:     formats,
		Options: []connector.Option{
			{Key: "url", Type: connector.String, Required: true, Description: "Where to connect."},
			{Key: "token", Type: connector.String, Secret: true, Description: "The access token.",
				Check: func(v string) error {
					if f.leaky && len(v) > 8 {
						return fmt.Errorf("token %q is too long", v)
					}
					return nil
				}},
			{Key: "password", Type: connector.Int, Secret: true, Description: "A numeric secret."},
			{Key: "batch.rows", Type: connector.Int, Default: "100", Description: "Rows per batch."},
			{Key: "ratio", Type: connector.Float, Default: "0.5", Description: "A ratio."},
			{Key: "strict", Type: connector.Bool, Default: "false", Description: "Whether to be strict."},
			{Key: "poll.interval", Type: connector.Duration, Default: "1 s", FallbackKeys: []string{"poll-interval"}, Description: "How often to poll."},
			{Key: "buffer", Type: connector.MemorySize, Default: "1 mb", Description: "The buffer size."},
			{Key: "scan.startup.mode", Type: connector.Enum, Default: "earliest", Values: []string{"earliest", "latest"}, Description: "Where to start."},
			{Key: "topics", Type: connector.List, Description: "Topics to read."},
		},
	}
}

func (fakeFactory) NewSource(connector.Context) (any, error) {
	return &pullSource{ranges: 1, size: 1}, nil
}

func (fakeFactory) NewSink(connector.Context) (any, error) { return rowSink{}, nil }

// rowSink discards rows.
type rowSink struct{}

func (rowSink) NewWriter(connector.WriterContext) (connector.Writer[row], error) {
	return rowWriter{}, nil
}

type rowWriter struct{}

func (rowWriter) Write([]row, []int64) error { return nil }
func (rowWriter) Flush() error               { return nil }
func (rowWriter) Close() error               { return nil }

// fakeFormat is a format with one option.
type fakeFormat struct{}

func (fakeFormat) Spec() connector.Spec {
	return connector.Spec{Name: "fakefmt", Kind: connector.FormatKind, Description: "A format.",
		Options: []connector.Option{{Key: "ignore-parse-errors", Type: connector.Bool, Default: "false", Description: "Whether to skip bad records."}}}
}

func (fakeFormat) NewDecoder(connector.Context) (any, error) {
	return connector.DecoderFunc[row](func([]byte) (row, error) { return row{}, nil }), nil
}

func (fakeFormat) NewEncoder(connector.Context) (any, error) {
	return connector.EncoderFunc[row](func(dst []byte, _ row) ([]byte, error) { return dst, nil }), nil
}

func fakeRegistry(f fakeFactory) *connector.Registry {
	r := connector.NewRegistry()
	r.Register(f)
	r.Register(fakeFormat{})
	return r
}
