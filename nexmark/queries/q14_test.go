package queries

import (
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

func TestQ14(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		var want []Q14Result
		for _, b := range d.bids {
			// 0.908 * price in (1 000 000, 50 000 000), exactly.
			if b.Price*908 <= 1_000_000*1000 || b.Price*908 >= 50_000_000*1000 {
				continue
			}
			h := time.UnixMilli(b.DateTime).UTC().Hour()
			typ := "otherTime"
			if h >= 8 && h <= 18 {
				typ = "dayTime"
			} else if h <= 6 || h >= 20 {
				typ = "nightTime"
			}
			want = append(want, Q14Result{b.Auction, b.Bidder, Decimal3(b.Price * 908), typ, Time(b.DateTime), b.Extra,
				int64(strings.Count(b.Extra, "c"))})
		}
		nonEmpty(t, want, 100)
		got := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q14Result] { return Q14(env, cfg) })
		sameMultiset(t, got, want)
	})
}

func TestBidTimeType(t *testing.T) {
	want := []string{
		"nightTime", "nightTime", "nightTime", "nightTime", "nightTime", "nightTime", "nightTime", // 0-6
		"otherTime",                                                                                                             // 7
		"dayTime", "dayTime", "dayTime", "dayTime", "dayTime", "dayTime", "dayTime", "dayTime", "dayTime", "dayTime", "dayTime", // 8-18
		"otherTime",                                        // 19
		"nightTime", "nightTime", "nightTime", "nightTime", // 20-23
	}
	for h, w := range want {
		ms := nexmark.DefaultBaseTime + int64(h)*msPerHour + 59*msPerMinute
		if got := bidTimeType(hourOf(ms)); got != w {
			t.Errorf("hour %d: %s, want %s", h, got, w)
		}
	}
	if hourOf(-1) != 23 {
		t.Errorf("hourOf(-1) = %d", hourOf(-1))
	}
}
