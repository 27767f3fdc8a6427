package expr_test

import (
	"fmt"
	"testing"

	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// TestPairMatchesJoinedRow evaluates expressions over two rows with
// expr.Pair and over their concatenation, which must agree, NULLs
// included.
func TestPairMatchesJoinedRow(t *testing.T) {
	lt := types.MustRowType(types.F("a", types.BigInt().Nullable()), types.F("b", types.String().Nullable()), types.F("c", types.TimestampType(3).Nullable()))
	rt := types.MustRowType(types.F("x", types.BigInt().Nullable()), types.F("y", types.String().Nullable()), types.F("z", types.TimestampType(3).Nullable()))
	jt := types.MustRowType(append(lt.Fields(), rt.Fields()...)...)
	lefts := [][]string{{"1", "one", "2024-01-01 00:00:01.000"}, {"null", "null", "null"}, {"5", "five", "2024-01-01 00:00:09.500"}}
	rights := [][]string{{"1", "uno", "2024-01-01 00:00:02.000"}, {"7", "null", "2024-01-01 00:00:00.000"}, {"null", "five", "null"}}
	exprs := []string{
		"a = x", "z BETWEEN c AND c + INTERVAL '5' SECOND", "a + x * 2", "b || y", "COALESCE(y, b, 'none')",
		"CASE WHEN a > x THEN b ELSE y END", "CAST(x AS STRING) = b", "UPPER(y) LIKE 'F%' AND a < 10", "z", "c IS NULL OR x IS NULL",
	}
	for _, src := range exprs {
		n, err := parser.ParseExpr(src)
		if err != nil {
			t.Fatal(err)
		}
		a := &expr.Analyzer{Src: src, Scope: rowScope{jt}, Funcs: expr.Builtins()}
		e, err := a.Expr(n)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		whole, err := expr.Compile(e)
		if err != nil {
			t.Fatal(err)
		}
		p := &expr.Pair{Split: lt.Len()}
		pe, err := p.Compile(e)
		if err != nil {
			t.Fatal(err)
		}
		set, err := p.Setter(e, 0)
		if err != nil {
			t.Fatal(err)
		}
		sw := types.NewRowWriter(types.MustRowType(types.F("v", e.Type())), types.NewArena(0))
		for _, l := range lefts {
			for _, r := range rights {
				lr, err := buildRow(lt, l)
				if err != nil {
					t.Fatal(err)
				}
				rr, err := buildRow(rt, r)
				if err != nil {
					t.Fatal(err)
				}
				jr, err := buildRow(jt, append(append([]string{}, l...), r...))
				if err != nil {
					t.Fatal(err)
				}
				want := whole.Boxed()(jr)
				p.A, p.B = lr, rr
				got := pe.Boxed()(types.Row{})
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s over %v and %v: got %v, want %v", src, l, r, got, want)
				}
				set(types.Row{}, sw)
				out := sw.Finish()
				col, _ := expr.Compile(&expr.Column{Index: 0, T: e.Type()})
				if v := col.Boxed()(out); fmt.Sprint(v) != fmt.Sprint(want) {
					t.Errorf("%s over %v and %v: set %v, want %v", src, l, r, v, want)
				}
			}
		}
	}
}
