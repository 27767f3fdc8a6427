package sql

import (
	"fmt"
	"testing"

	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// TestUserFunctionCalls checks the boxed calls of a ScalarFunction over
// several rows: the arguments of each call (a constant among them), NULL
// arguments with and without CallOnNull, and the typed CountChar against
// its boxed Eval.
func TestUserFunctionCalls(t *testing.T) {
	rt := types.MustRowType(types.F("s", types.String()), types.F("n", types.BigInt()))
	rows := [][]types.Value{{"abcabc", int64(1)}, {nil, int64(2)}, {"", nil}, {"cc", int64(4)}}
	for _, onNull := range []bool{false, true} {
		var seen []string
		f := ScalarFunction{
			Args: []string{"STRING", "BIGINT", "STRING"}, Result: "STRING", CallOnNull: onNull,
			Eval: func(args []any) (any, error) {
				s := fmt.Sprintf("%v|%v|%v", args...)
				seen = append(seen, s)
				return s, nil
			},
		}
		b, err := userFunction("f", f)
		if err != nil {
			t.Fatal(err)
		}
		args := []expr.Expr{
			&expr.Column{Index: 0, Name: "s", T: types.String()},
			&expr.Column{Index: 1, Name: "n", T: types.BigInt()},
			&expr.Literal{V: "k", T: types.String().NotNull()},
		}
		ev, err := expr.Compile(&expr.Call{Name: "f", Args: args, Fn: b.Func, T: types.String()})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, vals := range rows {
			r, err := types.BuildRow(rt, nil, vals...)
			if err != nil {
				t.Fatal(err)
			}
			s, null := ev.Str(r)
			if null {
				s = "NULL"
			}
			got = append(got, s)
		}
		want := "[abcabc|1|k NULL NULL cc|4|k]"
		if onNull {
			want = "[abcabc|1|k <nil>|2|k |<nil>|k cc|4|k]"
		}
		if fmt.Sprint(got) != want {
			t.Errorf("CallOnNull %v: %v, want %s (calls %q)", onNull, got, want, seen)
		}
	}

	cc := registered["com.github.nexmark.flink.udf.CountChar"]
	for _, tc := range []struct{ s, c any }{{"abcabc", "c"}, {"abcabc", "bc"}, {"abc", ""}, {nil, "c"}, {"c", nil}, {"", "c"}} {
		args := []expr.Expr{&expr.Literal{V: tc.s, T: types.String()}, &expr.Literal{V: tc.c, T: types.String()}}
		ev, err := expr.Compile(&expr.Call{Name: "count_char", Args: args, Fn: cc.Func, T: types.BigInt()})
		if err != nil {
			t.Fatal(err)
		}
		n, null := ev.Int(types.Row{})
		got := any(n)
		if null {
			got = nil
		}
		var want any
		if tc.s != nil && tc.c != nil {
			if want, err = countCharFunction.Eval([]any{tc.s, tc.c}); err != nil {
				t.Fatal(err)
			}
		}
		if got != want {
			t.Errorf("count_char(%v, %v) = %v, want %v", tc.s, tc.c, got, want)
		}
	}
}
