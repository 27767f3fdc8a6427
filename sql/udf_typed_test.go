package sql

import (
	"fmt"
	"strings"
	"testing"

	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// callFunction compiles a call of f over columns of type rt and returns
// the boxed results for the rows of vals (nil for NULL).
func callFunction(t *testing.T, f ScalarFunction, rt *types.RowType, vals [][]types.Value) []types.Value {
	t.Helper()
	b, err := userFunction("f", f)
	if err != nil {
		t.Fatal(err)
	}
	args := make([]expr.Expr, rt.Len())
	for i := range args {
		args[i] = &expr.Column{Index: i, Name: rt.Field(i).Name, T: rt.Field(i).Type}
	}
	res := types.MustParseType(f.Result).Nullable()
	ev, err := expr.Compile(&expr.Call{Name: "f", Args: args, Fn: b.Func, T: res})
	if err != nil {
		t.Fatal(err)
	}
	get := ev.Boxed()
	var out []types.Value
	for _, v := range vals {
		out = append(out, get(types.MustBuildRow(rt, nil, v...)))
	}
	return out
}

// TestTypedFunctions calls typed functions of every Arg type, compiled
// typed, and checks their results against their boxed Eval and against
// the values expected; a NULL argument gives NULL without a call.
func TestTypedFunctions(t *testing.T) {
	calls := 0
	cases := []struct {
		f    ScalarFunction
		rt   *types.RowType
		vals [][]types.Value
		want string
	}{
		{Func1(func(b bool) bool { calls++; return !b }), types.MustRowType(types.F("a", types.Boolean())),
			[][]types.Value{{true}, {nil}, {false}}, "[false <nil> true]"},
		{Func1(func(x int8) int16 { calls++; return int16(x) * 300 }), types.MustRowType(types.F("a", types.TinyInt())),
			[][]types.Value{{int8(-3)}, {nil}, {int8(100)}}, "[-900 <nil> 30000]"},
		{Func2(func(x int16, y int32) int32 { calls++; return int32(x) + y }),
			types.MustRowType(types.F("a", types.SmallInt()), types.F("b", types.Int())),
			[][]types.Value{{int16(7), int32(-9)}, {int16(1), nil}, {nil, int32(1)}}, "[-2 <nil> <nil>]"},
		{Func1(func(x int64) float32 { calls++; return float32(x) / 4 }), types.MustRowType(types.F("a", types.BigInt())),
			[][]types.Value{{int64(10)}, {nil}}, "[2.5 <nil>]"},
		{Func2(func(x float32, y float64) float64 { calls++; return float64(x) * y }),
			types.MustRowType(types.F("a", types.Float()), types.F("b", types.Double())),
			[][]types.Value{{float32(1.5), 4.0}, {nil, 1.0}}, "[6 <nil>]"},
		{Func3(func(s string, n int64, sep string) string { calls++; return strings.Repeat(s+sep, int(n)) }),
			types.MustRowType(types.F("a", types.String()), types.F("b", types.BigInt()), types.F("c", types.String())),
			[][]types.Value{{"ab", int64(3), "-"}, {"x", int64(1), nil}, {"", int64(2), "."}}, "[ab-ab-ab- <nil> ..]"},
		{Func1(func(s string) int8 { calls++; return int8(len(s)) }), types.MustRowType(types.F("a", types.String())),
			[][]types.Value{{"four"}, {nil}}, "[4 <nil>]"},
	}
	for i, tc := range cases {
		calls = 0
		got := callFunction(t, tc.f, tc.rt, tc.vals)
		if s := fmt.Sprint(got); s != tc.want {
			t.Errorf("case %d (%v -> %s): %s, want %s", i, tc.f.Args, tc.f.Result, s, tc.want)
		}
		nulls := 0
		for j, v := range tc.vals {
			null := false
			for _, a := range v {
				null = null || a == nil
			}
			if null {
				nulls++
				continue
			}
			boxed, err := tc.f.Eval(v)
			if err != nil || boxed != got[j] {
				t.Errorf("case %d, row %d: typed %v (%T), boxed Eval %v (%T), %v", i, j, got[j], got[j], boxed, boxed, err)
			}
		}
		if want := len(tc.vals) - nulls; calls != want+want {
			// Each row with no NULL was called twice: typed, then boxed.
			t.Errorf("case %d: %d calls, want %d", i, calls, want+want)
		}
	}
}

// TestBoxedFunctionKeepsStrings checks that a boxed function may keep the
// strings it is called with: they stay as they were after the rows they
// came from are overwritten by later rows in the same memory.
func TestBoxedFunctionKeepsStrings(t *testing.T) {
	var kept []any
	f := ScalarFunction{Args: []string{"STRING"}, Result: "BIGINT", Eval: func(args []any) (any, error) {
		kept = append(kept, args[0])
		return int64(0), nil
	}}
	b, err := userFunction("f", f)
	if err != nil {
		t.Fatal(err)
	}
	rt := types.MustRowType(types.F("s", types.String()))
	ev, err := expr.Compile(&expr.Call{Name: "f", Args: []expr.Expr{&expr.Column{Index: 0, Name: "s", T: types.String()}}, Fn: b.Func, T: types.BigInt()})
	if err != nil {
		t.Fatal(err)
	}
	arena := types.NewRecyclingArena(0)
	var want []any
	for round := 0; round < 3; round++ {
		arena.Rewind()
		for i := 0; i < 10; i++ {
			s := fmt.Sprintf("round %d row %d", round, i)
			want = append(want, s)
			ev.Int(types.MustBuildRow(rt, arena, s))
		}
	}
	if fmt.Sprint(kept) != fmt.Sprint(want) {
		t.Fatalf("the strings kept changed with the memory of later rows:\n%v\nwant\n%v", kept, want)
	}
}
