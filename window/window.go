// Package window defines time windows and the assigners that place records
// into them: tumbling, sliding (hop), session and cumulate windows, in event
// time or processing time.
//
// Tumbling, sliding and cumulate windows are evaluated through panes: a pane
// is the slice of time that all windows either fully contain or do not touch
// (the greatest common divisor of size and slide for sliding windows, the
// step for cumulate windows). A record is stored once, in its pane, however
// many windows overlap it; a window's result is assembled from its panes when
// it fires.
package window

import (
	"fmt"
	"time"
)

// Window is the half-open time interval [Start, End), in milliseconds since
// the epoch.
type Window struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// MaxTimestamp returns the last millisecond inside the window. An event-time
// window fires when the watermark reaches it.
func (w Window) MaxTimestamp() int64 { return w.End - 1 }

// String renders the window as [start, end) in UTC.
func (w Window) String() string {
	f := "2006-01-02T15:04:05.000Z"
	return fmt.Sprintf("[%s, %s)", time.UnixMilli(w.Start).UTC().Format(f), time.UnixMilli(w.End).UTC().Format(f))
}

// Kind is the kind of an assigner.
type Kind uint8

const (
	// TumblingKind windows are fixed-size and do not overlap.
	TumblingKind Kind = iota + 1
	// SlidingKind windows are fixed-size and start every slide.
	SlidingKind
	// SessionKind windows are groups of records separated by gaps.
	SessionKind
	// CumulateKind windows grow by a step from a fixed start up to a
	// maximum size.
	CumulateKind
)

// Assigner places records into windows. Build one with Tumbling, Sliding,
// Session or Cumulate. Its zero value is invalid.
type Assigner struct {
	kind     Kind
	size     int64 // tumbling, sliding: window size; cumulate: max size
	slide    int64 // sliding: slide; cumulate: step; tumbling: size
	offset   int64
	gap      int64 // session
	pane     int64
	procTime bool
}

// Tumbling returns an assigner of non-overlapping windows of the given size,
// aligned to the epoch.
func Tumbling(size time.Duration) Assigner {
	s := size.Milliseconds()
	return Assigner{kind: TumblingKind, size: s, slide: s, pane: s}
}

// Sliding returns an assigner of windows of the given size starting every
// slide (Flink's sliding window, SQL's HOP). With a size below the slide,
// records between two windows belong to none: the window operator counts
// them (WindowGapRecords in its metrics) and sends them to its late-data
// side output if it has one (WindowedStream.SideOutputLateData).
func Sliding(size, slide time.Duration) Assigner {
	s, sl := size.Milliseconds(), slide.Milliseconds()
	return Assigner{kind: SlidingKind, size: s, slide: sl, pane: gcd(s, sl)}
}

// Session returns an assigner of session windows: a key's records closer
// than gap to each other fall into one window, which ends gap after its last
// record.
func Session(gap time.Duration) Assigner {
	return Assigner{kind: SessionKind, gap: gap.Milliseconds()}
}

// Cumulate returns an assigner of cumulating windows (SQL's CUMULATE): every
// maxSize a new period starts, and within it windows [start, start+step),
// [start, start+2·step), … up to [start, start+maxSize) fire in turn.
func Cumulate(step, maxSize time.Duration) Assigner {
	st, m := step.Milliseconds(), maxSize.Milliseconds()
	return Assigner{kind: CumulateKind, size: m, slide: st, pane: st}
}

// WithOffset shifts window starts by offset from the epoch, e.g. to align
// daily windows to a time zone.
func (a Assigner) WithOffset(offset time.Duration) Assigner {
	a.offset = offset.Milliseconds()
	return a
}

// InProcessingTime makes the windows follow the processing-time clock
// instead of event time.
func (a Assigner) InProcessingTime() Assigner {
	a.procTime = true
	return a
}

// Kind returns the assigner's kind.
func (a Assigner) Kind() Kind { return a.kind }

// IsProcessingTime reports whether the windows follow processing time.
func (a Assigner) IsProcessingTime() bool { return a.procTime }

// Gap returns a session assigner's gap in milliseconds.
func (a Assigner) Gap() int64 { return a.gap }

