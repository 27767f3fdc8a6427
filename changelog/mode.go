package changelog

import "strings"

// Mode is the set of kinds a changelog stream may carry, as Flink's
// ChangelogMode. Operators derive the mode of their output from the modes
// of their inputs, and sinks declare the modes they accept.
type Mode uint8

const (
	// InsertOnly streams only add rows: an append-only stream.
	InsertOnly = Mode(1 << Insert)
	// Upsert streams carry +I, +U and -D for a unique key, and no -U: each
	// change replaces or removes the row of its key.
	Upsert = Mode(1<<Insert | 1<<UpdateAfter | 1<<Delete)
	// Retract streams carry all four kinds: every update is a -U of the old
	// row followed by a +U of the new one, and every deletion carries the
	// whole row, so no key is needed to apply them.
	Retract = Mode(1<<Insert | 1<<UpdateBefore | 1<<UpdateAfter | 1<<Delete)
)

// ModeOf returns the mode that carries exactly the given kinds.
func ModeOf(kinds ...Kind) Mode {
	var m Mode
	for _, k := range kinds {
		m |= 1 << k
	}
	return m
}

// Contains reports whether the mode carries kind k.
func (m Mode) Contains(k Kind) bool { return k.Valid() && m&(1<<k) != 0 }

// IsInsertOnly reports whether the mode carries nothing but insertions.
func (m Mode) IsInsertOnly() bool { return m == InsertOnly }

// Includes reports whether every kind of o is a kind of m, so that a
// consumer accepting m accepts a stream of mode o.
func (m Mode) Includes(o Mode) bool { return o&^m == 0 }

// Union returns the mode that carries the kinds of m and of o: the mode of
// a union of two streams.
func (m Mode) Union(o Mode) Mode { return m | o }

// String renders the mode as Flink's EXPLAIN does: "[I]", "[I,UA,D]",
// "[I,UB,UA,D]".
func (m Mode) String() string {
	names := [...]string{"I", "UB", "UA", "D"}
	var parts []string
	for k := Insert; k <= Delete; k++ {
		if m.Contains(k) {
			parts = append(parts, names[k])
		}
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// Describe names the mode in words: "insert-only", "upsert", "retract", or
// the kinds it carries.
func (m Mode) Describe() string {
	switch m {
	case InsertOnly:
		return "insert-only"
	case Upsert:
		return "upsert"
	case Retract:
		return "retract"
	}
	return "changelog " + m.String()
}
