package queries

import (
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/nexmark"
)

// bruteQ9 evaluates q9 over d: for every auction, the first of its bids in
// its time range by price descending and dateTime ascending (then bidder
// and extra).
func bruteQ9(d *data) []Q9Result {
	byAuction := map[int64][]nexmark.Bid{}
	for _, b := range d.bids {
		byAuction[b.Auction] = append(byAuction[b.Auction], b)
	}
	var out []Q9Result
	for _, a := range d.auctions {
		var best *nexmark.Bid
		for i, b := range byAuction[a.ID] {
			if b.DateTime < a.DateTime || b.DateTime > a.Expires {
				continue
			}
			if best == nil || b.Price > best.Price || (b.Price == best.Price && (b.DateTime < best.DateTime ||
				(b.DateTime == best.DateTime && (b.Bidder < best.Bidder || (b.Bidder == best.Bidder && b.Extra < best.Extra))))) {
				best = &byAuction[a.ID][i]
			}
		}
		if best != nil {
			out = append(out, Q9Result{a.ID, a.ItemName, a.Description, a.InitialBid, a.Reserve, Time(a.DateTime),
				Time(a.Expires), a.Seller, a.Category, a.Extra, best.Auction, best.Bidder, best.Price, Time(best.DateTime), best.Extra})
		}
	}
	return out
}

func TestQ9(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		want := bruteQ9(d)
		nonEmpty(t, want, 50)
		got := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q9Result] { return Q9(env, cfg) })
		sameMultiset(t, got, want)
	})
}

// TestQ9OnJoin checks that the final table of q9OnJoin's changelog is q9's
// result.
func TestQ9OnJoin(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		want := map[int64]Q9Result{}
		for _, r := range bruteQ9(d) {
			want[r.ID] = r
		}
		log := run(t, p, func(env *eddy.Environment) *eddy.Stream[changelog.Change[Q9Result]] { return q9OnJoin(env, cfg) })
		got := map[int64]Q9Result{}
		for _, c := range log {
			if c.Kind.IsAddition() {
				got[c.Row.ID] = c.Row
			} else if got[c.Row.ID] == c.Row {
				delete(got, c.Row.ID)
			} else {
				t.Fatalf("%v retracts a row not in the table", c)
			}
		}
		sameTable(t, got, want)
	})
}
