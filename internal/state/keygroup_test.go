package state

import "testing"

func TestRangeOfAgreesWithSubtaskOf(t *testing.T) {
	for _, maxP := range []int{1, 7, 128, 1000} {
		for p := 1; p <= maxP && p <= 40; p++ {
			next := 0
			for i := 0; i < p; i++ {
				r := RangeOf(i, p, maxP)
				if r.Start != next {
					t.Fatalf("maxP=%d p=%d subtask %d: range %v does not start at %d", maxP, p, i, r, next)
				}
				for kg := r.Start; kg < r.End; kg++ {
					if got := SubtaskOf(kg, p, maxP); got != i {
						t.Fatalf("maxP=%d p=%d: key group %d in range of subtask %d but SubtaskOf says %d", maxP, p, kg, i, got)
					}
				}
				next = r.End
			}
			if next != maxP {
				t.Fatalf("maxP=%d p=%d: ranges end at %d", maxP, p, next)
			}
		}
	}
}
