package cdc

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/connector"
)

// testChunk is a chunk of a test source.
type testChunk struct {
	table string
	index int
	done  bool
	rows  int64
}

func (c *testChunk) ID() string    { return fmt.Sprintf("chunk:%s:%d", c.table, c.index) }
func (c *testChunk) Table() string { return c.table }
func (c *testChunk) Done() bool    { return c.done }
func (c *testChunk) Rows() int64   { return c.rows }

var testCodec = ChunkCodec[*testChunk]{Source: "test-cdc", Version: 7,
	Append: func(b []byte, c *testChunk) []byte {
		b = AppendString(b, c.table)
		b = binary.AppendUvarint(b, uint64(c.index))
		b = AppendFlag(b, c.done)
		return binary.AppendUvarint(b, uint64(c.rows))
	},
	Read: func(d *Decoder) *testChunk {
		return &testChunk{table: d.String(), index: d.Int(), done: d.Flag(), rows: int64(d.Uvarint())}
	},
}

// logRecords keeps the messages logged, with their attributes.
type logRecords struct{ lines []string }

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.lines = append(l.lines, b.String())
	return nil
}
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecords) WithGroup(string) slog.Handler      { return l }

// enumCtx records what the bookkeeping hands out and sends.
type enumCtx struct {
	p             int
	checkpointing bool
	assigned      map[int][]connector.Split
	noMore        map[int]bool
	events        []string
	log           *logRecords
}

func newEnumCtx(p int, checkpointing bool) *enumCtx {
	return &enumCtx{p: p, checkpointing: checkpointing, assigned: map[int][]connector.Split{}, noMore: map[int]bool{}, log: &logRecords{}}
}

func (c *enumCtx) SourceName() string { return "cdc" }
func (c *enumCtx) Parallelism() int   { return c.p }
func (c *enumCtx) AssignSplits(subtask int, splits ...connector.Split) {
	c.assigned[subtask] = append(c.assigned[subtask], splits...)
}
func (c *enumCtx) SignalNoMoreSplits(subtask int)    { c.noMore[subtask] = true }
func (c *enumCtx) SendEvent(_ int, e []byte)         { c.events = append(c.events, string(e)) }
func (c *enumCtx) Log() *slog.Logger                 { return slog.New(c.log) }
func (c *enumCtx) Checkpointing() bool               { return c.checkpointing }
func (c *enumCtx) Every(time.Duration, func() error) {}
func (c *enumCtx) CallAsync(func() (any, error), func(any, error) error) {
	panic("not used")
}

func (c *enumCtx) ids(subtask int) []string {
	var out []string
	for _, s := range c.assigned[subtask] {
		out = append(out, s.ID)
	}
	return out
}

func testChunks(table string, n int) []*testChunk {
	out := make([]*testChunk, n)
	for i := range out {
		out[i] = &testChunk{table: table, index: i}
	}
	return out
}

// done returns the event of a reader that read c with rows rows.
func done(c *testChunk, rows int64) []byte {
	r := *c
	r.done, r.rows = true, rows
	return append([]byte{EventChunkDone}, testCodec.Split(&r).State...)
}

func streamSplit() connector.Split { return connector.Split{ID: "stream"} }

// TestChunksHandOut: the chunks go out in order, a chunk that is not ready
// has its reader wait until ServeWaiting, and the stream split goes to one
// reader once every chunk is read; the others are told there are no more.
func TestChunksHandOut(t *testing.T) {
	ctx := newEnumCtx(2, false)
	ready := false
	s := NewChunks(ctx, Splits[*testChunk]{Codec: testCodec, Stream: streamSplit,
		Ready: func(*testChunk) bool { return ready }})
	s.Request(0) // before Start: waits
	cs := testChunks("db.a", 2)
	s.Start(cs)
	s.ServeWaiting()
	if len(ctx.assigned[0]) != 0 {
		t.Fatalf("a chunk that was not ready was handed out: %v", ctx.ids(0))
	}
	ready = true
	s.ServeWaiting()
	s.Request(1)
	if got := slices.Concat(ctx.ids(0), ctx.ids(1)); !slices.Equal(got, []string{"chunk:db.a:0", "chunk:db.a:1"}) {
		t.Fatalf("handed out %v, want the two chunks in order", got)
	}
	s.Request(0)
	if len(ctx.assigned[0]) != 1 {
		t.Fatal("the stream split was handed out before the chunks were read")
	}
	for i, c := range cs {
		last, err := s.HandleEvent(i, done(c, 5))
		if err != nil {
			t.Fatal(err)
		}
		if last != (i == 1) {
			t.Fatalf("chunk %d: last = %v", i, last)
		}
	}
	if !slices.Equal(ctx.events, []string{"Achunk:db.a:0", "Achunk:db.a:1"}) {
		t.Fatalf("acknowledgements %q", ctx.events)
	}
	if got := ctx.ids(0); len(got) != 2 || got[1] != "stream" || !ctx.noMore[0] {
		t.Fatalf("reader 0 got %v (no more: %v), want the stream split last", got, ctx.noMore[0])
	}
	s.Request(1)
	if !ctx.noMore[1] || len(ctx.assigned[1]) != 1 {
		t.Fatalf("reader 1 got %v, no more: %v; want no stream split and no more", ctx.ids(1), ctx.noMore[1])
	}
	if _, err := s.HandleEvent(0, []byte("X")); err == nil || !strings.Contains(err.Error(), "test-cdc: unknown reader event") {
		t.Fatalf("an unknown event gave %v", err)
	}
	if _, err := s.HandleEvent(0, append([]byte{EventChunkDone}, 7, 's')); err == nil {
		t.Fatal("a chunk event holding another split was taken")
	}
}

