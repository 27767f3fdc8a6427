package runtime

import (
	"testing"
	"time"
)

// TestTaskTimesCountAnOngoingWait checks that a wait counts as idle or
// backpressure while it lasts, so that busy time never goes back: before,
// during and after a wait, and across the wait's end.
func TestTaskTimesCountAnOngoingWait(t *testing.T) {
	for _, backPressured := range []bool{false, true} {
		m := &TaskMetrics{Started: time.Now().Add(-time.Second)}
		busy0, idle0, bp0 := m.Times(time.Now())
		if idle0 != 0 || bp0 != 0 || busy0 < time.Second {
			t.Fatalf("before any wait: busy %v, idle %v, backpressured %v; want all of a second busy", busy0, idle0, bp0)
		}
		start := m.beginWait(backPressured)
		time.Sleep(5 * time.Millisecond)
		busy1, idle1, bp1 := m.Times(time.Now())
		waited := idle1
		if backPressured {
			waited = bp1
		}
		if waited < 5*time.Millisecond || idle1+bp1 != waited {
			t.Errorf("backpressured %v: during a wait of 5ms: idle %v, backpressured %v", backPressured, idle1, bp1)
		}
		if busy1 < busy0 {
			t.Errorf("backpressured %v: busy went back from %v to %v during a wait", backPressured, busy0, busy1)
		}
		m.endWait(start)
		busy2, idle2, bp2 := m.Times(time.Now())
		if busy2 < busy1 || idle2 < idle1 || bp2 < bp1 {
			t.Errorf("backpressured %v: times went back at the wait's end: busy %v→%v, idle %v→%v, backpressured %v→%v",
				backPressured, busy1, busy2, idle1, idle2, bp1, bp2)
		}
		if got := time.Duration(m.Idle.Load() + m.BackPressured.Load()); got != idle2+bp2 {
			t.Errorf("backpressured %v: finished waits hold %v, Times reports %v", backPressured, got, idle2+bp2)
		}
		// An ended subtask's times stop at its end.
		m.Ended.Store(time.Now().UnixNano())
		busy3, _, _ := m.Times(time.Now())
		if busy4, _, _ := m.Times(time.Now().Add(time.Hour)); busy4 != busy3 {
			t.Errorf("backpressured %v: an ended subtask's busy time grew from %v to %v", backPressured, busy3, busy4)
		}
	}
}
