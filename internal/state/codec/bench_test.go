package codec

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"testing"
)

// benchBid is a small struct shaped like a Nexmark bid.
type benchBid struct {
	Auction  int64
	Bidder   int64
	Price    int64
	Channel  string
	URL      string
	DateTime int64
	Extra    string
}

var bidValue = benchBid{1001, 2002, 123456, "Google", "https://www.nexmark.com/item.htm?query=1", 1700000000000, "xx"}

// BenchmarkCodecs compares a round trip (encode then decode) of a small
// struct by Default, encoding/gob and encoding/json. Each value must be
// decodable alone (as a state value or a key is), so gob needs a fresh
// encoder and decoder per value.
func BenchmarkCodecs(b *testing.B) {
	b.Run("default", func(b *testing.B) {
		c, err := Default[benchBid]()
		if err != nil {
			b.Fatal(err)
		}
		var buf []byte
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			buf = c.Append(buf[:0], bidValue)
			if _, _, err := c.Decode(buf); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(buf)), "bytes")
	})
	b.Run("json", func(b *testing.B) {
		c := JSON[benchBid]()
		var buf []byte
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			buf = c.Append(buf[:0], bidValue)
			if _, _, err := c.Decode(buf); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(buf)), "bytes")
	})
	b.Run("gob", func(b *testing.B) {
		var buf bytes.Buffer
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			buf.Reset()
			if err := gob.NewEncoder(&buf).Encode(bidValue); err != nil {
				b.Fatal(err)
			}
			var v benchBid
			if err := gob.NewDecoder(bytes.NewReader(buf.Bytes())).Decode(&v); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(buf.Len()), "bytes")
	})
	b.Run("gob-stream", func(b *testing.B) {
		// A shared stream sends type information once; values then cannot
		// be decoded alone, so this is a lower bound for gob, not an option.
		var buf bytes.Buffer
		enc, dec := gob.NewEncoder(&buf), gob.NewDecoder(&buf)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := enc.Encode(bidValue); err != nil {
				b.Fatal(err)
			}
			var v benchBid
			if err := dec.Decode(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json-stdlib", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			data, err := json.Marshal(bidValue)
			if err != nil {
				b.Fatal(err)
			}
			var v benchBid
			if err := json.Unmarshal(data, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDefaultCodecInt64 is the codec of the commonest key.
func BenchmarkDefaultCodecInt64(b *testing.B) {
	c, _ := Default[int64]()
	var buf []byte
	for i := 0; i < b.N; i++ {
		buf = c.Append(buf[:0], int64(i))
		if _, _, err := c.Decode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