// TestChunksSnapshotOnly: without a stream, readers that find no chunk
// left are told there are no more splits.
func TestChunksSnapshotOnly(t *testing.T) {
	ctx := newEnumCtx(1, true)
	s := NewChunks(ctx, Splits[*testChunk]{Codec: testCodec})
	s.Start(testChunks("db.a", 1))
	s.Request(0)
	s.Request(0)
	if len(ctx.assigned[0]) != 1 || !ctx.noMore[0] {
		t.Fatalf("got %v, no more: %v", ctx.ids(0), ctx.noMore[0])
	}
}

// TestChunksProgress: the progress per table follows the chunks read and
// their rows; a chunk reported twice counts once. The log has a line per
// table being read once the period has passed, a line per table read and
// one for the snapshot.
func TestChunksProgress(t *testing.T) {
	ctx := newEnumCtx(2, false)
	s := NewChunks(ctx, Splits[*testChunk]{Codec: testCodec, Stream: streamSplit})
	clock := time.Unix(1000, 0)
	s.progress.now = func() time.Time { return clock }
	a, b := testChunks("db.a", 2), testChunks("db.b", 3)
	s.Start(slices.Concat(a, b))
	for range 3 { // a0, a1, b0 handed out
		s.Request(0)
	}
	if _, err := s.HandleEvent(0, done(a[0], 10)); err != nil {
		t.Fatal(err)
	}
	if len(ctx.log.lines) != 0 {
		t.Fatalf("logged %q before the period passed", ctx.log.lines)
	}
	clock = clock.Add(progressEvery)
	if _, err := s.HandleEvent(0, done(b[0], 7)); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"test-cdc: snapshot progress table=db.a read=1 chunks=2 rows=10",
		"test-cdc: snapshot progress table=db.b read=1 chunks=3 rows=7",
	}
	if !slices.Equal(ctx.log.lines, want) {
		t.Fatalf("logged %q, want %q", ctx.log.lines, want)
	}
	ctx.log.lines = nil
	for _, ev := range [][]byte{done(a[1], 5), done(a[1], 5), done(b[1], 1), done(b[2], 2)} {
		if _, err := s.HandleEvent(1, ev); err != nil {
			t.Fatal(err)
		}
	}
	want = []string{
		"test-cdc: snapshot of a table read table=db.a chunks=2 rows=15",
		"test-cdc: snapshot of a table read table=db.b chunks=3 rows=10",
		"test-cdc: snapshot read tables=2 chunks=5 rows=25",
	}
	if !slices.Equal(ctx.log.lines, want) {
		t.Fatalf("logged %q, want %q", ctx.log.lines, want)
	}
	p := s.Progress()
	if len(p) != 2 || p[0] != (TableProgress{Table: "db.a", Chunks: 2, Read: 2, Rows: 15}) || p[1] != (TableProgress{Table: "db.b", Chunks: 3, Read: 3, Rows: 10}) {
		t.Fatalf("progress %+v", p)
	}
}

// TestChunksState: a restored state has the chunks not handed out, those
// read with their rows, whether the stream split is out and each table's
// chunk count, including a chunk that was at a reader; the connector's
// own state follows. A state of another version is refused.
func TestChunksState(t *testing.T) {
	ctx := newEnumCtx(1, false)
	s := NewChunks(ctx, Splits[*testChunk]{Codec: testCodec, Stream: streamSplit})
	cs := testChunks("db.a", 3)
	s.Start(cs)
	s.Request(0)
	s.Request(0) // a1 is at the reader
	if _, err := s.HandleEvent(0, done(cs[0], 4)); err != nil {
		t.Fatal(err)
	}
	state := binary.AppendUvarint(s.AppendState(), 42)

	r := NewChunks(newEnumCtx(1, false), Splits[*testChunk]{Codec: testCodec, Stream: streamSplit})
	d, err := r.Restore(state)
	if err != nil {
		t.Fatal(err)
	}
	if v := d.Uvarint(); v != 42 || d.Err != nil || d.More() {
		t.Fatalf("the connector's state reads %d (%v)", v, d.Err)
	}
	if !r.Started() || r.Total() != 3 || r.Unread() != 2 {
		t.Fatalf("restored: started %v, %d chunks, %d unread", r.Started(), r.Total(), r.Unread())
	}
	if f := r.Finished(); len(f) != 1 || f[0].ID() != "chunk:db.a:0" || f[0].Rows() != 4 {
		t.Fatalf("restored finished chunks %v", f)
	}
	if p := r.Progress(); len(p) != 1 || p[0] != (TableProgress{Table: "db.a", Chunks: 3, Read: 1, Rows: 4}) {
		t.Fatalf("restored progress %+v", p)
	}
	if _, err := r.Restore(append([]byte{6}, state[1:]...)); err == nil || !strings.Contains(err.Error(), "test-cdc: the enumerator state has an encoding this version does not read") {
		t.Fatalf("a state of another version gave %v", err)
	}
	if _, err := NewChunks(newEnumCtx(1, false), Splits[*testChunk]{Codec: testCodec}).Restore(state[:len(state)-3]); err == nil {
		t.Fatal("a truncated state was taken")
	}
}

