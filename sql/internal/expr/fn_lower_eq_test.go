package expr

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLowerEquals checks lowerEquals against strings.ToLower on random
// strings of ASCII, of letters whose lower case is ASCII or of another
// length, and of bytes that are not UTF-8.
func TestLowerEquals(t *testing.T) {
	pieces := []string{"a", "A", "k", "K", "\u212a", "\u0130", "i", "ß", "ẞ", "Ü", "ü", "\xff", "\xe2\x84", "-", "Z", "z"}
	rng := rand.New(rand.NewPCG(5, 6))
	gen := func() string {
		var b strings.Builder
		for n := rng.IntN(5); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	for i := 0; i < 200000; i++ {
		s := gen()
		k := gen()
		if i%2 == 0 {
			k = strings.ToLower(s) // mostly equal
		}
		if got, want := lowerEquals(s, k), strings.ToLower(s) == k; got != want {
			t.Fatalf("lowerEquals(%q, %q) = %v, want %v", s, k, got, want)
		}
	}
}
