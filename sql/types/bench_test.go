package types

import (
	"fmt"
	"testing"
)

// bidType is a Nexmark bid: auction, bidder, price BIGINT, dateTime
// TIMESTAMP(3), channel, url, extra STRING.
var bidType = MustRowType(
	F("auction", BigInt().NotNull()),
	F("bidder", BigInt().NotNull()),
	F("price", BigInt().NotNull()),
	F("dateTime", TimestampType(3).NotNull()),
	F("channel", String()),
	F("url", String()),
	F("extra", String()),
)

const (
	bidChannel = "Google"
	bidURL     = "https://www.nexmark.com/wnu/bbrf/kpoz/item.htm?query=1"
	bidExtra   = ""
)

// BenchmarkBidBuild writes Nexmark bid rows into an arena: the cost of
// making one row of the relational operators' input (target well under 30
// ns and 0 allocations per row, the arena's chunks amortised).
func BenchmarkBidBuild(b *testing.B) { benchBidBuild(b, 0) }

// BenchmarkBidBuildChunk is BenchmarkBidBuild with arena chunks of 16 KiB
// to 1 MiB: larger chunks mean fewer large allocations per row.
func BenchmarkBidBuildChunk(b *testing.B) {
	for _, kib := range []int{16, 64, 256, 1024} {
		b.Run(fmt.Sprintf("chunk=%dKiB", kib), func(b *testing.B) { benchBidBuild(b, kib<<10) })
	}
}

func benchBidBuild(b *testing.B, chunk int) {
	arena := NewArena(chunk)
	w := NewRowWriter(bidType, arena)
	b.ReportAllocs()
	var sink Row
	for i := 0; b.Loop(); i++ {
		w.SetInt64(0, int64(1000+i&1023))
		w.SetInt64(1, int64(i))
		w.SetInt64(2, int64(i*7))
		w.SetTimestampMillis(3, 1436947200000+int64(i))
		w.SetString(4, bidChannel)
		w.SetString(5, bidURL)
		w.SetString(6, bidExtra)
		sink = w.Finish()
	}
	_ = sink
}

// BenchmarkBidRead reads every field of a bid row back with the typed
// accessors.
func BenchmarkBidRead(b *testing.B) {
	arena := NewArena(0)
	w := NewRowWriter(bidType, arena)
	rows := make([]Row, 1024)
	for i := range rows {
		w.SetInt64(0, int64(1000+i))
		w.SetInt64(1, int64(i))
		w.SetInt64(2, int64(i*7))
		w.SetTimestampMillis(3, 1436947200000+int64(i))
		w.SetString(4, bidChannel)
		w.SetString(5, bidURL)
		w.SetString(6, bidExtra)
		rows[i] = w.Finish()
	}
	b.ReportAllocs()
	var sum int64
	var n int
	for i := 0; b.Loop(); i++ {
		r := rows[i&1023]
		sum += r.Int64(0) + r.Int64(1) + r.Int64(2) + r.TimestampMillis(3)
		if !r.IsNull(4) {
			n += len(r.String(4))
		}
		if !r.IsNull(5) {
			n += len(r.String(5))
		}
		if !r.IsNull(6) {
			n += len(r.String(6))
		}
	}
	if sum == 42 && n == 42 {
		b.Log(sum, n)
	}
}

// BenchmarkBidKey encodes and hashes a (auction, channel) key of bid rows.
func BenchmarkBidKey(b *testing.B) {
	arena := NewArena(0)
	r := MustBuildRow(bidType, arena, int64(1001), int64(7), int64(5), Timestamp{Millis: 1}, bidChannel, bidURL, "")
	k := NewKeyEncoder(bidType, 0, 4)
	b.Run("key", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = k.Key(r)
		}
	})
	b.Run("hash", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = k.Hash(r)
		}
	})
}

// BenchmarkBidJSON decodes and encodes a bid as JSON.
func BenchmarkBidJSON(b *testing.B) {
	data := []byte(`{"auction": 1001, "bidder": 2001, "price": 5000, "dateTime": "2015-07-15 08:00:00.001", "channel": "Google", "url": "https://www.nexmark.com/wnu/bbrf/kpoz/item.htm?query=1", "extra": ""}`)
	dec, err := NewJSONDecoder(bidType, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := dec.Decode(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	r, _ := dec.Decode(data)
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf, _ = AppendJSON(buf[:0], bidType, r, nil)
		}
	})
}