// TestChunksGate: with several readers and checkpoints, the stream split
// waits for a checkpoint taken after the last chunk was read.
func TestChunksGate(t *testing.T) {
	ctx := newEnumCtx(2, true)
	s := NewChunks(ctx, Splits[*testChunk]{Codec: testCodec, Stream: streamSplit})
	cs := testChunks("db.a", 1)
	s.Start(cs)
	s.Request(0)
	s.Request(1)
	if _, err := s.HandleEvent(0, done(cs[0], 1)); err != nil {
		t.Fatal(err)
	}
	s.CheckpointComplete(1)
	if len(ctx.assigned[1]) != 0 {
		t.Fatal("the stream split went out before a checkpoint carried the chunk")
	}
	s.Snapshot(2)
	s.CheckpointComplete(2)
	if got := ctx.ids(1); !slices.Equal(got, []string{"stream"}) {
		t.Fatalf("reader 1 got %v after the checkpoint, want the stream split", got)
	}
}

// readCtx records what a reader sends.
type readCtx struct {
	events   []string
	requests int
}

func (c *readCtx) SourceName() string    { return "cdc" }
func (c *readCtx) Subtask() int          { return 0 }
func (c *readCtx) Parallelism() int      { return 1 }
func (c *readCtx) RequestSplit()         { c.requests++ }
func (c *readCtx) SendEvent(e []byte)    { c.events = append(c.events, string(e[:1])) }
func (c *readCtx) ProcessingTime() int64 { return 0 }
func (c *readCtx) Log() *slog.Logger     { return slog.Default() }

// TestReaderChunks: a reader reads its chunks in order and reports each;
// a chunk read before a failure is reported again at once; a read chunk
// stays in the checkpoints until its acknowledgement has been finished.
func TestReaderChunks(t *testing.T) {
	ctx := &readCtx{}
	r := NewReaderChunks(ctx, testCodec)
	cs := testChunks("db.a", 2)
	old := &testChunk{table: "db.b", done: true, rows: 3}
	var other []string
	splits := []connector.Split{testCodec.Split(cs[0]), testCodec.Split(cs[1]), testCodec.Split(old), {ID: "stream", State: []byte{7, 's', 9}}}
	if err := r.AddSplits(splits, 's', func(d *Decoder) { other = append(other, fmt.Sprint(d.Uvarint())) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(other, []string{"9"}) || !slices.Equal(ctx.events, []string{"D"}) {
		t.Fatalf("other splits %v, events %v", other, ctx.events)
	}
	c, ok := r.Next()
	if !ok || c.ID() != "chunk:db.a:0" {
		t.Fatalf("next chunk %v", c)
	}
	c.done = true
	r.Read(c)
	if !r.HandleAck([]byte("Achunk:db.a:0")) || r.HandleAck([]byte("N")) {
		t.Fatal("HandleAck told an acknowledgement from another event wrongly")
	}
	ids := func() []string {
		var out []string
		for _, s := range r.Splits() {
			out = append(out, s.ID)
		}
		return out
	}
	if got := ids(); !slices.Equal(got, []string{"chunk:db.a:1", "chunk:db.a:0", "chunk:db.b:0"}) {
		t.Fatalf("checkpoint splits %v", got)
	}
	var finished []string
	r.FinishAcked(func(id string) { finished = append(finished, id) })
	if !slices.Equal(finished, []string{"chunk:db.a:0"}) {
		t.Fatalf("finished %v", finished)
	}
	if got := ids(); !slices.Equal(got, []string{"chunk:db.a:1", "chunk:db.b:0"}) {
		t.Fatalf("checkpoint splits after the finish %v", got)
	}
	if err := NewReaderChunks(ctx, testCodec).AddSplits([]connector.Split{{ID: "x", State: []byte{1, 'c'}}}, 's', nil); err == nil ||
		!strings.Contains(err.Error(), "test-cdc: split \"x\" has an encoding this version does not read") {
		t.Fatalf("a split of another version gave %v", err)
	}
}
