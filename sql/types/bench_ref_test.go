package types

import (
	"strings"
	"testing"
)

// q0Type is the row of Nexmark q0: a bid's auction, bidder, price,
// dateTime and extra.
var q0Type = MustRowType(
	F("auction", BigInt()),
	F("bidder", BigInt()),
	F("price", BigInt()),
	F("dateTime", TimestampType(3)),
	F("extra", String()),
)

// BenchmarkBidRowRef writes q0's rows as a source does: strings kept by
// reference (SetStringRef), into scratch memory that each row reuses.
func BenchmarkBidRowRef(b *testing.B) {
	extra := strings.Repeat("x", 60)
	w := NewRowWriter(q0Type, NewScratchArena())
	b.ReportAllocs()
	var sink Row
	for i := 0; b.Loop(); i++ {
		w.Reset()
		w.SetInt64(0, int64(1000+i&1023))
		w.SetInt64(1, int64(i))
		w.SetInt64(2, int64(i*7))
		w.SetTimestampMillis(3, 1436947200000+int64(i))
		w.SetStringRef(4, extra[:40+i&15])
		sink = w.Finish()
	}
	_ = sink
}
