package runtime

import (
	"time"
)

// msgKind tells what a message on an exchange channel carries.
type msgKind uint8

const (
	msgData      msgKind = iota // payload is a *Batch[T]
	msgWatermark                // val is the sender's watermark
	msgBarrier                  // val is a checkpoint id
	msgIdle                     // the sender has become idle
	msgActive                   // the sender is active again
	msgEnd                      // the sender has ended
)

// message is what travels over an exchange channel.
type message struct {
	kind    msgKind
	val     int64
	payload any
}

// inChannel is one channel into a gate: the messages of one upstream subtask
// on one input edge, in order.
type inChannel struct {
	ch      chan message
	input   int             // the input index of the receiving operator
	recycle func(any)       // returns a data payload to the sender's pool
	from    string          // the sending operator and subtask, for errors
	ready   chan int32      // the gate's ready queue
	idx     int32           // this channel's index in the gate
	done    <-chan struct{} // the job's cancellation
}

// send enqueues m, blocking while the channel is full (backpressure). It
// returns errCanceled if the job is cancelled while it waits.
func (c *inChannel) send(m message, task *TaskMetrics) error {
	select {
	case c.ch <- m:
	default:
		// The channel is full: the time waiting for room is backpressure.
		start := task.beginWait(true)
		select {
		case c.ch <- m:
		case <-c.done:
			task.endWait(start)
			return errCanceled
		}
		task.endWait(start)
	}
	// The ready queue has room for every message the channels can hold, so
	// this send does not block.
	c.ready <- c.idx
	return nil
}

// gate merges the channels into one subtask. Senders put a message on its
// channel and then the channel's index on the shared ready queue; the
// receiver takes an index, then that channel's next message. A channel that
// is blocked for barrier alignment keeps its messages (and so backpressures
// its sender alone) until the barrier is aligned.
//
// A gate is written by its senders only through send; everything else runs
// on the receiving subtask's goroutine.
type gate struct {
	chans   []*inChannel
	ready   chan int32
	pending []int32 // indices to take before the ready queue (unblocked channels)

	wm       []int64
	idle     []bool
	ended    []bool
	blocked  []bool
	deferred []int
	nEnded   int
	nBlocked int

	combined int64 // the last watermark passed on
	allIdle  bool  // whether the last status passed on was idle
	barrier  int64 // the checkpoint whose barriers are being aligned
	// alignStart is when the first barrier of the alignment in progress
	// arrived.
	alignStart time.Time
}

func newGate() *gate {
	return &gate{combined: MinWatermark}
}

// addChannel adds a channel from an upstream subtask. It must be called
// before the job starts, and finish after all channels are added.
func (g *gate) addChannel(input, capacity int, from string, recycle func(any), done <-chan struct{}) *inChannel {
	c := &inChannel{
		ch:      make(chan message, capacity),
		input:   input,
		recycle: recycle,
		from:    from,
		idx:     int32(len(g.chans)),
		done:    done,
	}
	g.chans = append(g.chans, c)
	return c
}

// finish allocates the ready queue once all channels are known.
func (g *gate) finish() {
	total := 0
	for _, c := range g.chans {
		total += cap(c.ch) + 1
	}
	g.ready = make(chan int32, total)
	for _, c := range g.chans {
		c.ready = g.ready
	}
	n := len(g.chans)
	g.wm = make([]int64, n)
	for i := range g.wm {
		g.wm[i] = MinWatermark
	}
	g.idle = make([]bool, n)
	g.ended = make([]bool, n)
	g.blocked = make([]bool, n)
	g.deferred = make([]int, n)
}

// poll returns the next message without blocking, or ok=false if none is
// waiting.
func (g *gate) poll() (c *inChannel, m message, ok bool) {
	for {
		var idx int32
		if n := len(g.pending); n > 0 {
			idx = g.pending[0]
			g.pending = g.pending[1:]
		} else {
			select {
			case idx = <-g.ready:
			default:
				return nil, message{}, false
			}
		}
		if c, m, ok = g.take(idx); ok {
			return c, m, true
		}
	}
}

// take reads the message of channel idx, unless the channel is blocked, in
// which case the message stays in the channel and is counted as deferred.
func (g *gate) take(idx int32) (*inChannel, message, bool) {
	if g.blocked[idx] {
		g.deferred[idx]++
		return nil, message{}, false
	}
	c := g.chans[idx]
	return c, <-c.ch, true
}

// watermark returns the combined watermark of the channels and whether it is
// ahead of the last one passed on: the minimum over the channels that are
// not idle, where an ended channel counts with the maximum watermark (as a
// finished source's final watermark). When every channel that has not ended
// is idle and none has ended, the highest watermark among them counts, so
// that downstream time still advances.
func (g *gate) watermark() (int64, bool) {
	wm, any := MaxWatermark, false
	for i := range g.chans {
		switch {
		case g.ended[i]:
			any = true
		case !g.idle[i]:
			any = true
			wm = min(wm, g.wm[i])
		}
	}
	if !any {
		wm = MinWatermark
		for i := range g.chans {
			wm = max(wm, g.wm[i])
		}
	}
	if wm > g.combined {
		g.combined = wm
		return wm, true
	}
	return wm, false
}

// status reports whether every channel that has not ended is idle, and
// whether that differs from the status last passed on.
func (g *gate) status() (idle, changed bool) {
	idle = g.nEnded < len(g.chans)
	for i := range g.chans {
		if !g.ended[i] && !g.idle[i] {
			idle = false
			break
		}
	}
	changed = idle != g.allIdle
	g.allIdle = idle
	return idle, changed
}

// blockForBarrier blocks channel i after it delivered the barrier of
// checkpoint id. It reports whether the barrier is now aligned: every channel
// that has not ended has delivered it.
func (g *gate) blockForBarrier(i int, id int64) (aligned bool) {
	if g.nBlocked == 0 {
		g.barrier = id
		g.alignStart = time.Now()
	}
	if !g.blocked[i] {
		g.blocked[i] = true
		g.nBlocked++
	}
	return g.nBlocked+g.nEnded >= len(g.chans)
}

// alignedLater reports whether an end of input on some channel has completed
// an alignment in progress.
func (g *gate) alignedLater() bool {
	return g.nBlocked > 0 && g.nBlocked+g.nEnded >= len(g.chans)
}

// unblockAll releases every blocked channel after an alignment; deferred
// messages are taken before anything else.
func (g *gate) unblockAll() {
	for i := range g.chans {
		if g.blocked[i] {
			g.blocked[i] = false
			for ; g.deferred[i] > 0; g.deferred[i]-- {
				g.pending = append(g.pending, int32(i))
			}
		}
	}
	g.nBlocked = 0
}
