package postgrescdc

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
)

// Chunks of a table's snapshot are split on its chunk key, an integer
// column. Keys spread evenly over their range (the range over the row count
// between 0.05 and 1000, as Flink CDC's even splitting takes them) are cut
// into equal steps; other tables are cut by querying the key that ends each
// chunk. The first and last chunks are unbounded below and above, so that
// rows inserted beyond the range during the snapshot fall in a chunk.
const (
	evenFactorLow  = 0.05
	evenFactorHigh = 1000.0
)

// splitTable cuts a table into chunks of about 'chunk.size' rows.
func (c *config) splitTable(ctx context.Context, conn *pgconn.PgConn, t *tableInfo) ([]*chunk, error) {
	one := []*chunk{{table: t.id()}}
	if t.chunkKey < 0 {
		return one, nil
	}
	key := quoteIdent(t.cols[t.chunkKey].name)
	rows, err := query(ctx, conn, "SELECT MIN("+key+"), MAX("+key+"), COUNT(*) FROM "+t.quoted())
	if err != nil {
		return nil, fmt.Errorf("postgres-cdc: reading the key range of %s: %w", t.id(), err)
	}
	if len(rows) != 1 || rows[0][0] == nil {
		return one, nil
	}
	lo, err1 := strconv.ParseInt(string(rows[0][0]), 10, 64)
	hi, err2 := strconv.ParseInt(string(rows[0][1]), 10, 64)
	count, _ := strconv.ParseInt(string(rows[0][2]), 10, 64)
	if err1 != nil || err2 != nil || count <= int64(c.chunkSize) {
		return one, nil
	}
	if hi-lo+1 > 0 {
		factor := float64(hi-lo+1) / float64(count)
		if factor >= evenFactorLow && factor <= evenFactorHigh {
			step := max(int64(float64(c.chunkSize)*factor), 1)
			var bounds []int64
			for b := lo + step; b <= hi && b > lo; b += step {
				bounds = append(bounds, b)
			}
			return chunksOf(t.id(), bounds), nil
		}
	}
	// Uneven: the key ending each chunk is the chunkSize-th after its start.
	var bounds []int64
	cur := lo
	for {
		q := fmt.Sprintf("SELECT MAX(k) FROM (SELECT %s AS k FROM %s WHERE %s > %d ORDER BY %s LIMIT %d) AS chunk",
			key, t.quoted(), key, cur, key, c.chunkSize)
		rows, err := query(ctx, conn, q)
		if err != nil {
			return nil, fmt.Errorf("postgres-cdc: splitting %s into chunks: %w", t.id(), err)
		}
		if len(rows) != 1 || rows[0][0] == nil {
			break
		}
		next, err := strconv.ParseInt(string(rows[0][0]), 10, 64)
		if err != nil || next == cur {
			break
		}
		bounds = append(bounds, next)
		cur = next
	}
	return chunksOf(t.id(), bounds), nil
}

// chunksOf returns the chunks between bounds: (-inf, b0), [b0, b1), ...,
// [bn, +inf).
func chunksOf(table string, bounds []int64) []*chunk {
	out := make([]*chunk, 0, len(bounds)+1)
	var start int64
	hasStart := false
	for i, b := range bounds {
		out = append(out, &chunk{table: table, index: i, start: start, hasStart: hasStart, end: b, hasEnd: true})
		start, hasStart = b, true
	}
	return append(out, &chunk{table: table, index: len(bounds), start: start, hasStart: hasStart})
}
