package expr

import (
	"testing"

	"github.com/eddystream/eddy/sql/types"
)

// countingFunc is a function of one BIGINT, x * 10, that counts its
// evaluations.
func countingFunc(calls *int, volatile bool) *Func {
	return &Func{Volatile: volatile, Compile: func(c *Call, args []*Eval) (*Eval, error) {
		x := args[0].Int
		return &Eval{T: c.T, Int: func(r types.Row) (int64, bool) {
			*calls++
			v, null := x(r)
			return v * 10, null
		}}, nil
	}}
}

func TestSharedEvaluatesRepeatedCallsOncePerRow(t *testing.T) {
	rt := types.MustRowType(types.F("a", types.BigInt()), types.F("b", types.BigInt()))
	col := func(i int) Expr { return &Column{Index: i, Name: rt.Field(i).Name, T: types.BigInt()} }
	rows := []types.Row{}
	for _, v := range [][2]int64{{1, 2}, {3, 4}, {5, 6}} {
		w := types.NewRowWriter(rt, types.NewArena(0))
		w.SetInt64(0, v[0])
		w.SetInt64(1, v[1])
		rows = append(rows, w.Finish().Clone())
	}
	for _, volatile := range []bool{false, true} {
		var calls int
		fn := countingFunc(&calls, volatile)
		f := func(i int) Expr { return &Call{Name: "F", Args: []Expr{col(i)}, T: types.BigInt(), Fn: fn} }
		plus := &Func{Infix: true, Compile: func(c *Call, args []*Eval) (*Eval, error) {
			x, y := args[0].Int, args[1].Int
			return &Eval{T: c.T, Int: func(r types.Row) (int64, bool) {
				a, _ := x(r)
				b, _ := y(r)
				return a + b, false
			}}, nil
		}}
		// F(a) + F(a), F(a), and F(b), which occurs once.
		sum := &Call{Name: "+", Args: []Expr{f(0), f(0)}, T: types.BigInt(), Fn: plus}
		s := NewShared(sum, f(0), f(1))
		want := 1
		if volatile {
			want = 0
		}
		if s.Len() != want {
			t.Fatalf("volatile %v: %d shared subexpressions, want %d", volatile, s.Len(), want)
		}
		evs := make([]*Eval, 3)
		for i, e := range []Expr{sum, f(0), f(1)} {
			ev, err := s.Compile(e)
			if err != nil {
				t.Fatal(err)
			}
			evs[i] = ev
		}
		for _, r := range rows {
			s.Next()
			a, b := r.Int64(0), r.Int64(1)
			if v, _ := evs[0].Int(r); v != 20*a {
				t.Fatalf("F(a) + F(a) = %d for a = %d", v, a)
			}
			if v, _ := evs[1].Int(r); v != 10*a {
				t.Fatalf("F(a) = %d for a = %d", v, a)
			}
			if v, _ := evs[2].Int(r); v != 10*b {
				t.Fatalf("F(b) = %d for b = %d", v, b)
			}
		}
		wantCalls := 2 * len(rows) // F(a) once, F(b) once a row
		if volatile {
			wantCalls = 4 * len(rows)
		}
		if calls != wantCalls {
			t.Fatalf("volatile %v: %d evaluations over %d rows, want %d", volatile, calls, len(rows), wantCalls)
		}
	}
}

func TestSharedKeyTellsApart(t *testing.T) {
	c := func(i int, typ types.Type) Expr { return &Column{Index: i, Name: "x", T: typ} }
	fn := &Func{}
	pairs := [][2]Expr{
		{c(0, types.BigInt()), c(1, types.BigInt())}, // same name, other column
		{&Cast{X: c(0, types.BigInt()), T: types.Int()}, &Cast{X: c(0, types.BigInt()), T: types.Double()}},
		{&Cast{X: c(0, types.BigInt()), T: types.Int()}, &Cast{X: c(0, types.BigInt()), T: types.Int(), Try: true}},
		{&Call{Name: "F", Args: []Expr{c(0, types.BigInt())}, Fn: fn}, &Call{Name: "F", Args: []Expr{c(0, types.BigInt())}, Fn: &Func{}}},
		{&Literal{V: int64(1), T: types.BigInt(), Text: "1"}, &Literal{V: int64(1), T: types.Int(), Text: "1"}},
	}
	for _, p := range pairs {
		a, _ := sharedKey(p[0])
		b, _ := sharedKey(p[1])
		if a == b {
			t.Errorf("%s and %s share the key %q", p[0], p[1], a)
		}
	}
}
