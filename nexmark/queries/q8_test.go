package queries

import (
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

func TestQ8(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		type pw struct {
			id    int64
			name  string
			start int64
		}
		persons := map[pw]bool{}
		for _, ps := range d.persons {
			persons[pw{ps.ID, ps.Name, floorDiv(ps.DateTime, 10_000) * 10_000}] = true
		}
		type sw struct{ seller, start int64 }
		sellers := map[sw]bool{}
		for _, a := range d.auctions {
			sellers[sw{a.Seller, floorDiv(a.DateTime, 10_000) * 10_000}] = true
		}
		var want []Q8Result
		for ps := range persons {
			if sellers[sw{ps.id, ps.start}] {
				want = append(want, Q8Result{ps.id, ps.name, Time(ps.start)})
			}
		}
		nonEmpty(t, want, 3)
		got := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q8Result] { return Q8(env, cfg) })
		sameMultiset(t, got, want)
	})
}
