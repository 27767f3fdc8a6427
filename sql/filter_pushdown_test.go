package sql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/eddystream/eddy/sql"
)

// TestFilterPushdownKeepsResults runs queries whose WHERE clauses the
// nexmark source takes (comparisons of event_type, IS [NOT] NULL of the
// event rows, comparisons of their BIGINT fields, also scaled by a
// constant) with the filter pushed into the source and with
// 'table.optimizer.source.predicate-pushdown-enabled' = 'false', at
// parallelism 1 and 2: the results must be the same, and the plan must
// show the filter in the scan only when pushed.
func TestFilterPushdownKeepsResults(t *testing.T) {
	ddl := strings.Replace(nexmarkDDL, "'events.num' = '1000'", "'events.num' = '3000'", 1) + `
CREATE VIEW auction AS
SELECT auction.id, auction.itemName, auction.initialBid, auction.reserve, dateTime, auction.seller, auction.category
FROM nexmark WHERE event_type = 1;
`
	for _, c := range []struct {
		name, sink, query string
	}{
		{"q0", "auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3), extra VARCHAR",
			"SELECT auction, bidder, price, dateTime, extra FROM bid"},
		{"q1", "auction BIGINT, bidder BIGINT, price DECIMAL(23, 3), dateTime TIMESTAMP(3), extra VARCHAR",
			"SELECT auction, bidder, 0.908 * price AS price, dateTime, extra FROM bid"},
		{"q2", "auction BIGINT, price BIGINT",
			"SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0"},
		{"auctions over a reserve", "id BIGINT, seller BIGINT, reserve BIGINT, dateTime TIMESTAMP(3)",
			"SELECT id, seller, reserve, dateTime FROM auction WHERE reserve > 5000"},
		{"ranges of event_type", "event_type INT, dateTime TIMESTAMP(3), person_id BIGINT, auction_id BIGINT",
			"SELECT event_type, dateTime, person.id, auction.id FROM nexmark WHERE event_type < 2 AND (0 <> event_type OR event_type IS NULL)"},
		{"conjuncts of event_type", "event_type INT, dateTime TIMESTAMP(3), person_id BIGINT",
			"SELECT event_type, dateTime, person.id FROM nexmark WHERE event_type <= 1 AND event_type <> CAST(1 AS BIGINT) AND person.name IS NOT NULL"},
		{"rows not NULL", "price BIGINT, dateTime TIMESTAMP(3)",
			"SELECT bid.price, dateTime FROM nexmark WHERE bid IS NOT NULL AND auction.id IS NULL AND bid.price > 100"},
		{"q14", "auction BIGINT, price DECIMAL(23, 3), dateTime TIMESTAMP(3)",
			"SELECT auction, 0.908 * price AS price, dateTime FROM bid WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000"},
		{"scaled comparisons", "price BIGINT, bidder BIGINT",
			"SELECT price, bidder FROM bid WHERE -2.5 * price <= -2500000 AND price * 1.25 < 20000000 AND 1.5 * bidder >= 1500 AND 0.4 * price <> 1"},
		{"no event passes", "price BIGINT",
			"SELECT bid.price FROM nexmark WHERE event_type > 2"},
		{"tumbling windows of the bids", "auction BIGINT, bids BIGINT, window_start TIMESTAMP(3)",
			"SELECT auction, COUNT(*) AS bids, window_start FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '1' SECOND)) GROUP BY auction, window_start, window_end"},
		{"a join of two views of the table", "auction BIGINT, seller BIGINT, price BIGINT",
			"SELECT B.auction, A.seller, B.price FROM bid B JOIN auction A ON B.auction = A.id"},
	} {
		for _, p := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s p=%d", c.name, p), func(t *testing.T) {
				script := ddl + fmt.Sprintf("CREATE TABLE out (%s) WITH ('connector' = 'collect');\nINSERT INTO out %s;\n", c.sink, c.query)
				off := "SET 'table.optimizer.source.predicate-pushdown-enabled' = 'false';\n" + script
				if plan := explain(t, script); !strings.Contains(plan, "filter=[") {
					t.Errorf("the plan pushes no filter into the source:\n%s", plan)
				}
				if plan := explain(t, off); strings.Contains(plan, "filter=[") {
					t.Errorf("with predicate pushdown off, the plan still pushes a filter into the source:\n%s", plan)
				}
				pushed, kept := sorted(run(t, script, p)), sorted(run(t, off, p))
				if c.name != "no event passes" && len(kept) == 0 {
					t.Fatal("the query without pushdown yields no rows; the test compares nothing")
				}
				if d := diffLines(pushed, kept); d != "" {
					t.Errorf("the rows with the filter pushed into the source (got) differ from those without (want):\n%s", d)
				}
			})
		}
	}
}

// explain returns the plan of the INSERT at the end of script.
func explain(t *testing.T, script string) string {
	t.Helper()
	i := strings.LastIndex(script, "INSERT INTO")
	return explainIn(t, sql.NewSession(sql.WithConnectors(registry(&collectSink{}))), script[:i], script[i:])
}

// explainIn returns the plan of stmt in s after the statements of ddl.
func explainIn(t *testing.T, s *sql.Session, ddl, stmt string) string {
	t.Helper()
	if _, err := s.Execute(ddl); err != nil {
		t.Fatal(err)
	}
	plan, err := s.Explain(stmt)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}
