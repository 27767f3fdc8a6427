package cdc

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/eddystream/eddy/connector"
)

// Events between a CDC source's enumerator and its readers about the
// snapshot's chunks. A connector's own events use other bytes.
const (
	// EventChunkDone, from a reader: a chunk's rows are emitted (the
	// chunk's split state follows).
	EventChunkDone = 'D'
	// EventChunkAck, from the enumerator: the chunk whose id follows is
	// recorded; the reader lets go of it.
	EventChunkAck = 'A'
)

// Chunk is a part of a table's snapshot, as the bookkeeping shared by the
// CDC sources sees it.
type Chunk interface {
	// ID is the id of the chunk's split, unique in the source.
	ID() string
	// Table is the id of the chunk's table.
	Table() string
	// Done reports whether the chunk is read, Rows the number of rows it
	// held then.
	Done() bool
	Rows() int64
}

// Splits says how an enumerator makes the splits it hands out.
type Splits[C Chunk] struct {
	// Codec encodes the chunks.
	Codec ChunkCodec[C]
	// Ready, if set, readies a chunk about to be handed out, or reports
	// that it cannot be yet: the reader then waits, and the enumerator
	// calls Chunks.ServeWaiting when it can.
	Ready func(c C) bool
	// Stream returns the stream split (binary log, WAL), handed out once
	// every chunk is read and its rows are downstream; nil when no stream
	// follows the snapshot (a snapshot-only startup).
	Stream func() connector.Split
}

// Chunks is what a CDC source's enumerator keeps of its snapshot: the
// chunks not handed out yet, those read, the readers waiting for a split,
// whether the stream split is handed out, and the snapshot's progress. It
// hands out the chunks in order, then the stream split to one reader once
// every chunk is read and the StreamGate is open; it logs the progress
// and carries it in checkpoints.
type Chunks[C Chunk] struct {
	ctx    connector.EnumeratorContext
	splits Splits[C]

	// The state that travels in checkpoints.
	started        bool // the chunks are known
	streamAssigned bool
	remaining      []C // chunks not handed out
	total          int // chunks in all
	finished       map[string]C

	starting bool  // a discovery is under way
	waiting  []int // readers that asked for a split and got none yet
	gate     StreamGate
	progress progress
}

// NewChunks returns the bookkeeping of a source's enumerator.
func NewChunks[C Chunk](ctx connector.EnumeratorContext, splits Splits[C]) *Chunks[C] {
	return &Chunks[C]{ctx: ctx, splits: splits, finished: map[string]C{},
		progress: newProgress(ctx.Log(), splits.Codec.Source)}
}

// Restore restores the state AppendState wrote at the start of b, an
// enumerator's state, and returns a decoder of the rest.
func (s *Chunks[C]) Restore(b []byte) (*Decoder, error) {
	d, err := s.splits.Codec.decodeState(b)
	if err != nil {
		return nil, err
	}
	s.readState(d)
	return d, d.Err
}

// Started reports whether the chunks are known (Start, or a restored
// state).
func (s *Chunks[C]) Started() bool { return s.started }

// Discover runs discover on a goroutine of its own, then discovered
// with its result on the enumerator's (EnumeratorContext.CallAsync),
// unless the chunks are known or a discovery is under way. discovered
// calls Start.
func (s *Chunks[C]) Discover(discover func() (any, error), discovered func(result any, err error) error) {
	if s.started || s.starting {
		return
	}
	s.starting = true
	s.ctx.CallAsync(discover, func(result any, err error) error {
		s.starting = false
		return discovered(result, err)
	})
}

// Start takes the chunks of a snapshot, none without one, in the order
// they are to be handed out. It serves no reader: the caller calls
// ServeWaiting when it is ready to.
func (s *Chunks[C]) Start(chunks []C) {
	s.started = true
	s.remaining, s.total = chunks, len(chunks)
	for _, c := range chunks {
		s.progress.add(c)
	}
	s.progress.last = s.progress.now()
}

// Total returns the number of chunks in all.
func (s *Chunks[C]) Total() int { return s.total }

// Unread returns the number of chunks not read yet.
func (s *Chunks[C]) Unread() int { return s.total - len(s.finished) }

// Finished returns the chunks read, ordered by id.
func (s *Chunks[C]) Finished() []C {
	ids := slices.Sorted(maps.Keys(s.finished))
	out := make([]C, len(ids))
	for i, id := range ids {
		out[i] = s.finished[id]
	}
	return out
}

// Progress returns the snapshot's progress, per table in order of the
// tables' ids.
func (s *Chunks[C]) Progress() []TableProgress { return s.progress.tables() }

