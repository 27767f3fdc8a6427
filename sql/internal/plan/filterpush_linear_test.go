package plan

import (
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// TestScaledPredicate checks the predicates of comparisons of a constant
// multiple of an integer column with a constant against the comparisons
// themselves, computed exactly, for every column value around the bound:
// the predicate must hold for exactly the values the comparison holds
// for, and be refused where no comparison of the column says the same.
func TestScaledPredicate(t *testing.T) {
	rt := types.MustRowType(types.F("x", types.BigInt()), types.F("s", types.Int()))
	builtin := func(name string) *expr.Builtin {
		b, ok := expr.Builtins().Lookup(name)
		if !ok {
			t.Fatalf("no builtin %s", name)
		}
		return b
	}
	lit := func(s string) expr.Expr {
		d := types.MustParseDecimal(s)
		digits := len(strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(s), "0"))
		return &expr.Literal{V: d, T: types.DecimalType(max(digits, d.Scale(), 1), d.Scale()).NotNull(), Text: s}
	}
	for _, c := range []struct {
		mult, op, k string
		col         int
		refused     bool
	}{
		{mult: "0.908", op: ">", k: "1000000"},
		{mult: "0.908", op: "<", k: "50000000"},
		{mult: "0.908", op: ">=", k: "9.08"},
		{mult: "0.908", op: "<=", k: "9.079"},
		{mult: "-2.5", op: ">=", k: "10"},
		{mult: "-2.5", op: "<", k: "-7.5"},
		{mult: "-2.5", op: "<=", k: "-7.4"},
		{mult: "1.5", op: "=", k: "3"},
		{mult: "1.5", op: "<>", k: "-4.5"},
		{mult: "0.4", op: "=", k: "1", refused: true},
		{mult: "0.4", op: "<>", k: "1", refused: true},
		{mult: "0.3", op: ">", k: "-1", col: 1},
		{mult: "0.001", op: ">", k: "3000000", col: 1, refused: true}, // out of INT's range
	} {
		t.Run(fmt.Sprintf("%s*col%d %s %s", c.mult, c.col, c.op, c.k), func(t *testing.T) {
			col := &expr.Column{Index: c.col, Name: rt.Field(c.col).Name, T: rt.FieldType(c.col)}
			prod, err := expr.NewCall(builtin("*"), lit(c.mult), col)
			if err != nil {
				t.Fatal(err)
			}
			cmp, err := expr.NewCall(builtin(c.op), prod, lit(c.k))
			if err != nil {
				t.Fatal(err)
			}
			p, ok := scaledPredicate(cmp, rt)
			if c.refused {
				if ok {
					t.Fatalf("%s gave the predicate %s; want none", cmp, p)
				}
				return
			}
			if !ok {
				t.Fatalf("%s gave no predicate", cmp)
			}
			mult, _ := new(big.Rat).SetString(c.mult)
			k, _ := new(big.Rat).SetString(c.k)
			center := new(big.Rat).Quo(k, mult)
			mid := ratFloor(center).Int64()
			for x := mid - 5; x <= mid+5; x++ {
				w := types.NewRowWriter(rt, types.NewArena(0))
				w.SetInt64(1-c.col, 0)
				w.SetInt64(c.col, x)
				got, err := p.Holds(rt, w.Finish())
				if err != nil {
					t.Fatal(err)
				}
				v := new(big.Rat).Mul(mult, new(big.Rat).SetInt64(x)).Cmp(k)
				want := map[string]bool{">": v > 0, ">=": v >= 0, "<": v < 0, "<=": v <= 0, "=": v == 0, "<>": v != 0}[c.op]
				if got != want {
					t.Errorf("x = %d: the predicate %s gives %v, %s gives %v", x, p, got, cmp, want)
				}
			}
			if !strings.Contains(p.String(), fmt.Sprint([]int{c.col})) || p.Op == connector.OpIsNull {
				t.Errorf("predicate %s is not on column %d", p, c.col)
			}
		})
	}
}
