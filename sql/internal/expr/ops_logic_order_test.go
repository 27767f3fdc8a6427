package expr

import (
	"testing"

	"github.com/eddystream/eddy/sql/types"
)

// logicFixture holds the columns s, c (VARCHAR) and n (BIGINT) and builds
// resolved calls of built-ins over them.
type logicFixture struct {
	t  *testing.T
	rt *types.RowType
}

func newLogicFixture(t *testing.T) *logicFixture {
	return &logicFixture{t: t, rt: types.MustRowType(types.F("s", types.String()), types.F("c", types.String()), types.F("n", types.BigInt()))}
}

func (f *logicFixture) col(i int) Expr {
	return &Column{Index: i, Name: f.rt.Field(i).Name, T: f.rt.FieldType(i)}
}

func (f *logicFixture) call(name string, args ...Expr) Expr {
	f.t.Helper()
	b, ok := Builtins().Lookup(name)
	if !ok {
		f.t.Fatalf("no built-in %s", name)
	}
	e, err := NewCall(b, args...)
	if err != nil {
		f.t.Fatalf("%s%v: %v", name, args, err)
	}
	return e
}

func intLit(v int64) Expr { return &Literal{V: v, T: types.BigInt().NotNull()} }

// TestCostlyFirst checks which ANDs and ORs are evaluated second operand
// first: a regular expression with a constant pattern after a comparison,
// where both are error-free.
func TestCostlyFirst(t *testing.T) {
	f := newLogicFixture(t)
	regex := f.call("IS NOT NULL", f.call("REGEXP_EXTRACT", f.col(0), StringLiteral("(&|^)id=([^&]*)"), intLit(2)))
	regexCol := f.call("IS NOT NULL", f.call("REGEXP_EXTRACT", f.col(0), f.col(1), intLit(2)))
	hot := f.call("OR", f.call("=", f.call("LOWER", f.col(1)), StringLiteral("apple")), f.call("=", f.call("LOWER", f.col(1)), StringLiteral("google")))
	cast := f.call("=", &Cast{X: f.col(1), T: types.BigInt()}, intLit(1))
	arith := f.call("=", f.call("+", f.col(2), intLit(1)), intLit(3))
	for _, tc := range []struct {
		name string
		e    Expr
		want bool
	}{
		{"regex OR lower-in", f.call("OR", regex, hot), true},
		{"regex AND comparison", f.call("AND", f.call("REGEXP", f.col(0), StringLiteral("a+")), f.call("=", f.col(1), StringLiteral("x"))), true},
		{"lower-in OR regex", f.call("OR", hot, regex), false},
		{"regex OR regex", f.call("OR", regex, regex), false},
		{"pattern from a column", f.call("OR", regexCol, hot), false},
		{"a cast that can fail", f.call("OR", regex, cast), false},
		{"a cast that can fail before a comparison", f.call("AND", f.call("REGEXP", f.col(0), StringLiteral("a+")), f.call("OR", cast, f.call("=", f.col(1), StringLiteral("x")))), false},
		{"arithmetic before a comparison", f.call("OR", regex, f.call("OR", arith, f.call("=", f.col(1), StringLiteral("x")))), false},
		{"a cast of text to text", f.call("OR", regex, f.call("=", &Cast{X: f.col(1), T: types.VarChar(3)}, StringLiteral("x"))), true},
		{"arithmetic that can overflow", f.call("OR", regex, arith), false},
	} {
		if got := costlyFirst(tc.e.(*Call)); got != tc.want {
			t.Errorf("%s: costlyFirst(%s) = %v, want %v", tc.name, tc.e, got, tc.want)
		}
	}
}

// TestCostlyFirstKeepsThreeValuedLogic evaluates "REGEXP_EXTRACT(s, ...) IS
// NOT NULL OR/AND c = 'x'" and the same with n's comparison, compiled
// cheaper operand first, over every combination of TRUE, FALSE and NULL,
// against SQL's truth tables.
func TestCostlyFirstKeepsThreeValuedLogic(t *testing.T) {
	f := newLogicFixture(t)
	// The costly side is TRUE for "id=1", FALSE for "zz" and NULL for a
	// NULL s; the cheap side likewise for "x", "y" and NULL.
	costlySide := f.call("REGEXP", f.col(0), StringLiteral("id="))
	cheapSide := f.call("=", f.col(1), StringLiteral("x"))
	vals := [][2]any{{"id=1", true}, {"zz", false}, {nil, nil}}
	cheap := [][2]any{{"x", true}, {"y", false}, {nil, nil}}
	for _, op := range []string{"OR", "AND"} {
		e := f.call(op, costlySide, cheapSide)
		if !costlyFirst(e.(*Call)) {
			t.Fatalf("%s: not evaluated cheaper operand first", e)
		}
		ev, err := Compile(e)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range vals {
			for _, b := range cheap {
				w := types.NewRowWriter(f.rt, types.NewArena(0))
				if a[0] != nil {
					w.SetString(0, a[0].(string))
				}
				if b[0] != nil {
					w.SetString(1, b[0].(string))
				}
				w.SetInt64(2, 0)
				got, null := ev.Bool(w.Finish())
				wantV, wantNull := truth(op, a[1], b[1])
				if null != wantNull || (!null && got != wantV) {
					t.Errorf("%s with s=%v, c=%v: (%v, null %v), want (%v, null %v)", e, a[0], b[0], got, null, wantV, wantNull)
				}
			}
		}
	}
}

// truth is SQL's three-valued AND or OR of a and b (nil for NULL).
func truth(op string, a, b any) (v, null bool) {
	dominant := op == "OR" // TRUE decides an OR, FALSE an AND
	if a == dominant || b == dominant {
		return dominant, false
	}
	if a == nil || b == nil {
		return false, true
	}
	return !dominant, false
}
