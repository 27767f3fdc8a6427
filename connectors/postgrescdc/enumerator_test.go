package postgrescdc

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc"
)

// gateCtx records what an enumerator hands out.
type gateCtx struct {
	p             int
	checkpointing bool
	assigned      map[int][]connector.Split
}

func (c *gateCtx) SourceName() string { return "cdc" }
func (c *gateCtx) Parallelism() int   { return c.p }
func (c *gateCtx) AssignSplits(subtask int, splits ...connector.Split) {
	c.assigned[subtask] = append(c.assigned[subtask], splits...)
}
func (c *gateCtx) SignalNoMoreSplits(int)            {}
func (c *gateCtx) SendEvent(int, []byte)             {}
func (c *gateCtx) Log() *slog.Logger                 { return slog.Default() }
func (c *gateCtx) Checkpointing() bool               { return c.checkpointing }
func (c *gateCtx) Every(time.Duration, func() error) {}
func (c *gateCtx) CallAsync(fn func() (any, error), handler func(any, error) error) {
	panic("not used")
}

func (c *gateCtx) streamAssigned() bool {
	for _, ss := range c.assigned {
		for _, s := range ss {
			if s.ID == streamSplitID {
				return true
			}
		}
	}
	return false
}

// finishChunks starts an enumerator with two chunks read in one exported
// snapshot, hands them to two readers, and reports them done; subtask 0
// asks for the stream split before the last report.
func finishChunks(t *testing.T, ctx *gateCtx) *enumerator {
	t.Helper()
	e, err := newEnumerator(ctx, &config{startup: "initial"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.discovered(discovery{chunks: chunksOf("public.t", []int64{100}), live: "00000003-00000002-1", liveLSN: 4000}, nil); err != nil {
		t.Fatal(err)
	}
	for r := 0; r < 2; r++ {
		if err := e.HandleSplitRequest(r); err != nil {
			t.Fatal(err)
		}
	}
	for r := 0; r < 2; r++ {
		if len(ctx.assigned[r]) != 1 {
			t.Fatalf("reader %d got %d splits, want one chunk", r, len(ctx.assigned[r]))
		}
		c, _, err := decodeSplit(ctx.assigned[r][0])
		if err != nil || c == nil {
			t.Fatalf("reader %d got %v (%v), not a chunk", r, ctx.assigned[r], err)
		}
		c.done, c.rows = true, int64(10+r)
		if r == 0 {
			if err := e.HandleSplitRequest(0); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.HandleEvent(r, append([]byte{cdc.EventChunkDone}, encodeChunkSplit(c).State...)); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// TestStreamSplitWaitsForCheckpoint: with two readers and checkpoints, the
// stream split is handed out only once a checkpoint taken after the last
// chunk was reported has completed, so that no change from the slot can
// overtake a chunk's rows downstream; an earlier checkpoint's completion
// does not open the gate, and a chunk reported again does not close it.
func TestStreamSplitWaitsForCheckpoint(t *testing.T) {
	ctx := &gateCtx{p: 2, checkpointing: true, assigned: map[int][]connector.Split{}}
	e := finishChunks(t, ctx)
	if ctx.streamAssigned() {
		t.Fatal("the stream split was handed out before a checkpoint carried the chunks")
	}
	if e.holder != nil || e.live != "" {
		t.Fatal("the snapshot was not released once every chunk was read")
	}
	if err := e.NotifyCheckpointComplete(3); err != nil { // taken before the last report
		t.Fatal(err)
	}
	if ctx.streamAssigned() {
		t.Fatal("the completion of a checkpoint taken before the last chunk opened the gate")
	}
	if _, err := e.SnapshotState(4); err != nil {
		t.Fatal(err)
	}
	if err := e.HandleSplitRequest(1); err != nil {
		t.Fatal(err)
	}
	if ctx.streamAssigned() {
		t.Fatal("the stream split was handed out before checkpoint 4 completed")
	}
	if err := e.NotifyCheckpointComplete(4); err != nil {
		t.Fatal(err)
	}
	if !ctx.streamAssigned() {
		t.Fatal("the stream split was not handed out after checkpoint 4 completed")
	}
	n := 0
	for _, ss := range ctx.assigned {
		for _, s := range ss {
			if s.ID == streamSplitID {
				n++
			}
		}
	}
	if n != 1 {
		t.Fatalf("the stream split was handed out %d times, want once", n)
	}
}

// TestStreamSplitWithoutCheckpoints: a job without checkpoints gets the
// stream split as soon as the last chunk is reported, since no checkpoint
// would ever open the gate.
func TestStreamSplitWithoutCheckpoints(t *testing.T) {
	ctx := &gateCtx{p: 2, checkpointing: false, assigned: map[int][]connector.Split{}}
	finishChunks(t, ctx)
	if !ctx.streamAssigned() {
		t.Fatal("without checkpoints the stream split waited")
	}
}

// dropCtx runs an enumerator's asynchronous calls but, as the host does
// once the job has stopped, never their handlers; each call waits for
// release to be closed, and reports its end on ended.
type dropCtx struct {
	gateCtx
	release chan struct{}
	ended   chan error
}

func (c *dropCtx) CallAsync(fn func() (any, error), _ func(any, error) error) {
	go func() {
		<-c.release
		_, err := fn()
		c.ended <- err
	}()
}

// TestClosedEnumeratorClosesSnapshot: a discovery whose result the host
// drops because the job stopped leaves no connection open on the server,
// neither the replication connection that exports the snapshot nor the
// temporary slot it created, whether it ends before or after the
// enumerator is closed.
func TestClosedEnumeratorClosesSnapshot(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	schema, slot := s.newSchema(c)
	createAccounts(t, c, schema, 10)
	run(t, c, "SELECT pg_create_logical_replication_slot('"+slot+"', 'pgoutput')") // a temporary slot exports the snapshot
	opts, err := spec.Validate(s.options(schema, "accounts", slot))
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewTableSource(accountsTable, opts)
	if err != nil {
		t.Fatal(err)
	}
	// openSnapshots counts the server's replication connections and
	// temporary slots once those of closed connections are gone.
	openSnapshots := func() string {
		q := "SELECT (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'walsender') + (SELECT count(*) FROM pg_replication_slots WHERE temporary)"
		n := rows(t, c, q)[0]
		for deadline := time.Now().Add(10 * time.Second); n != "0" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			n = rows(t, c, q)[0]
		}
		return n
	}
	for _, closeFirst := range []bool{false, true} {
		ctx := &dropCtx{gateCtx: gateCtx{p: 1, checkpointing: true, assigned: map[int][]connector.Split{}},
			release: make(chan struct{}), ended: make(chan error, 1)}
		e, err := src.NewEnumerator(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.AddReader(0); err != nil {
			t.Fatal(err)
		}
		if closeFirst {
			e.Close()
			close(ctx.release)
			if err := <-ctx.ended; !errors.Is(err, errClosed) {
				t.Errorf("a discovery that ended after Close returned %v, want errClosed", err)
			}
		} else {
			close(ctx.release)
			if err := <-ctx.ended; err != nil {
				t.Fatal(err)
			}
			e.Close()
		}
		if n := openSnapshots(); n != "0" {
			when := "after"
			if closeFirst {
				when = "before"
			}
			t.Errorf("with the enumerator closed %s the discovery ended, %s replication connections and temporary slots are still open", when, n)
		}
	}
}

// TestEnumeratorStateRoundTrip: a restored enumerator has the chunks read,
// with their consistent points and rows, and the snapshot's progress per
// table; the stream split it hands out starts at their consistent point.
// A state of an older encoding is refused.
func TestEnumeratorStateRoundTrip(t *testing.T) {
	ctx := &gateCtx{p: 2, checkpointing: true, assigned: map[int][]connector.Split{}}
	e := finishChunks(t, ctx)
	state, err := e.SnapshotState(4)
	if err != nil {
		t.Fatal(err)
	}
	ctx2 := &gateCtx{p: 1, assigned: map[int][]connector.Split{}}
	r, err := newEnumerator(ctx2, &config{startup: "initial"}, nil, state)
	if err != nil {
		t.Fatal(err)
	}
	p := r.chunks.Progress()
	if len(p) != 1 || p[0].Table != "public.t" || p[0].Chunks != 2 || p[0].Read != 2 || p[0].Rows != 21 || !p[0].Done() {
		t.Fatalf("restored progress %+v, want public.t with 2 of 2 chunks and 21 rows read", p)
	}
	if err := r.HandleSplitRequest(0); err != nil {
		t.Fatal(err)
	}
	if len(ctx2.assigned[0]) != 1 {
		t.Fatalf("the restored enumerator handed out %v, want the stream split", ctx2.assigned[0])
	}
	_, s, err := decodeSplit(ctx2.assigned[0][0])
	if err != nil || s == nil {
		t.Fatalf("the restored enumerator handed out %v (%v), not the stream split", ctx2.assigned[0], err)
	}
	if s.pos != 4000 || len(s.chunks) != 2 {
		t.Fatalf("stream split at %d with %d chunks, want 4000 with 2", s.pos, len(s.chunks))
	}
	old := append([]byte{1}, state[1:]...)
	if _, err := newEnumerator(ctx2, &config{startup: "initial"}, nil, old); err == nil || !strings.Contains(err.Error(), "encoding this version does not read") {
		t.Fatalf("a state of encoding version 1 gave %v, want it refused", err)
	}
}
