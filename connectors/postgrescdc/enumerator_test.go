package postgrescdc

import (
	"log/slog"
	"testing"
	"time"

	"github.com/eddystream/eddy/connector"
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
	e := &enumerator{ctx: ctx, cfg: &config{startup: "initial"}, finished: map[string]*chunk{}}
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
		c.done = true
		if r == 0 {
			if err := e.HandleSplitRequest(0); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.HandleEvent(r, append([]byte{eventChunkDone}, encodeChunkSplit(c).State...)); err != nil {
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
