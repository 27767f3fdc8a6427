package mysqlcdc

import (
	"fmt"
	"strconv"

	"github.com/go-mysql-org/go-mysql/client"
)

// Chunks of a table's snapshot are split on its chunk key, a column whose
// order the source reproduces (keyOrder). Integer keys spread evenly over
// their range (the range over the row count between 0.05 and 1000, as
// Flink CDC's even splitting takes them) are cut into equal steps; other
// tables are cut by querying the key that ends each chunk, so that the
// server chooses every bound. The first and last chunks are unbounded below
// and above, so that rows inserted beyond the range during the snapshot
// fall in a chunk.
const (
	evenFactorLow  = 0.05
	evenFactorHigh = 1000.0
)

// splitTable cuts a table into chunks of about chunkSize rows.
func (c *config) splitTable(conn *client.Conn, t *tableInfo) ([]*chunk, error) {
	one := []*chunk{{table: t.id()}}
	if t.chunkKey < 0 {
		return one, nil
	}
	col := &t.cols[t.chunkKey]
	key := quote(col.name)
	from := quote(t.db) + "." + quote(t.name)
	r, err := conn.Execute("SELECT " + keySelect(t.order, "MIN("+key+")") + ", " + keySelect(t.order, "MAX("+key+")") + ", COUNT(*) FROM " + from)
	if err != nil {
		return nil, fmt.Errorf("mysql-cdc: reading the key range of %s: %w", t.id(), err)
	}
	defer r.Close()
	if null, _ := r.IsNull(0, 0); null {
		return one, nil
	}
	minS := keyBound(t.order, text(r, 0, 0))
	maxS := keyBound(t.order, text(r, 0, 1))
	count, _ := r.GetInt(0, 2)
	if count <= int64(c.chunkSize) {
		return one, nil
	}
	lo, err1 := strconv.ParseInt(minS, 10, 64)
	hi, err2 := strconv.ParseInt(maxS, 10, 64)
	if t.order == orderInteger && err1 == nil && err2 == nil && hi-lo+1 > 0 {
		factor := float64(hi-lo+1) / float64(count)
		if factor >= evenFactorLow && factor <= evenFactorHigh {
			step := max(int64(float64(c.chunkSize)*factor), 1)
			var bounds []string
			for b := lo + step; b <= hi && b > lo; b += step {
				bounds = append(bounds, strconv.FormatInt(b, 10))
			}
			return chunksOf(t.id(), bounds), nil
		}
	}
	// Uneven: the key ending each chunk is the chunkSize-th after its start.
	var bounds []string
	cur := minS
	for {
		q := fmt.Sprintf("SELECT %s FROM (SELECT %s AS k FROM %s WHERE %s > %s ORDER BY %s LIMIT %d) AS chunk",
			keySelect(t.order, "MAX(k)"), key, from, key, keyLiteral(col, t.order, cur), key, c.chunkSize)
		r, err := conn.Execute(q)
		if err != nil {
			return nil, fmt.Errorf("mysql-cdc: splitting %s into chunks: %w", t.id(), err)
		}
		null, _ := r.IsNull(0, 0)
		next := keyBound(t.order, text(r, 0, 0))
		r.Close()
		if null || next == cur {
			break
		}
		bounds = append(bounds, next)
		cur = next
	}
	return chunksOf(t.id(), bounds), nil
}

// chunksOf returns the chunks between bounds: (-inf, b0), [b0, b1), ...,
// [bn, +inf).
func chunksOf(table string, bounds []string) []*chunk {
	out := make([]*chunk, 0, len(bounds)+1)
	start := ""
	for i, b := range bounds {
		out = append(out, &chunk{table: table, index: i, start: start, end: b})
		start = b
	}
	return append(out, &chunk{table: table, index: len(bounds), start: start})
}
