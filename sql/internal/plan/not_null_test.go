package plan

import (
	"testing"
)

// notNullDDL declares a nexmark table as the reference does, its bid view,
// a datagen table whose columns x and y may be NULL and z is never, a
// view of auctions, and a sink.
const notNullDDL = `
CREATE TABLE datagen (
    event_type INT,
    bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR>,
    dateTime AS bid.dateTime,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH ('connector' = 'nexmark', 'events.num' = '1000');
CREATE VIEW bid AS SELECT bid.auction, bid.bidder, bid.price, dateTime FROM datagen WHERE event_type = 2;
CREATE TABLE t (x BIGINT, y BIGINT, z BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10',
    'fields.x.null-rate' = '0.1', 'fields.y.null-rate' = '0.1');
CREATE TABLE auctions (event_type INT, auction ROW<id BIGINT, category BIGINT>)
    WITH ('connector' = 'nexmark', 'events.num' = '1000');
CREATE VIEW auction AS SELECT auction.id, auction.category FROM auctions WHERE event_type = 1;
CREATE TABLE out (k BIGINT, n BIGINT) WITH ('connector' = 'blackhole');
`

// TestNotNullKey checks which keys of keyed operators the planner finds
// never NULL (notNull), so that keyedBy keys them by their int64 values
// alone: fields of a source filtered to one kind of event, and columns a
// filter drops the NULLs of; not the fields of an unfiltered source, nor
// columns a filter lets NULL through.
func TestNotNullKey(t *testing.T) {
	for _, c := range []struct {
		name, sql string
		want      bool
	}{
		{"view of bids", `SELECT auction, COUNT(*) FROM bid GROUP BY auction`, true},
		{"view of bids, no pushdown", `SET 'table.optimizer.source.predicate-pushdown-enabled' = 'false';
			INSERT INTO out SELECT auction, COUNT(*) FROM bid GROUP BY auction`, false},
		{"all events", `SELECT bid.auction, COUNT(*) FROM datagen GROUP BY bid.auction`, false},
		{"all events, bid field compared", `SELECT bid.auction, COUNT(*) FROM datagen WHERE bid.price > 10 GROUP BY bid.auction`, true},
		{"all events, bid tested", `SELECT bid.auction, COUNT(*) FROM datagen WHERE bid IS NOT NULL GROUP BY bid.auction`, true},
		{"IS NOT NULL", `SELECT x, COUNT(*) FROM t WHERE x IS NOT NULL GROUP BY x`, true},
		{"compared", `SELECT x, COUNT(*) FROM t WHERE 5 < x GROUP BY x`, true},
		{"compared in a disjunction", `SELECT x, COUNT(*) FROM t WHERE x IS NULL OR x > 5 GROUP BY x`, false},
		{"IS DISTINCT FROM", `SELECT x, COUNT(*) FROM t WHERE x IS DISTINCT FROM 5 GROUP BY x`, false},
		{"another column tested", `SELECT x, COUNT(*) FROM t WHERE y IS NOT NULL GROUP BY x`, false},
		{"unfiltered", `SELECT x, COUNT(*) FROM t GROUP BY x`, false},
		{"generated never NULL", `SELECT z, COUNT(*) FROM t GROUP BY z`, true},
		{"generated never NULL, projected", `SELECT k, COUNT(*) FROM (SELECT z AS k, x FROM t) GROUP BY k`, true},
		{"hopping window", `SELECT auction, COUNT(*) FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
			GROUP BY auction, window_start, window_end`, true},
		{"top-n", `SELECT auction, price FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rn FROM bid) WHERE rn <= 3`, true},
		{"aggregate of an aggregate", `SELECT a, COUNT(*) FROM (SELECT auction AS a, COUNT(*) AS c FROM bid GROUP BY auction) GROUP BY a`, true},
		{"union of bids", `SELECT auction, COUNT(*) FROM (SELECT auction FROM bid UNION ALL SELECT bidder FROM bid) GROUP BY auction`, true},
		{"inner join, a side's field", `SELECT category, COUNT(*) FROM (SELECT A.category FROM auction A JOIN bid B ON A.id = B.auction) GROUP BY category`, true},
		{"inner join, equality", `SELECT t.x, COUNT(*) FROM t JOIN t AS u ON t.x = u.y GROUP BY t.x`, true},
		{"inner join, IS NOT DISTINCT FROM", `SELECT t.x, COUNT(*) FROM t JOIN t AS u ON t.x IS NOT DISTINCT FROM u.y GROUP BY t.x`, false},
		{"left join, equality", `SELECT t.x, COUNT(*) FROM t LEFT JOIN t AS u ON t.x = u.y GROUP BY t.x`, false},
		{"left join, left field", `SELECT t.z, COUNT(*) FROM t LEFT JOIN t AS u ON t.x = u.y GROUP BY t.z`, true},
		{"left join, right field", `SELECT u.z, COUNT(*) FROM t LEFT JOIN t AS u ON t.x = u.y GROUP BY u.z`, false},
		{"right join, right field", `SELECT u.z, COUNT(*) FROM t RIGHT JOIN t AS u ON t.x = u.y GROUP BY u.z`, true},
		{"full join", `SELECT t.z, COUNT(*) FROM t FULL JOIN t AS u ON t.x = u.y GROUP BY t.z`, false},
		{"union with all events", `SELECT auction, COUNT(*) FROM (SELECT auction FROM bid UNION ALL SELECT bid.bidder FROM datagen) GROUP BY auction`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Script{Cat: NewCatalog(nil)}
			if _, err := s.Exec(notNullDDL); err != nil {
				t.Fatal(err)
			}
			sql := c.sql
			if sql[:6] == "SELECT" {
				sql = "INSERT INTO out " + sql
			}
			if _, err := s.Exec(sql); err != nil {
				t.Fatal(err)
			}
			var roots []Rel
			for _, r := range s.Inserts {
				roots = append(roots, r)
			}
			s.prepare(roots)
			var in Rel
			var keys []int
			walkRels(roots, func(r Rel) bool {
				if in != nil {
					return false
				}
				switch x := r.(type) {
				case *AggregateRel:
					in, keys = x.Input, seq(x.Keys)
				case *WindowAggregateRel:
					in, keys = x.Input, seq(x.Keys)
				case *RankRel:
					in, keys = x.Input, x.PartitionBy
				}
				return in == nil
			})
			if in == nil || len(keys) != 1 {
				t.Fatalf("found no keyed operator of one key column in the plan of %s", c.sql)
			}
			if got := notNull(s.Cat, in, keys); got != c.want {
				t.Errorf("notNull of the key %s = %v, want %v", in.Schema().Field(keys[0]).Name, got, c.want)
			}
		})
	}
}
