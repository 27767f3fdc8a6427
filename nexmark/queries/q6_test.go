package queries

import (
	"cmp"
	"slices"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

func TestQ6(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		// Every closed auction with its winning price, per seller in order
		// of closing.
		type closed struct{ expires, id, price int64 }
		bySeller := map[int64][]closed{}
		for _, w := range bruteQ9(d) {
			bySeller[w.Seller] = append(bySeller[w.Seller], closed{int64(w.Expires), w.ID, w.Price})
		}
		want := map[int64][]int64{}
		n := 0
		for s, cs := range bySeller {
			slices.SortFunc(cs, func(a, b closed) int { return cmp.Or(cmp.Compare(a.expires, b.expires), cmp.Compare(a.id, b.id)) })
			for i := range cs {
				var sum int64
				lo := max(0, i+1-10)
				for _, c := range cs[lo : i+1] {
					sum += c.price
				}
				want[s] = append(want[s], sum/int64(i+1-lo))
				n++
			}
		}
		if n < 50 {
			t.Fatalf("only %d closed auctions", n)
		}
		got := map[int64][]int64{}
		for _, r := range run(t, p, func(env *eddy.Environment) *eddy.Stream[Q6Result] { return Q6(env, cfg) }) {
			got[r.Seller] = append(got[r.Seller], r.AvgPrice)
		}
		for s, w := range want {
			if !slices.Equal(got[s], w) {
				t.Errorf("seller %d: got averages %v, want %v", s, got[s], w)
			}
		}
		for s, g := range got {
			if _, ok := want[s]; !ok {
				t.Errorf("unexpected seller %d: %v", s, g)
			}
		}
	})
}
