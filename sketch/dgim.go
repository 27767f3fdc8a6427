package sketch

import (
	"fmt"
	"math/bits"
)

const dgimVersion = 1

// DGIM counts the 1s among the last N bits of a bit stream (Datar, Gionis,
// Indyk and Motwani 2002) in O(r·log² N) bits. Each bucket records the time
// of its newest 1 and a power-of-two size. Every 1 is in exactly one bucket,
// sizes never decrease going back in time, and there are at most r buckets
// of each size: a new 1 makes a size-1 bucket, and whenever r+1 buckets
// share a size the two oldest merge into one of double size, cascading
// upward. A bucket is dropped once its time leaves the window.
//
// A query sums the buckets inside the window and counts half of the oldest
// one. With r = 2 (the classic "one or two of each size") the relative error
// is at most 50%; in general the absolute error is at most
// count/(2(r−1)) + 1.
//
// Timestamps are kept as absolute uint64 counts rather than modulo N.
// DGIM summaries of different streams do not merge.
type DGIM struct {
	window  uint64
	r       int
	now     uint64
	buckets []dgimBucket // oldest first
}

type dgimBucket struct {
	ts   uint64 // time of the bucket's newest 1
	size uint64 // a power of two
}

// NewDGIM returns an empty counter over the last window bits that keeps at
// most r buckets of each size. It panics unless window ≥ 1 and r ≥ 2.
func NewDGIM(window uint64, r int) *DGIM {
	if window < 1 || r < 2 {
		panic(fmt.Sprintf("sketch: DGIM needs window ≥ 1 and r ≥ 2, got window=%d r=%d", window, r))
	}
	return &DGIM{window: window, r: r}
}

// Window returns N, the window length in bits.
func (g *DGIM) Window() uint64 { return g.window }

// Time returns the number of bits added so far.
func (g *DGIM) Time() uint64 { return g.now }

// Buckets returns the number of buckets held.
func (g *DGIM) Buckets() int { return len(g.buckets) }

// Add appends one bit to the stream.
func (g *DGIM) Add(bit bool) {
	g.now++
	for len(g.buckets) > 0 && g.buckets[0].ts+g.window <= g.now {
		g.buckets = g.buckets[1:]
	}
	if !bit {
		return
	}
	g.buckets = append(g.buckets, dgimBucket{ts: g.now, size: 1})
	for size := uint64(1); ; size *= 2 {
		// Buckets of this size form a contiguous run ending at end.
		end := len(g.buckets)
		for end > 0 && g.buckets[end-1].size < size {
			end--
		}
		start := end
		for start > 0 && g.buckets[start-1].size == size {
			start--
		}
		if end-start <= g.r {
			return
		}
		// Merge the two oldest of this size; the merged bucket keeps the
		// newer timestamp.
		g.buckets[start+1] = dgimBucket{ts: g.buckets[start+1].ts, size: 2 * size}
		g.buckets = append(g.buckets[:start], g.buckets[start+1:]...)
	}
}

// Count estimates the number of 1s among the last N bits.
func (g *DGIM) Count() uint64 { return g.CountLast(g.window) }

// CountLast estimates the number of 1s among the last k bits, k ≤ N (larger
// k is treated as N).
func (g *DGIM) CountLast(k uint64) uint64 {
	k = min(k, g.window)
	var sum, oldest uint64
	for i := len(g.buckets) - 1; i >= 0; i-- {
		b := g.buckets[i]
		if b.ts+k <= g.now {
			break
		}
		sum += b.size
		oldest = b.size
	}
	return sum - oldest/2
}

// MarshalBinary encodes the counter; it implements encoding.BinaryMarshaler.
func (g *DGIM) MarshalBinary() ([]byte, error) {
	e := newEncoder(dgimVersion, tagDGIM, 24+6*len(g.buckets))
	e.uvarint(g.window)
	e.count(g.r)
	e.uvarint(g.now)
	e.count(len(g.buckets))
	for _, b := range g.buckets {
		e.uvarint(g.now - b.ts)
		e.u8(byte(bits.TrailingZeros64(b.size)))
	}
	return e.bytes(), nil
}

// UnmarshalBinary restores a counter written by MarshalBinary; it implements
// encoding.BinaryUnmarshaler. On error g is unchanged.
func (g *DGIM) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, "DGIM", dgimVersion, tagDGIM)
	window := d.uvarint()
	r := d.uvarint()
	now := d.uvarint()
	n := d.count(2)
	if d.err == nil && (window < 1 || r < 2 || r > 1<<20) {
		d.fail("window %d with r=%d", window, r)
	}
	if d.err != nil {
		return d.err
	}
	bs := make([]dgimBucket, n)
	for i := range bs {
		age := d.uvarint()
		lg := d.u8()
		if d.err != nil {
			break
		}
		if age >= window || age > now || lg > 63 {
			d.fail("bucket %d of age %d and log-size %d", i, age, lg)
			break
		}
		bs[i] = dgimBucket{ts: now - age, size: 1 << lg}
		if i > 0 && (bs[i].ts <= bs[i-1].ts || bs[i].size > bs[i-1].size) {
			d.fail("bucket %d out of order", i)
			break
		}
	}
	if err := d.finish(); err != nil {
		return err
	}
	*g = DGIM{window: window, r: int(r), now: now, buckets: bs}
	return nil
}
