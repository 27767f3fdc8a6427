// Package cdc holds what eddy's change data capture sources share.
package cdc

import "github.com/eddystream/eddy/connector"

// StreamGate holds back a CDC source's stream split (binary log, WAL) after
// its snapshot until the snapshot's rows are known to be downstream.
//
// Readers emit a chunk's rows before they report the chunk, but those rows
// can still sit in a reader's output while another reader, given the
// stream split, emits later changes of the same keys: an operator that
// receives both (an upsert sink, a keyed aggregate) could apply a change
// before the row it changes. With several readers and checkpoints, the
// gate stays shut until a checkpoint the enumerator took after the last
// report has completed: every reader's chunk rows precede that
// checkpoint's barrier, and operators align barriers before they take what
// follows them. The zero value is open.
type StreamGate struct {
	// state is pending until the next checkpoint, then that checkpoint's
	// id until it completes; 0 once open.
	state int64
}

const pending = -1

// Shut shuts the gate when the last chunk is reported, if it must: when
// several readers read the snapshot and the job takes checkpoints. It
// reports whether it did.
func (g *StreamGate) Shut(ctx connector.EnumeratorContext) bool {
	if ctx.Parallelism() > 1 && ctx.Checkpointing() {
		g.state = pending
		return true
	}
	return false
}

// Snapshot notes that the enumerator took its snapshot of checkpoint id.
func (g *StreamGate) Snapshot(id int64) {
	if g.state == pending {
		g.state = id
	}
}

// Complete notes that checkpoint id completed, and reports whether that
// opened the gate.
func (g *StreamGate) Complete(id int64) bool {
	if g.state > 0 && id >= g.state {
		g.state = 0
		return true
	}
	return false
}

// Open reports whether the stream split may be handed out.
func (g *StreamGate) Open() bool { return g.state == 0 }
