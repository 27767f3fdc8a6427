package state

import "fmt"

// This file is the one definition of how keys are divided among the
// subtasks of a keyed operator, which exchanges (routing records), keyed
// operators (checking and scoping keys), state backends and checkpoints
// (dividing state on restore) all follow: a key's hash modulo the max
// parallelism is its key group, and subtask i of p owns the contiguous range
// RangeOf(i, p, maxParallelism).

// DefaultMaxParallelism is the number of key groups a keyed operator has
// unless the job says otherwise. It bounds the parallelism the operator can
// later be rescaled to.
const DefaultMaxParallelism = 128

// MaxKeyGroups is the largest max parallelism an operator may have, as in
// Flink: key groups are encoded in two bytes at the front of every key of a
// bytes backend.
const MaxKeyGroups = 1 << 15

// KeyGroupRange is the half-open range [Start, End) of key groups that one
// parallel subtask of a keyed operator owns.
type KeyGroupRange struct {
	Start, End int
}

// Len returns the number of key groups in the range.
func (r KeyGroupRange) Len() int { return r.End - r.Start }

// Contains reports whether kg lies in the range.
func (r KeyGroupRange) Contains(kg int) bool { return kg >= r.Start && kg < r.End }

// String renders the range as "[start,end)".
func (r KeyGroupRange) String() string { return fmt.Sprintf("[%d,%d)", r.Start, r.End) }

// KeyGroupOf maps a key hash to its key group.
func KeyGroupOf(hash uint64, maxParallelism int) int {
	return int(hash % uint64(maxParallelism))
}

// SubtaskOf returns the index of the subtask that owns key group kg when an
// operator with maxParallelism key groups runs with the given parallelism.
func SubtaskOf(kg, parallelism, maxParallelism int) int {
	return kg * parallelism / maxParallelism
}

// RangeOf returns the key groups owned by subtask i of parallelism p. The
// ranges of all subtasks partition [0, maxParallelism) and agree with
// SubtaskOf.
func RangeOf(i, parallelism, maxParallelism int) KeyGroupRange {
	start := (i*maxParallelism + parallelism - 1) / parallelism
	end := ((i+1)*maxParallelism + parallelism - 1) / parallelism
	return KeyGroupRange{Start: start, End: end}
}
