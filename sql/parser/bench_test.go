package parser

import (
	"strings"
	"testing"
)

// benchScript is a script of 100 lines: a source table with nested rows,
// views, sinks and windowed, joined and ranked queries.
const benchScript = `CREATE TABLE events (
    kind INT,
    trade ROW<
        id BIGINT,
        symbol VARCHAR,
        qty BIGINT,
        price BIGINT,
        ts TIMESTAMP(3),
        note VARCHAR>,
    quote ROW<symbol VARCHAR, bid BIGINT, ask BIGINT, ts TIMESTAMP(3)>,
    ts AS
        CASE
            WHEN kind = 0 THEN trade.ts
            ELSE quote.ts
        END,
    WATERMARK FOR ts AS ts - INTERVAL '4' SECOND
) WITH (
    'connector' = 'generator',
    'rate' = '1000000'
);
CREATE VIEW trade AS
SELECT trade.id, trade.symbol, trade.qty, trade.price, ts, trade.note
FROM events WHERE kind = 0;
CREATE VIEW quote AS
SELECT quote.symbol, quote.bid, quote.ask, ts FROM events WHERE kind = 1;
CREATE TABLE sink1 (symbol VARCHAR, n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink1
SELECT busy.symbol, busy.n
FROM (
    SELECT symbol, count(*) AS n, window_start AS wstart, window_end AS wend
    FROM TABLE(HOP(TABLE trade, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
    GROUP BY symbol, window_start, window_end
) AS busy
JOIN (
    SELECT max(c.n) AS top, c.wstart, c.wend
    FROM (
        SELECT count(*) AS n, window_start AS wstart, window_end AS wend
        FROM TABLE(HOP(TABLE trade, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
        GROUP BY symbol, window_start, window_end
    ) AS c
    GROUP BY c.wstart, c.wend
) AS tops
ON busy.wstart = tops.wstart AND busy.wend = tops.wend AND busy.n >= tops.top;
CREATE TABLE sink2 (id BIGINT, symbol VARCHAR, price BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink2
SELECT id, symbol, price
 FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY symbol, id ORDER BY ts DESC) AS rn
       FROM trade)
 WHERE rn <= 1;
INSERT INTO sink2
SELECT t.id, t.symbol, t.price
FROM trade t
JOIN (
  SELECT MAX(price) AS maxprice, window_end AS ts
  FROM TABLE(TUMBLE(TABLE trade, DESCRIPTOR(ts), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end
) m
ON t.price = m.maxprice
WHERE t.ts BETWEEN m.ts - INTERVAL '10' SECOND AND m.ts;
CREATE TABLE sink3 (d VARCHAR, total BIGINT, low BIGINT, symbols BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink3
SELECT
     DATE_FORMAT(ts, 'yyyy-MM-dd') AS d,
     count(*) AS total,
     count(*) filter (where price < 10000) AS low,
     count(distinct symbol) filter (where price >= 10000 and price < 1000000) AS symbols
FROM trade
GROUP BY DATE_FORMAT(ts, 'yyyy-MM-dd');
CREATE TABLE sink4 (id BIGINT, tag VARCHAR) WITH ('connector' = 'blackhole');
INSERT INTO sink4
SELECT
    id,
    CASE
        WHEN lower(symbol) = 'abc' THEN '0'
        WHEN lower(symbol) = 'xyz' THEN '1'
        ELSE REGEXP_EXTRACT(note, '(&|^)tag=([^&]*)', 2)
    END AS tag
FROM trade
WHERE REGEXP_EXTRACT(note, '(&|^)tag=([^&]*)', 2) IS NOT NULL
   OR lower(symbol) IN ('abc', 'xyz');
INSERT INTO sink2
SELECT g.id, g.symbol,
    AVG(g.bid) OVER (PARTITION BY g.symbol ORDER BY g.ts ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)
FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY t.id, t.symbol ORDER BY q.bid DESC) AS rn
    FROM (SELECT t.id, t.symbol, q.bid, q.ts
        FROM trade AS t, quote AS q
        WHERE t.symbol = q.symbol
          AND q.ts BETWEEN t.ts AND t.ts + INTERVAL '1' MINUTE)
    WHERE rn <= 1
) AS g;
CREATE TEMPORARY VIEW spread AS
SELECT
    q.symbol,
    q.ask - q.bid AS spread,
    CAST(q.ts AS TIMESTAMP(3)) AS ts
FROM quote AS q
LEFT JOIN trade AS t
    ON t.symbol = q.symbol
   AND t.ts BETWEEN q.ts - INTERVAL '5' SECOND AND q.ts;
`

// BenchmarkParseScript parses a 100-line script (go test -run XXX -bench
// ParseScript ./sql/parser/); it reports bytes/s of SQL.
func BenchmarkParseScript(b *testing.B) {
	if n := strings.Count(benchScript, "\n"); n != 100 {
		b.Fatalf("the script has %d lines, not 100", n)
	}
	b.SetBytes(int64(len(benchScript)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(benchScript); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseLinear parses the script repeated 1, 10 and 100 times: the
// time per byte stays the same (the parser is linear).
func BenchmarkParseLinear(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		src := strings.Repeat(benchScript, n)
		b.Run(itoa(n)+"x", func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, err := Parse(src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
