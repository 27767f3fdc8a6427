package cdc

import (
	"maps"
	"slices"
	"time"

	"github.com/eddystream/eddy/connector"
)

// ReaderChunks is what a CDC source's reader keeps of the snapshot's
// chunks it is given: those to read, in order, and those read whose report
// the enumerator has not acknowledged yet. A read chunk's split stays in
// the reader's checkpoints until the acknowledgement, so that a restore
// reports it again if the enumerator may not have heard.
type ReaderChunks[C Chunk] struct {
	ctx       connector.ReaderContext
	codec     ChunkCodec[C]
	queue     []C
	pending   map[string]C
	acked     []string
	requested bool // a split request is outstanding
	noMore    bool // the enumerator has no more splits for the reader
}

// NewReaderChunks returns the chunk bookkeeping of a reader.
func NewReaderChunks[C Chunk](ctx connector.ReaderContext, codec ChunkCodec[C]) *ReaderChunks[C] {
	return &ReaderChunks[C]{ctx: ctx, codec: codec, pending: map[string]C{}}
}

// AddSplits takes the splits the reader is given: the chunks, and the
// split of kind other (the stream), which takeOther takes.
func (r *ReaderChunks[C]) AddSplits(splits []connector.Split, other byte, takeOther func(d *Decoder)) error {
	for _, s := range splits {
		isChunk := len(s.State) > 1 && s.State[1] == 'c'
		c, err := r.codec.DecodeSplit(s, other, takeOther)
		if err != nil {
			return err
		}
		if isChunk {
			r.Add(c, c.Done())
		}
		r.requested = false
	}
	return nil
}

// NoMoreSplits notes that the enumerator has no more splits for the
// reader.
func (r *ReaderChunks[C]) NoMoreSplits() { r.noMore = true }

// Idle asks the enumerator for a split, unless a request is outstanding
// or there are no more, and sleeps a little: the reader has nothing to
// read.
func (r *ReaderChunks[C]) Idle() {
	if !r.requested && !r.noMore {
		r.requested = true
		r.ctx.RequestSplit()
	}
	time.Sleep(2 * time.Millisecond)
}

// Add takes a chunk the reader is given: to read, or if it was read
// before a failure (done) to report again.
func (r *ReaderChunks[C]) Add(c C, done bool) {
	if done {
		r.pending[c.ID()] = c
		r.report(c)
		return
	}
	r.queue = append(r.queue, c)
}

// Next returns the next chunk to read.
func (r *ReaderChunks[C]) Next() (C, bool) {
	if len(r.queue) == 0 {
		var zero C
		return zero, false
	}
	return r.queue[0], true
}

// Read notes that the chunk Next returned is read and its rows emitted,
// and reports it to the enumerator.
func (r *ReaderChunks[C]) Read(c C) {
	r.queue = r.queue[1:]
	r.pending[c.ID()] = c
	r.report(c)
}

func (r *ReaderChunks[C]) report(c C) {
	r.ctx.SendEvent(append([]byte{EventChunkDone}, r.codec.Split(c).State...))
}

// HandleAck takes an EventChunkAck event, and reports whether event is
// one.
func (r *ReaderChunks[C]) HandleAck(event []byte) bool {
	if len(event) == 0 || event[0] != EventChunkAck {
		return false
	}
	id := string(event[1:])
	if _, ok := r.pending[id]; ok {
		// Finished in the next Read; until then checkpoints still hold it
		// (a restore reports it again, which does no harm).
		r.acked = append(r.acked, id)
	}
	return true
}

// FinishAcked lets go of the acknowledged chunks, calling finish with
// the id of each: the reader finishes its split (SplitOutput.Finish).
func (r *ReaderChunks[C]) FinishAcked(finish func(id string)) {
	for _, id := range r.acked {
		if _, ok := r.pending[id]; ok {
			delete(r.pending, id)
			finish(id)
		}
	}
	r.acked = r.acked[:0]
}

// Splits returns the splits of the chunks to read, then those of the
// chunks read and not acknowledged, for a checkpoint.
func (r *ReaderChunks[C]) Splits() []connector.Split {
	var out []connector.Split
	for _, c := range r.queue {
		out = append(out, r.codec.Split(c))
	}
	for _, id := range slices.Sorted(maps.Keys(r.pending)) {
		out = append(out, r.codec.Split(r.pending[id]))
	}
	return out
}
