package plan

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/eddystream/eddy/sql/types"
)

// TestKeepsResult folds random rows into random aggregations and checks
// KeepsResult against the results before and after each row: a row it
// says keeps the result must leave it equal, and for aggregations of MIN
// and MAX calls alone, every row that leaves it equal must be said to.
// Half of the aggregations take rows back too (MIN and MAX then keep
// their values in views).
func TestKeepsResult(t *testing.T) {
	bi := types.BigInt()
	dec := types.DecimalType(10, 2)
	ts := types.TimestampType(3)
	cols := []types.Field{
		types.F("i", bi), types.F("f", types.Double()), types.F("s", types.String()),
		types.F("d", dec), types.F("t", ts), types.F("p", types.Boolean()),
	}
	pre := types.MustRowType(cols...)
	type spec struct {
		name   string
		arg    int
		filter bool
	}
	extrema := []spec{{"MAX", 0, false}, {"MIN", 0, false}, {"MAX", 1, false}, {"MIN", 1, false}, {"MAX", 2, false},
		{"MIN", 2, false}, {"MAX", 3, false}, {"MIN", 3, false}, {"MAX", 4, false}, {"MIN", 4, false}, {"MAX", 0, true}, {"MIN", 2, true}}
	others := []spec{{"COUNT", -1, false}, {"COUNT", 0, false}, {"SUM", 0, false}, {"SUM", 0, true}, {"AVG", 1, false}, {"FIRST_VALUE", 2, false}}
	rng := rand.New(rand.NewSource(7))
	row := func() types.Row {
		w := types.NewRowWriter(pre, types.NewArena(0))
		for i := range cols {
			if rng.Intn(6) == 0 {
				w.SetNull(i)
				continue
			}
			n := rng.Int63n(20) - 10
			switch i {
			case 0:
				w.SetInt64(i, n)
			case 1:
				f := float64(n) / 4
				if rng.Intn(15) == 0 {
					f = math.NaN()
				}
				w.SetFloat64(i, f)
			case 2:
				w.SetString(i, fmt.Sprint("v", n))
			case 3:
				if err := w.SetDecimal(i, types.NewDecimal(n*37, 2)); err != nil {
					t.Fatal(err)
				}
			case 4:
				w.SetTimestampMillis(i, n*1000)
			case 5:
				w.SetBool(i, n%2 == 0)
			}
		}
		return w.Finish()
	}
	kept, total := 0, 0
	for iter := 0; iter < 300; iter++ {
		onlyExtrema := iter%2 == 0
		retract := iter%4 >= 2
		var calls []*aggCall
		for k := 1 + rng.Intn(4); k > 0; k-- {
			s := extrema[rng.Intn(len(extrema))]
			if !onlyExtrema && rng.Intn(3) == 0 {
				s = others[rng.Intn(len(others))]
			}
			c := &aggCall{Name: s.name, Arg: s.arg, Filter: -1, text: fmt.Sprintf("%s(%d)", s.name, s.arg)}
			if s.arg < 0 {
				c.Star, c.T = true, bi.NotNull()
			} else {
				c.ArgType = pre.FieldType(s.arg)
				c.T = c.ArgType
				switch s.name {
				case "COUNT":
					c.T = bi.NotNull()
				case "AVG":
					c.T = types.Double()
				case "SUM":
					c.T = bi
				}
			}
			if s.filter {
				c.Filter = 5
			}
			calls = append(calls, c)
		}
		f, err := newSQLAgg(calls, pre, retract)
		if err != nil {
			t.Fatal(err)
		}
		star := false
		for _, c := range calls {
			star = star || c.Star
		}
		if f.mayKeep == star {
			t.Fatalf("%v: mayKeep is %v", calls, f.mayKeep)
		}
		result := func(acc Acc) string {
			return types.FormatRow(f.rt, types.NewKeyEncoder(f.rt, seq(f.rt.Len())...).KeyRow(f.Result(acc)))
		}
		acc := f.Create()
		views := newMapViews()
		views.retracts = retract
		var held []types.Row
		for n := 0; n < 40; n++ {
			if retract && len(held) > 0 && rng.Intn(3) == 0 {
				j := rng.Intn(len(held))
				acc = f.RetractInPlace(acc, held[j], views, 0)
				held = append(held[:j], held[j+1:]...)
				continue
			}
			in := row()
			held = append(held, in)
			before := result(acc)
			keeps := f.KeepsResult(acc, in)
			acc = f.AddInPlace(acc, in, views, 0)
			after := result(acc)
			total++
			if keeps {
				kept++
			}
			if keeps && after != before {
				t.Fatalf("%v: row %s said to keep the result %s, which became %s", calls, types.FormatRow(pre, in), before, after)
			}
			if onlyExtrema && !keeps && after == before {
				t.Fatalf("%v: row %s kept the result %s, but KeepsResult says it does not", calls, types.FormatRow(pre, in), before)
			}
		}
	}
	if kept == 0 || kept == total {
		t.Fatalf("KeepsResult said true for %d of %d rows", kept, total)
	}
}
