package queries

import (
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

func TestQ3(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		var want []Q3Result
		for _, a := range d.auctions {
			for _, ps := range d.persons {
				if a.Seller == ps.ID && a.Category == 10 && (ps.State == "OR" || ps.State == "ID" || ps.State == "CA") {
					want = append(want, Q3Result{ps.Name, ps.City, ps.State, a.ID})
				}
			}
		}
		nonEmpty(t, want, 10)
		got := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q3Result] { return Q3(env, cfg) })
		sameMultiset(t, got, want)
	})
}
