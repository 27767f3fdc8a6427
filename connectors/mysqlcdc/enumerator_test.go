package mysqlcdc

import (
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

func (c *gateCtx) binlogAssigned() bool {
	for _, ss := range c.assigned {
		for _, s := range ss {
			if s.ID == binlogSplitID {
				return true
			}
		}
	}
	return false
}

// finishChunks starts an enumerator with two chunks, hands them to two
// readers, and reports them done; subtask 0 then asks for the binlog split.
func finishChunks(t *testing.T, ctx *gateCtx) *enumerator {
	t.Helper()
	e, err := newEnumerator(ctx, &config{startup: "initial"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.discovered(discovery{chunks: chunksOf("db.t", []string{"100"})}, nil); err != nil {
		t.Fatal(err)
	}
	for r := 0; r < 2; r++ {
		if err := e.HandleSplitRequest(r); err != nil {
			t.Fatal(err)
		}
	}
	for r := 0; r < 2; r++ {
		c, _, err := decodeSplit(ctx.assigned[r][0])
		if err != nil || c == nil {
			t.Fatalf("reader %d got %v (%v), not a chunk", r, ctx.assigned[r], err)
		}
		c.done, c.rows, c.high = true, int64(10+r), position{File: "binlog.000001", Pos: uint32(400 + r)}
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

// TestBinlogSplitWaitsForCheckpoint: with two readers and checkpoints, the
// binlog split is handed out only once a checkpoint taken after the last
// chunk was reported has completed, so that no binlog change can overtake
// a chunk's rows downstream; an earlier checkpoint's completion does not
// open the gate.
func TestBinlogSplitWaitsForCheckpoint(t *testing.T) {
	ctx := &gateCtx{p: 2, checkpointing: true, assigned: map[int][]connector.Split{}}
	e := finishChunks(t, ctx)
	if ctx.binlogAssigned() {
		t.Fatal("the binlog split was handed out before a checkpoint carried the chunks")
	}
	if err := e.NotifyCheckpointComplete(3); err != nil { // taken before the last report
		t.Fatal(err)
	}
	if ctx.binlogAssigned() {
		t.Fatal("the completion of a checkpoint taken before the last chunk opened the gate")
	}
	if _, err := e.SnapshotState(4); err != nil {
		t.Fatal(err)
	}
	if ctx.binlogAssigned() {
		t.Fatal("the binlog split was handed out before checkpoint 4 completed")
	}
	if err := e.NotifyCheckpointComplete(4); err != nil {
		t.Fatal(err)
	}
	if !ctx.binlogAssigned() {
		t.Fatal("the binlog split was not handed out after checkpoint 4 completed")
	}
}

// TestBinlogSplitWithoutCheckpoints: a job without checkpoints gets the
// binlog split as soon as the last chunk is reported, since no checkpoint
// would ever open the gate.
func TestBinlogSplitWithoutCheckpoints(t *testing.T) {
	ctx := &gateCtx{p: 2, checkpointing: false, assigned: map[int][]connector.Split{}}
	finishChunks(t, ctx)
	if !ctx.binlogAssigned() {
		t.Fatal("without checkpoints the binlog split waited")
	}
}

// TestEnumeratorStateRoundTrip: a restored enumerator has the chunks read,
// with their high positions and rows, and the snapshot's progress per
// table; the binlog split it hands out starts at the lowest high position.
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
	if len(p) != 1 || p[0].Table != "db.t" || p[0].Chunks != 2 || p[0].Read != 2 || p[0].Rows != 21 || !p[0].Done() {
		t.Fatalf("restored progress %+v, want db.t with 2 of 2 chunks and 21 rows read", p)
	}
	if err := r.HandleSplitRequest(0); err != nil {
		t.Fatal(err)
	}
	if len(ctx2.assigned[0]) != 1 {
		t.Fatalf("the restored enumerator handed out %v, want the binlog split", ctx2.assigned[0])
	}
	_, b, err := decodeSplit(ctx2.assigned[0][0])
	if err != nil || b == nil {
		t.Fatalf("the restored enumerator handed out %v (%v), not the binlog split", ctx2.assigned[0], err)
	}
	if b.pos.Pos != 400 || len(b.chunks) != 2 {
		t.Fatalf("binlog split at %v with %d chunks, want binlog.000001:400 with 2", b.pos, len(b.chunks))
	}
	// Version 2 had positions without GTID sets, version 3 no bounds of
	// chunks of keys other than integers.
	for _, v := range []byte{2, 3} {
		old := append([]byte{v}, state[1:]...)
		if _, err := newEnumerator(ctx2, &config{startup: "initial"}, nil, old); err == nil || !strings.Contains(err.Error(), "encoding this version does not read") {
			t.Fatalf("a state of encoding version %d gave %v, want it refused", v, err)
		}
		split := encodeBinlogSplit(&binlogSplit{pos: position{File: "binlog.000001", Pos: 400}})
		split.State[0] = v
		if _, _, err := decodeSplit(split); err == nil || !strings.Contains(err.Error(), "encoding this version does not read") {
			t.Fatalf("a binlog split of encoding version %d gave %v, want it refused", v, err)
		}
	}
}
