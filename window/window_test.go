package window

import (
	"testing"
	"time"
)

// bruteWindows lists the windows containing ts by definition.
func bruteWindows(a Assigner, ts int64) []Window {
	var ws []Window
	switch a.kind {
	case TumblingKind, SlidingKind:
		for s := floorTo(ts-4*a.size, a.offset, a.slide); s <= ts; s += a.slide {
			if s <= ts && ts < s+a.size {
				ws = append(ws, Window{s, s + a.size})
			}
		}
	case CumulateKind:
		start := floorTo(ts, a.offset, a.size)
		for e := start + a.slide; e <= start+a.size; e += a.slide {
			if ts < e {
				ws = append(ws, Window{start, e})
			}
		}
	}
	return ws
}

func TestWindowsMatchDefinition(t *testing.T) {
	ms := time.Millisecond
	for _, a := range []Assigner{
		Tumbling(10 * ms), Tumbling(10 * ms).WithOffset(3 * ms),
		Sliding(10*ms, 2*ms), Sliding(10*ms, 3*ms), Sliding(10*ms, 4*ms).WithOffset(1 * ms), Sliding(6*ms, 10*ms),
		Cumulate(2*ms, 10*ms), Cumulate(3*ms, 9*ms).WithOffset(1 * ms),
	} {
		if err := a.Validate(); err != nil {
			t.Fatal(err)
		}
		for ts := int64(-50); ts < 50; ts++ {
			got, want := a.Windows(ts), bruteWindows(a, ts)
			if len(got) != len(want) {
				t.Fatalf("%v ts=%d: got %v, want %v", a, ts, got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%v ts=%d: got %v, want %v", a, ts, got, want)
				}
			}
			// Every window containing ts is made of whole panes.
			p := a.Pane(ts)
			for _, w := range got {
				if p.Start < w.Start || p.End > w.End {
					t.Fatalf("%v: pane %v straddles window %v", a, p, w)
				}
			}
		}
	}
}

func TestValidate(t *testing.T) {
	for _, a := range []Assigner{{}, Tumbling(0), Sliding(time.Second, 0), Session(0), Cumulate(3*time.Second, 10*time.Second)} {
		if a.Validate() == nil {
			t.Errorf("%v: invalid assigner accepted", a)
		}
	}
}
