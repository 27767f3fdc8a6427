package main

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/eddystream/eddy/connector"
)

// Reading is a record of the made-up log.
type Reading struct {
	Shard int
	Seq   int64
	// Time is the reading's event time in milliseconds.
	Time  int64
	Value int64
}

// LogSource reads a made-up sharded log: shard s holds the readings with
// sequence numbers 0 to PerShard-1. It stands for any outside system with
// partitions and offsets (a broker, a table with a key range per split).
//
// It is written against the public SPI only (package connector):
//   - a split is a shard, with the sequence number of the next reading as
//     its position (its own state encoding, see shardPos);
//   - the enumerator hands out shards one at a time, when a reader asks for
//     one, so it assigns splits after the job has started and keeps the
//     shards not yet handed out in its checkpointed state;
//   - the reader emits the readings of its shard with their event times,
//     and snapshots its position.
type LogSource struct {
	Shards   int
	PerShard int64
}

// reading returns reading seq of shard s: one every 100 ms of event time.
func reading(s int, seq int64) Reading {
	return Reading{Shard: s, Seq: seq, Time: seq * 100, Value: (int64(s)*7 + seq*seq*13) % 101}
}

// All returns every reading of the log, for tests.
func (l *LogSource) All() []Reading {
	var out []Reading
	for s := 0; s < l.Shards; s++ {
		for seq := int64(0); seq < l.PerShard; seq++ {
			out = append(out, reading(s, seq))
		}
	}
	return out
}

// shardPos is a split of the log: a shard and the next sequence number to
// read in it.
type shardPos struct {
	shard int
	next  int64
}

func (p shardPos) split() connector.Split {
	b := binary.AppendUvarint(nil, uint64(p.shard))
	return connector.Split{ID: fmt.Sprintf("shard-%d", p.shard), State: binary.AppendVarint(b, p.next)}
}

func decodeShardPos(s connector.Split) (shardPos, error) {
	shard, n := binary.Uvarint(s.State)
	if n <= 0 {
		return shardPos{}, errors.New("corrupt split state")
	}
	next, m := binary.Varint(s.State[n:])
	if m <= 0 {
		return shardPos{}, errors.New("corrupt split state")
	}
	return shardPos{shard: int(shard), next: next}, nil
}

// NewEnumerator returns the enumerator: on a fresh start every shard is
// pending; on a restore, those the checkpoint had not handed out yet.
func (l *LogSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	e := &shardEnumerator{ctx: ctx}
	if restored == nil {
		for s := 0; s < l.Shards; s++ {
			e.pending = append(e.pending, shardPos{shard: s}.split())
		}
		return e, nil
	}
	pending, err := connector.DecodeSplits(restored)
	if err != nil {
		return nil, fmt.Errorf("log source %q: restoring the enumerator: %w", ctx.SourceName(), err)
	}
	e.pending = pending
	return e, nil
}

// shardEnumerator hands out a shard to each reader that asks for one.
type shardEnumerator struct {
	ctx     connector.EnumeratorContext
	pending []connector.Split
}

// AddReader does nothing: readers ask for shards when they need one.
func (e *shardEnumerator) AddReader(int) error { return nil }

// HandleSplitRequest gives the reader the next shard, or tells it that
// there are no more.
func (e *shardEnumerator) HandleSplitRequest(subtask int) error {
	if len(e.pending) == 0 {
		e.ctx.SignalNoMoreSplits(subtask)
		return nil
	}
	e.ctx.AssignSplits(subtask, e.pending[0])
	e.pending = e.pending[1:]
	return nil
}

// HandleEvent refuses events: the readers send none.
func (e *shardEnumerator) HandleEvent(subtask int, _ []byte) error {
	return fmt.Errorf("log source %q: unexpected event from reader %d", e.ctx.SourceName(), subtask)
}

// SnapshotState returns the shards not handed out yet.
func (e *shardEnumerator) SnapshotState(int64) ([]byte, error) {
	return connector.EncodeSplits(e.pending), nil
}

// Close does nothing.
func (e *shardEnumerator) Close() error { return nil }

// NewReader returns the reader of one subtask.
func (l *LogSource) NewReader(ctx connector.ReaderContext) (connector.Reader[Reading], error) {
	return &shardReader{ctx: ctx, src: l}, nil
}

// shardReader reads its shards one after the other.
type shardReader struct {
	ctx    connector.ReaderContext
	src    *LogSource
	shards []shardPos
	asked  bool // a shard was asked for and has not come yet
	noMore bool // the enumerator has no shard left
}

// AddSplits takes shards: restored ones, or the one it asked for.
func (r *shardReader) AddSplits(splits []connector.Split) error {
	for _, s := range splits {
		p, err := decodeShardPos(s)
		if err != nil {
			return fmt.Errorf("log source: split %s: %w", s.ID, err)
		}
		r.shards = append(r.shards, p)
	}
	r.asked = false
	return nil
}

// NoMoreSplits notes that no shard will come: the reader ends once its
// shards are read.
func (r *shardReader) NoMoreSplits() { r.noMore = true }

// Read emits the readings of the current shard until the batch is full;
// with no shard, it asks for one and returns.
func (r *shardReader) Read(out connector.Output[Reading]) error {
	if len(r.shards) == 0 {
		if !r.asked && !r.noMore {
			r.ctx.RequestSplit()
			r.asked = true
		}
		return nil
	}
	p := &r.shards[0]
	so := out.Split(p.split().ID)
	for p.next < r.src.PerShard && out.Room() > 0 {
		v := reading(p.shard, p.next)
		so.EmitAt(v, v.Time)
		p.next++
	}
	if p.next == r.src.PerShard {
		so.Finish()
		r.shards = r.shards[1:]
	}
	return nil
}

// SnapshotState returns the shards the reader holds, with their positions.
func (r *shardReader) SnapshotState(int64) ([]connector.Split, error) {
	out := make([]connector.Split, len(r.shards))
	for i, p := range r.shards {
		out[i] = p.split()
	}
	return out, nil
}

// Close does nothing: the log needs no connection.
func (r *shardReader) Close() error { return nil }
