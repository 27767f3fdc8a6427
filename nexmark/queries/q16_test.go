package queries

import (
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

func TestQ16(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		type key struct{ channel, day string }
		groups := map[key][]nexmark.Bid{}
		maxMinute := map[key]string{}
		for _, b := range d.bids {
			ts := time.UnixMilli(b.DateTime).UTC()
			k := key{b.Channel, ts.Format("2006-01-02")}
			groups[k] = append(groups[k], b)
			if m := ts.Format("15:04"); m > maxMinute[k] {
				maxMinute[k] = m
			}
		}
		want := map[key]Q16Result{}
		for k, bids := range groups {
			s := bruteStats(bids)
			r := q16Row(Insert, k.channel, k.day, &s)
			r.Minute = maxMinute[k]
			want[k] = r
		}
		if len(want) < 100 {
			t.Fatalf("only %d groups", len(want))
		}
		log := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q16Result] { return Q16(env, cfg) })
		sameTable(t, materialize(t, log, func(r Q16Result) key { return key{r.Channel, r.Day} }), want)
	})
}
