package runtime

import "fmt"

// Partitioning says how records of an edge are distributed over the
// subtasks of the receiving operator.
type Partitioning uint8

const (
	// Forward sends subtask i's records to subtask i of the receiver. It
	// requires equal parallelism; a forward edge between operators of the
	// same parallelism can be chained.
	Forward Partitioning = iota
	// Hash sends each record to the subtask owning its key group.
	Hash
	// Rebalance sends records round-robin to all receiving subtasks.
	Rebalance
	// Broadcast sends every record to every receiving subtask.
	Broadcast
)

// String names the partitioning as the job graph shows it.
func (p Partitioning) String() string {
	switch p {
	case Forward:
		return "FORWARD"
	case Hash:
		return "HASH"
	case Rebalance:
		return "REBALANCE"
	case Broadcast:
		return "BROADCAST"
	}
	return fmt.Sprintf("Partitioning(%d)", p)
}
