package expr_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// TestDateFormatMemoAgrees checks that DATE_FORMAT of a TIMESTAMP by a
// constant pattern, which gives the text of the timestamp before again
// while the timestamp stays in the same day, hour, minute or second,
// gives what the same pattern read from a column (never remembered)
// gives, over timestamps that step forward a little, jump back, cross
// the epoch, repeat, and are NULL.
func TestDateFormatMemoAgrees(t *testing.T) {
	rt := types.MustRowType(types.Field{Name: "ts", Type: types.TimestampType(3)}, types.Field{Name: "p", Type: types.String()})
	compile := func(src string) *expr.Eval {
		t.Helper()
		n, err := parser.ParseExpr(src)
		if err != nil {
			t.Fatal(err)
		}
		e, err := (&expr.Analyzer{Src: src, Scope: rowScope{rt}, Funcs: expr.Builtins()}).Expr(n)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := expr.Compile(e)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	patterns := []string{"yyyy-MM-dd", "HH:mm", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm:ss.SSS", "h a", "EEE D Q", "mm", "ss", "yyyyMMdd'T'HHmmss", "MMM"}
	rng := rand.New(rand.NewPCG(7, 11))
	w := types.NewRowWriter(rt, types.NewArena(0))
	for _, p := range patterns {
		memo, plain := compile("DATE_FORMAT(ts, '"+strings.ReplaceAll(p, "'", "''")+"')"), compile("DATE_FORMAT(ts, p)")
		ms := int64(1_700_000_000_000)
		for i := 0; i < 20000; i++ {
			switch rng.IntN(10) {
			case 0:
				ms = rng.Int64N(4_000_000_000_000) - 2_000_000_000_000 // anywhere, before the epoch too
			case 1:
				ms -= rng.Int64N(90_000_000) // back, up to a day
			case 2:
				ms = -rng.Int64N(3_000) // around the epoch
			case 3:
				// the same timestamp again
			default:
				ms += rng.Int64N(2_000)
			}
			w.Reset()
			if rng.IntN(50) == 0 {
				w.SetNull(0)
			} else {
				w.SetTimestamp(0, types.TimestampFromMillis(ms))
			}
			w.SetString(1, p)
			r := w.Finish()
			got, gotNull := memo.Str(r)
			want, wantNull := plain.Str(r)
			if got != want || gotNull != wantNull {
				t.Fatalf("DATE_FORMAT(%d ms, %q) = %q (null %v), want %q (null %v)", ms, p, got, gotNull, want, wantNull)
			}
		}
	}
}
