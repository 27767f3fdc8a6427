package pipeline

import (
	"fmt"
	"strings"
)

// Behavior is 'schema.change.behavior': what a pipeline does when a source
// table's schema changes.
type Behavior uint8

const (
	// Lenient applies the changes that lose no data: added columns, types
	// widened; a dropped column stays in the sink and gets NULLs, a renamed
	// one is added under its new name, and tables are never truncated or
	// dropped. It is the default, as in Flink CDC.
	Lenient Behavior = iota
	// Exception stops the pipeline at the first schema change.
	Exception
	// Evolve applies every change to the sink; the pipeline stops if the
	// sink refuses one.
	Evolve
	// TryEvolve applies every change the sink accepts; rows then carry the
	// columns the sink table has.
	TryEvolve
	// Ignore never changes the sink table: rows carry the columns it was
	// created with (NULL for those the source dropped).
	Ignore
)

var behaviorNames = [...]string{"lenient", "exception", "evolve", "try_evolve", "ignore"}

// String names the behaviour as the YAML writes it.
func (b Behavior) String() string { return behaviorNames[b] }

// ParseBehavior reads 'schema.change.behavior', without regard to case.
func ParseBehavior(s string) (Behavior, error) {
	for i, n := range behaviorNames {
		if strings.EqualFold(s, n) {
			return Behavior(i), nil
		}
	}
	return 0, fmt.Errorf("'schema.change.behavior' is %q; use one of %s", s, strings.Join(behaviorNames[:], ", "))
}
