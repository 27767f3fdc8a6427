package sql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/eddystream/eddy"
)

// genDDL is a table of the numbers 1..n (at most 1 << 20) with a rowtime
// of n milliseconds, from datagen.
func genDDL(n int) string {
	return fmt.Sprintf(`
CREATE TABLE gen (
  id BIGINT,
  ts AS TO_TIMESTAMP_LTZ(id, 3),
  WATERMARK FOR ts AS ts
) WITH (
  'connector' = 'datagen', 'rows-per-second' = '100000000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '%d'
);
`, n)
}

// TestWindowCountStarWithoutKeys plans a window aggregation whose only
// call reads no column (COUNT(*) with no key): its pre-projection has no
// columns.
func TestWindowCountStarWithoutKeys(t *testing.T) {
	lines, _ := runWith(t, genDDL(1000)+`
CREATE TABLE out (w TIMESTAMP_LTZ(3), n BIGINT) WITH ('connector' = 'collect');
INSERT INTO out
SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '0.5' SECOND))
GROUP BY window_start, window_end;
`, eddy.WithParallelism(1))
	want := []string{"+I[1970-01-01T00:00:00.500Z, 500]", "+I[1970-01-01T00:00:00Z, 499]", "+I[1970-01-01T00:00:01Z, 1]"}
	if got := sorted(lines); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %v, want %v", got, want)
	}
}
