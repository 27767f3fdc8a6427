package types

import "unsafe"

// cacheLinePad keeps what the subtasks of a job write at every row — a
// RowWriter, its slots, an Arena — a cache line away from the objects
// next to it in memory, which may be another subtask's: two cores writing
// one line take it from each other at every row, and a source and a
// projection at parallelism 2 ran up to a third slower.
type cacheLinePad [64]byte

// guarded returns n zero Ts with a cache line of memory nothing uses on
// either side (see cacheLinePad).
func guarded[T any](n int) []T {
	var zero T
	size := max(int(unsafe.Sizeof(zero)), 1)
	pad := (len(cacheLinePad{}) + size - 1) / size
	return make([]T, pad+n+pad)[pad : pad+n : pad+n]
}
