package queries

import (
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

// bruteQ20 evaluates q20 over d: every bid with each of its auctions in
// category 10.
func bruteQ20(d *data) []Q20Result {
	auctions := map[int64][]nexmark.Auction{}
	for _, a := range d.auctions {
		if a.Category == 10 {
			auctions[a.ID] = append(auctions[a.ID], a)
		}
	}
	var want []Q20Result
	for _, b := range d.bids {
		for _, a := range auctions[b.Auction] {
			want = append(want, q20Row(&b, &a))
		}
	}
	return want
}

func TestQ20(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		want := bruteQ20(d)
		nonEmpty(t, want, 100)
		got := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q20Result] { return Q20(env, cfg) })
		sameMultiset(t, got, want)
	})
}

// TestQ20OnJoin checks q20 on the regular join, with the auctions declared
// unique on their id and without.
func TestQ20OnJoin(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		want := bruteQ20(d)
		got := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q20Result] { return q20OnJoin(env, cfg) })
		sameMultiset(t, got, want)
		got = run(t, p, func(env *eddy.Environment) *eddy.Stream[Q20Result] { return q20Plan(env, cfg) })
		sameMultiset(t, got, want)
	})
}
