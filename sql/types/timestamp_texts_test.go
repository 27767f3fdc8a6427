package types

import (
	"math/rand/v2"
	"testing"
)

// TestTimestampTexts checks that TimestampTexts writes what AppendFormat
// writes, for timestamps that step forward within a second and across
// seconds, jump back, fall before the epoch, and have nanoseconds, at
// every precision.
func TestTimestampTexts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var c TimestampTexts
	ts := Timestamp{Millis: 1_700_000_000_000}
	for i := 0; i < 200000; i++ {
		switch rng.IntN(8) {
		case 0:
			ts.Millis = rng.Int64N(8_000_000_000_000) - 4_000_000_000_000
		case 1:
			ts.Millis = -rng.Int64N(5_000)
		case 2:
			ts.Millis -= rng.Int64N(3_000)
		default:
			ts.Millis += rng.Int64N(400)
		}
		ts.NanoOfMilli = 0
		if rng.IntN(4) == 0 {
			ts.NanoOfMilli = int32(rng.IntN(1_000_000))
		}
		p := rng.IntN(10)
		if got, want := string(c.AppendFormat([]byte("x"), ts, p)), "x"+ts.Format(p); got != want {
			t.Fatalf("%+v at precision %d: %q, want %q", ts, p, got, want)
		}
	}
}
