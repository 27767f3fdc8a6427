package expr

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestIndexRare checks indexRare against strings.Index for every offset
// of random needles in random haystacks of a small alphabet, long enough
// to leave the rest to strings.Index after false hits.
func TestIndexRare(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const alphabet = "ab_c="
	gen := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for n := 0; n < 100000; n++ {
		sub := gen(1 + rng.IntN(4))
		s := gen(rng.IntN(80))
		for off := 0; off < len(sub); off++ {
			if got, want := indexRare(s, sub, off), strings.Index(s, sub); got != want {
				t.Fatalf("indexRare(%q, %q, %d) = %d, want %d", s, sub, off, got, want)
			}
		}
	}
	if off := rareOffset("channel_id="); off != 7 {
		t.Errorf("the rarest byte of channel_id= is at %d, want 7 (_)", off)
	}
}
