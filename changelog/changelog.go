// Package changelog is the vocabulary of changelog streams: rows that carry
// the kind of change they make to a table (Flink's RowKind), and the modes
// that say which kinds a stream may carry.
//
// A stream of Change values describes a table that changes over time. An
// insert-only stream only adds rows (+I). A retracting stream also takes
// rows back: an update is a -U of the old row followed by a +U of the new
// one, and a deletion is a -D carrying the whole row. An upsert stream is
// keyed by a unique key: +I and +U replace the row of their key and -D
// removes it, with no -U.
package changelog

import "fmt"

// Kind is the kind of change a row makes to its table. Its values and short
// strings are those of Flink's RowKind.
type Kind int8

const (
	// Insert adds a row (+I).
	Insert Kind = iota
	// UpdateBefore retracts the row an update replaces (-U). It is followed
	// by the UpdateAfter of the same update.
	UpdateBefore
	// UpdateAfter adds the row an update writes (+U).
	UpdateAfter
	// Delete removes a row (-D).
	Delete
)

var kindStrings = [...]string{"+I", "-U", "+U", "-D"}

// String returns the short form of the kind: "+I", "-U", "+U" or "-D".
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindStrings) {
		return kindStrings[k]
	}
	return fmt.Sprintf("Kind(%d)", int8(k))
}

// IsAddition reports whether the kind adds a row to the table (+I, +U).
func (k Kind) IsAddition() bool { return k == Insert || k == UpdateAfter }

// IsRetraction reports whether the kind takes a row out of the table (-U,
// -D).
func (k Kind) IsRetraction() bool { return k == UpdateBefore || k == Delete }

// Valid reports whether k is one of the four kinds.
func (k Kind) Valid() bool { return k >= Insert && k <= Delete }

// ParseKind parses the short form of a kind ("+I", "-U", "+U", "-D"); it
// also takes Flink's long names (INSERT, UPDATE_BEFORE, UPDATE_AFTER,
// DELETE).
func ParseKind(s string) (Kind, error) {
	switch s {
	case "+I", "INSERT":
		return Insert, nil
	case "-U", "UPDATE_BEFORE":
		return UpdateBefore, nil
	case "+U", "UPDATE_AFTER":
		return UpdateAfter, nil
	case "-D", "DELETE":
		return Delete, nil
	}
	return 0, fmt.Errorf("changelog: unknown row kind %q; use +I, -U, +U or -D", s)
}

// MarshalText renders the kind in its short form, so that it appears as
// "+I" and the like in JSON.
func (k Kind) MarshalText() ([]byte, error) {
	if !k.Valid() {
		return nil, fmt.Errorf("changelog: invalid row kind %d", int8(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText parses the short or long form of a kind.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// Change is a row of type T with the kind of change it makes: a record of a
// changelog stream.
type Change[T any] struct {
	// Kind says what the change does with Row.
	Kind Kind `json:"op"`
	// Row is the row added or taken back. For the deletions of an upsert
	// stream only its key fields need to be set.
	Row T `json:"row"`
}

// Of returns the change of kind k to row.
func Of[T any](k Kind, row T) Change[T] { return Change[T]{Kind: k, Row: row} }

// InsertOf returns the insertion of row.
func InsertOf[T any](row T) Change[T] { return Change[T]{Kind: Insert, Row: row} }

// String renders the change as Flink's print sink does: "+I[row]".
func (c Change[T]) String() string { return fmt.Sprintf("%s[%v]", c.Kind, c.Row) }

// RowKind returns c.Kind. It lets code that holds a value of an unknown
// record type ask whether it is a change (see Kinded).
func (c Change[T]) RowKind() Kind { return c.Kind }

// Kinded is implemented by records that carry a change kind: every Change.
type Kinded interface {
	RowKind() Kind
}
