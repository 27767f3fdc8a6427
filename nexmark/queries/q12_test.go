package queries

import (
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

// TestQ12 checks q12's processing-time windows by their properties: every
// bid is counted once, in a 10 s window aligned to 10 s, and no bidder has
// two rows for one window.
func TestQ12(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		want := map[int64]int64{}
		for _, b := range d.bids {
			want[b.Bidder]++
		}
		got := map[int64]int64{}
		type window struct {
			bidder int64
			start  Time
		}
		seen := map[window]bool{}
		for _, r := range run(t, p, func(env *eddy.Environment) *eddy.Stream[Q12Result] { return Q12(env, cfg) }) {
			got[r.Bidder] += r.BidCount
			if r.Endtime-r.Starttime != 10_000 || r.Starttime%10_000 != 0 || r.BidCount <= 0 {
				t.Errorf("bad window row %+v", r)
			}
			if w := (window{r.Bidder, r.Starttime}); seen[w] {
				t.Errorf("two rows for bidder %d in the window at %v", r.Bidder, r.Starttime)
			} else {
				seen[w] = true
			}
		}
		sameTable(t, got, want)
	})
}