// Request answers a reader's request for a split, or has it wait.
func (s *Chunks[C]) Request(subtask int) {
	if !s.started {
		s.wait(subtask)
		return
	}
	s.serve(subtask)
}

func (s *Chunks[C]) wait(subtask int) {
	if !slices.Contains(s.waiting, subtask) {
		s.waiting = append(s.waiting, subtask)
	}
}

// serve hands a reader the next chunk, or once every chunk is read and
// the gate is open the stream split, or tells it there are no more.
func (s *Chunks[C]) serve(subtask int) {
	switch {
	case len(s.remaining) > 0:
		c := s.remaining[0]
		if s.splits.Ready != nil && !s.splits.Ready(c) {
			s.wait(subtask)
			return
		}
		s.remaining = s.remaining[1:]
		s.progress.handedOut(c)
		s.ctx.AssignSplits(subtask, s.splits.Codec.Split(c))
	case s.splits.Stream == nil || s.streamAssigned:
		s.ctx.SignalNoMoreSplits(subtask)
	case len(s.finished) < s.total || !s.gate.Open():
		// The stream split waits for the last chunks, and for the
		// checkpoint that carries their rows.
		s.wait(subtask)
	default:
		s.streamAssigned = true
		s.ctx.AssignSplits(subtask, s.splits.Stream())
		s.ctx.SignalNoMoreSplits(subtask)
	}
}

// ServeWaiting serves the readers waiting for a split.
func (s *Chunks[C]) ServeWaiting() {
	waiting := s.waiting
	s.waiting = nil
	for _, r := range waiting {
		s.serve(r)
	}
}

// HandleEvent records a chunk a reader reports read (an EventChunkDone
// event) and acknowledges it. It reports
// whether the chunk was the last one read; the stream split is then
// handed out to a waiting reader, or after the next checkpoint completes
// (StreamGate).
func (s *Chunks[C]) HandleEvent(subtask int, event []byte) (last bool, err error) {
	source := s.splits.Codec.Source
	if len(event) == 0 || event[0] != EventChunkDone {
		return false, fmt.Errorf("%s: unknown reader event %q", source, event)
	}
	c, err := s.splits.Codec.decodeChunk(event[1:])
	if err != nil {
		return false, fmt.Errorf("%s: bad chunk event: %w", source, err)
	}
	id := c.ID()
	_, known := s.finished[id]
	s.finished[id] = c
	s.ctx.SendEvent(subtask, append([]byte{EventChunkAck}, id...))
	if known {
		return false, nil
	}
	s.progress.read(c)
	if len(s.finished) < s.total {
		return false, nil
	}
	s.progress.end()
	if !s.streamAssigned && s.splits.Stream != nil && s.gate.Shut(s.ctx) {
		return true, nil // until a checkpoint carries the chunks' rows
	}
	s.ServeWaiting()
	return true, nil
}

// Snapshot notes that the enumerator takes its snapshot of checkpoint id.
func (s *Chunks[C]) Snapshot(id int64) { s.gate.Snapshot(id) }

// CheckpointComplete notes that checkpoint id completed, and serves the
// waiting readers if that opened the gate.
func (s *Chunks[C]) CheckpointComplete(id int64) {
	if s.gate.Complete(id) {
		s.ServeWaiting()
	}
}

// AppendState returns an enumerator's state: the encoding's version, then
// the state of the chunks; the enumerator appends its own.
func (s *Chunks[C]) AppendState() []byte {
	appendChunk := s.splits.Codec.Append
	b := []byte{s.splits.Codec.Version}
	b = AppendFlag(b, s.started)
	b = AppendFlag(b, s.streamAssigned)
	b = binary.AppendUvarint(b, uint64(s.total))
	b = binary.AppendUvarint(b, uint64(len(s.remaining)))
	for _, c := range s.remaining {
		b = appendChunk(b, c)
	}
	b = binary.AppendUvarint(b, uint64(len(s.finished)))
	for _, c := range s.Finished() {
		b = appendChunk(b, c)
	}
	return s.progress.appendCounts(b)
}

// readState reads the state of the chunks.
func (s *Chunks[C]) readState(d *Decoder) {
	chunk := func() C { return s.splits.Codec.Read(d) }
	s.started = d.Flag()
	s.streamAssigned = d.Flag()
	s.total = d.Int()
	n := d.Uvarint()
	for i := uint64(0); i < n && d.Err == nil; i++ {
		c := chunk()
		s.remaining = append(s.remaining, c)
		s.progress.restoreLeft(c)
	}
	n = d.Uvarint()
	for i := uint64(0); i < n && d.Err == nil; i++ {
		c := chunk()
		s.finished[c.ID()] = c
		s.progress.restoreRead(c)
	}
	s.progress.readCounts(d)
	s.progress.last = s.progress.now()
}
