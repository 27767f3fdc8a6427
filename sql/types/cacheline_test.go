package types

import "testing"

// TestGuarded checks that guarded slices hold n zero values and cannot
// grow into the memory guarding them.
func TestGuarded(t *testing.T) {
	for _, n := range []int{0, 1, 5, 70} {
		u, s, e := guarded[uint64](n), guarded[string](n), guarded[struct{}](n)
		if len(u) != n || cap(u) != n || len(s) != n || cap(s) != n || len(e) != n || cap(e) != n {
			t.Fatalf("n=%d: lengths %d %d %d, capacities %d %d %d", n, len(u), len(s), len(e), cap(u), cap(s), cap(e))
		}
		for i := range u {
			if u[i] != 0 || s[i] != "" {
				t.Fatalf("n=%d: element %d is %d, %q", n, i, u[i], s[i])
			}
		}
	}
}
