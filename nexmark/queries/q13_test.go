package queries

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

func TestQ13(t *testing.T) {
	for _, rows := range []int{SideInputRows, 1500} {
		t.Run(strconv.Itoa(rows)+" rows", func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "side_input.txt")
			if err := WriteSideInput(path, rows); err != nil {
				t.Fatal(err)
			}
			forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
				var want []Q13Result
				for _, b := range d.bids {
					if k := b.Auction % 10_000; k < int64(rows) {
						want = append(want, Q13Result{b.Auction, b.Bidder, b.Price, Time(b.DateTime), strconv.FormatInt(k, 10)})
					}
				}
				nonEmpty(t, want, 100)
				got := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q13Result] { return Q13(env, cfg, path) })
				sameMultiset(t, got, want)
			})
		})
	}
}

func TestQ13MissingFile(t *testing.T) {
	cfg := testConfig()
	cfg.MaxEvents = 100
	env := eddy.NewEnvironment()
	eddy.Discard(Q13(env, cfg, filepath.Join(t.TempDir(), "nothing.txt")))
	if err := env.Execute(t.Context(), "q13"); err == nil {
		t.Fatal("q13 ran without its side input")
	}
}
