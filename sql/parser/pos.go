package parser

import "fmt"

// Pos is a position in the source text: Line and Col are 1-based, Col counts
// characters (runes), not bytes. The zero Pos means "no position".
type Pos struct {
	Line int
	Col  int
}

// Position returns p. Every node embeds a Pos, so every node has this method.
func (p Pos) Position() Pos { return p }

// IsValid reports whether p is a real position (the zero Pos is not).
func (p Pos) IsValid() bool { return p.Line > 0 }

// String prints p as "line:col".
func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }
