package queries

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/nexmark"
)

// Q18Result is a change of q18's result table, keyed by (Bidder, Auction).
type Q18Result struct {
	Op       RowKind `json:"op"`
	Auction  int64   `json:"auction"`
	Bidder   int64   `json:"bidder"`
	Price    int64   `json:"price"`
	Channel  string  `json:"channel"`
	URL      string  `json:"url"`
	DateTime Time    `json:"dateTime"`
	Extra    string  `json:"extra"`
}

// q18Key is q18's partition key.
type q18Key struct{ Bidder, Auction int64 }

// bidChanges adds a source of the bids of the sequence as an insert-only
// changelog: eddy.Inserts of bidSource, with each bid made an insertion at
// the source rather than by an operator of its own.
func bidChanges(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[changelog.Change[nexmark.Bid]] {
	s := generatorSource(env, "Nexmark bids", cfg, func(c changelog.Change[nexmark.Bid]) int64 { return c.Row.DateTime },
		func() func(e *nexmark.Event, out connector.SplitOutput[changelog.Change[nexmark.Bid]]) {
			return func(e *nexmark.Event, out connector.SplitOutput[changelog.Change[nexmark.Bid]]) {
				if e.Type == nexmark.BidEvent {
					out.Emit(changelog.InsertOf(e.Bid))
				}
			}
		})
	return eddy.AsChangelog(s, changelog.InsertOnly)
}

func q18Row(op RowKind, b *nexmark.Bid) Q18Result {
	return Q18Result{Op: op, Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel,
		URL: b.URL, DateTime: Time(b.DateTime), Extra: b.Extra}
}

// Q18 finds the last bid of every bidder on every auction (a deduplication
// keeping the last row by event time):
//
//	SELECT auction, bidder, price, channel, url, dateTime, extra
//	FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY dateTime DESC) AS rank_number
//	      FROM bid)
//	WHERE rank_number <= 1;
//
// It emits the changelog of the result table. It is a Deduplicate keeping
// the last row on event time, as Flink plans the query: a bid replaces the
// kept one (-U of the old, +U of the new) if its dateTime is not earlier.
func Q18(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q18Result] {
	bids := eddy.GroupBy(bidChanges(env, cfg), func(b nexmark.Bid) q18Key { return q18Key{b.Bidder, b.Auction} })
	last := eddy.Deduplicate(bids, eddy.KeepLast, eddy.EventTime).Name("q18")
	return changeRows(last, func(c changelog.Change[nexmark.Bid], _ *dayNames) Q18Result { return q18Row(c.Kind, &c.Row) })
}
