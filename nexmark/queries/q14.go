package queries

import (
	"strings"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

// Q14Result is a row of q14.
type Q14Result struct {
	Auction int64 `json:"auction"`
	Bidder  int64 `json:"bidder"`
	// Price is 0.908 * price, exact.
	Price Decimal3 `json:"price"`
	// BidTimeType is "dayTime", "nightTime" or "otherTime" by the hour of
	// dateTime (UTC).
	BidTimeType string `json:"bidTimeType"`
	DateTime    Time   `json:"dateTime"`
	Extra       string `json:"extra"`
	// CCounts is the number of 'c' characters in extra.
	CCounts int64 `json:"c_counts"`
}

// Q14 converts bid timestamps into types and finds bids with specific
// prices:
//
//	SELECT auction, bidder, 0.908 * price as price,
//	  CASE WHEN HOUR(dateTime) >= 8 AND HOUR(dateTime) <= 18 THEN 'dayTime'
//	       WHEN HOUR(dateTime) <= 6 OR HOUR(dateTime) >= 20 THEN 'nightTime'
//	       ELSE 'otherTime' END AS bidTimeType,
//	  dateTime, extra, count_char(extra, 'c') AS c_counts
//	FROM bid WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;
//
// The price comparisons are exact; HOUR is taken in UTC.
func Q14(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q14Result] {
	return eddy.FlatMap(bidSource(env, cfg), func(b nexmark.Bid, emit func(Q14Result)) {
		p := euros(b.Price)
		if p <= 1_000_000_000 || p >= 50_000_000_000 {
			return
		}
		emit(Q14Result{
			Auction: b.Auction, Bidder: b.Bidder, Price: p,
			BidTimeType: bidTimeType(hourOf(b.DateTime)),
			DateTime:    Time(b.DateTime), Extra: b.Extra,
			CCounts: int64(strings.Count(b.Extra, "c")),
		})
	}).Name("q14")
}

// bidTimeType is q14's CASE on the hour.
func bidTimeType(h int) string {
	switch {
	case h >= 8 && h <= 18:
		return "dayTime"
	case h <= 6 || h >= 20:
		return "nightTime"
	}
	return "otherTime"
}
