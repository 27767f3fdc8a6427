package queries

import (
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

func TestQ5(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		// HOP(2 s slide, 10 s size): a bid at ts is in the windows starting
		// at the multiples of 2 s in (ts-10 s, ts].
		type key struct{ start, auction int64 }
		counts := map[key]int64{}
		for _, b := range d.bids {
			first := floorDiv(b.DateTime-10_000, 2000)*2000 + 2000
			for s := first; s <= b.DateTime; s += 2000 {
				counts[key{s, b.Auction}]++
			}
		}
		maxn := map[int64]int64{}
		for k, n := range counts {
			maxn[k.start] = max(maxn[k.start], n)
		}
		var want []Q5Result
		for k, n := range counts {
			if n >= maxn[k.start] {
				want = append(want, Q5Result{k.auction, n})
			}
		}
		nonEmpty(t, want, 10)
		got := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q5Result] { return Q5(env, cfg) })
		sameMultiset(t, got, want)
	})
}
