package queries

import (
	"encoding/json"
	"math/big"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

func TestQ1(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		var want []Q1Result
		for _, b := range d.bids {
			// 0.908 * price, exactly, as a decimal with three places.
			r := new(big.Rat).Mul(big.NewRat(908, 1000), new(big.Rat).SetInt64(b.Price))
			thousandths := new(big.Rat).Mul(r, big.NewRat(1000, 1))
			if !thousandths.IsInt() {
				t.Fatalf("0.908*%d has more than three decimals", b.Price)
			}
			want = append(want, Q1Result{b.Auction, b.Bidder, Decimal3(thousandths.Num().Int64()), Time(b.DateTime), b.Extra})
		}
		nonEmpty(t, want, 1000)
		got := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q1Result] { return Q1(env, cfg) })
		sameMultiset(t, got, want)
	})
}

func TestQ1JSON(t *testing.T) {
	r := Q1Result{Auction: 1, Bidder: 2, Price: euros(12345), DateTime: Time(nexmark.DefaultBaseTime + 1), Extra: "x"}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"auction":1,"bidder":2,"price":11209.260,"dateTime":"2026-01-01T00:00:00.001Z","extra":"x"}`
	if string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	if s := Decimal3(-5).String(); s != "-0.005" {
		t.Errorf("Decimal3(-5) = %s", s)
	}
}