// Size returns the (maximum) window size in milliseconds.
func (a Assigner) Size() int64 { return a.size }

// Slide returns the slide (or step) in milliseconds.
func (a Assigner) Slide() int64 { return a.slide }

// PaneSize returns the pane size in milliseconds; 0 for sessions.
func (a Assigner) PaneSize() int64 { return a.pane }

// Validate reports a misconfigured assigner.
func (a Assigner) Validate() error {
	switch a.kind {
	case TumblingKind:
		if a.size <= 0 {
			return fmt.Errorf("window: tumbling window size must be at least 1ms, got %dms", a.size)
		}
	case SlidingKind:
		if a.size <= 0 || a.slide <= 0 {
			return fmt.Errorf("window: sliding window size and slide must be at least 1ms, got size %dms, slide %dms", a.size, a.slide)
		}
	case SessionKind:
		if a.gap <= 0 {
			return fmt.Errorf("window: session gap must be at least 1ms, got %dms", a.gap)
		}
	case CumulateKind:
		if a.slide <= 0 || a.size <= 0 || a.size%a.slide != 0 {
			return fmt.Errorf("window: cumulate max size (%dms) must be a positive multiple of the step (%dms)", a.size, a.slide)
		}
	default:
		return fmt.Errorf("window: invalid assigner; build one with window.Tumbling, Sliding, Session or Cumulate")
	}
	return nil
}

// String describes the assigner as SQL would.
func (a Assigner) String() string {
	d := func(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
	switch a.kind {
	case TumblingKind:
		return fmt.Sprintf("TUMBLE(%v)", d(a.size))
	case SlidingKind:
		return fmt.Sprintf("HOP(slide %v, size %v)", d(a.slide), d(a.size))
	case SessionKind:
		return fmt.Sprintf("SESSION(gap %v)", d(a.gap))
	case CumulateKind:
		return fmt.Sprintf("CUMULATE(step %v, max %v)", d(a.slide), d(a.size))
	}
	return "invalid window"
}

// floorTo returns the start of the interval of length size, shifted by
// offset, that contains ts.
func floorTo(ts, offset, size int64) int64 {
	r := (ts - offset) % size
	if r < 0 {
		r += size
	}
	return ts - r
}

// Pane returns the pane that contains ts. Not for session windows.
func (a Assigner) Pane(ts int64) Window {
	s := floorTo(ts, a.offset, a.pane)
	return Window{Start: s, End: s + a.pane}
}

// FirstEnd returns the end of the earliest window that contains pane p.
func (a Assigner) FirstEnd(p Window) int64 {
	switch a.kind {
	case SlidingKind:
		// Window starts are aligned to the slide; the earliest window
		// containing p starts at the first aligned instant after
		// p.End-1-size.
		return floorTo(p.End-1-a.size, a.offset, a.slide) + a.slide + a.size
	default: // tumbling, cumulate
		return p.End
	}
}

// LastEnd returns the end of the latest window that contains pane p.
func (a Assigner) LastEnd(p Window) int64 {
	switch a.kind {
	case SlidingKind:
		return floorTo(p.Start, a.offset, a.slide) + a.size
	case CumulateKind:
		return floorTo(p.Start, a.offset, a.size) + a.size
	default:
		return p.End
	}
}

// Next returns the end of the window after the one ending at end.
func (a Assigner) Next(end int64) int64 { return end + a.slide }

// Start returns the start of the window that ends at end.
func (a Assigner) Start(end int64) int64 {
	switch a.kind {
	case CumulateKind:
		return floorTo(end-1, a.offset, a.size)
	default:
		return end - a.size
	}
}

// Windows returns every window that contains ts, earliest end first. For
// session windows it returns the proto-window [ts, ts+gap).
func (a Assigner) Windows(ts int64) []Window {
	if a.kind == SessionKind {
		return []Window{{Start: ts, End: ts + a.gap}}
	}
	p := a.Pane(ts)
	var ws []Window
	for e := a.FirstEnd(p); e <= a.LastEnd(p); e = a.Next(e) {
		ws = append(ws, Window{Start: a.Start(e), End: e})
	}
	return ws
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	if a <= 0 {
		return 1
	}
	return a
}
