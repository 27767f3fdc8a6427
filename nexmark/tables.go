package nexmark

import (
	"math"
	"math/bits"
	"strconv"
	"sync"
	"unsafe"
)

// Constants of the reference generator.
const (
	// minStringLength is the shortest random string before trimming.
	minStringLength = 3
	// personIDLead is how many not-yet-created people a bidder or seller may
	// name.
	personIDLead = 10
	// auctionIDLead is how many not-yet-created auctions a bid may name.
	auctionIDLead = 10
	// hotAuctionBatch, hotBidderBatch and hotSellerBatch: the hot key is the
	// first (bidder: second) id of the last batch of this many ids.
	hotAuctionBatch = 100
	hotBidderBatch  = 100
	hotSellerBatch  = 100
	// hotChannelsRatio makes a bid use a hot channel with probability
	// 1 - 1/hotChannelsRatio.
	hotChannelsRatio = 2
	// channelsNumber is the number of cached non-hot channels.
	channelsNumber = 10_000
	// reusableStringSize is the size of the shared pre-generated string that
	// padding is sliced from, as in the reference.
	reusableStringSize = 1 << 20
	// priceTableBits is the number of bits of the uniform draw that index
	// each of the two price tables.
	priceTableBits = 10
	// textPoolSize is the size of the random text that item names,
	// descriptions and e-mail addresses are sliced from; small enough to stay
	// in the CPU cache.
	textPoolSize = 64 << 10
	// arenaSlab is the size of the blocks person strings are written into.
	arenaSlab = 32 << 10
)

var (
	usStates = [...]string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	usCities = [...]string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland",
		"Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	firstNames = [...]string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate",
		"Julie", "Sarah", "Deiter", "Walter"}
	lastNames = [...]string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton",
		"Smith", "Jones", "Noris"}
	hotChannels = [...]string{"Google", "Facebook", "Baidu", "Apple"}
)

// channel is a cached channel name and its URL.
type channel struct{ name, url string }

// tables holds the read-only data shared by all generators. It is built once,
// on first use, from fixed seeds.
type tables struct {
	// extraPool is the reusable padding string: the reference's
	// nextExactString over 1 MiB.
	extraPool string
	// textPool is random text for names and descriptions: letters with a
	// space one time in 13, as the reference's nextString draws them.
	textPool string
	// fullNames[i*len(lastNames)+j] is firstNames[i] + " " + lastNames[j].
	fullNames [len(firstNames) * len(lastNames)]string
	// hotURLs[i] is the URL of hotChannels[i].
	hotURLs [len(hotChannels)]string
	// channels are the cached channels.
	channels [channelsNumber]channel
	// priceHi[k] is 100 · 10^(6k/2^priceTableBits) and priceLo[k] is
	// 10^(6k/2^(2·priceTableBits)).
	priceHi, priceLo [1 << priceTableBits]float64
}

var (
	sharedTablesOnce sync.Once
	sharedTables     *tables
)

// getTables returns the shared tables, building them on first use.
func getTables() *tables {
	sharedTablesOnce.Do(func() { sharedTables = buildTables() })
	return sharedTables
}

const (
	extraSalt   = 0x65787472612d3031
	textSalt    = 0x746578742d2d3031
	hotURLSalt  = 0x686f7475726c3031
	channelSalt = 0x6368616e6e656c31
)

func buildTables() *tables {
	t := new(tables)

	for k := range t.priceHi {
		t.priceHi[k] = 100 * math.Pow(10, 6*float64(k)/(1<<priceTableBits))
		t.priceLo[k] = math.Pow(10, 6*float64(k)/(1<<(2*priceTableBits)))
	}

	r := splitmix{s: extraSalt}
	extra := make([]byte, reusableStringSize)
	fillExact(&r, extra)
	t.extraPool = string(extra)

	r = splitmix{s: textSalt}
	text := make([]byte, textPoolSize)
	for i := range text {
		text[i] = randomChar(&r, ' ')
	}
	t.textPool = string(text)

	for i, f := range firstNames {
		for j, l := range lastNames {
			t.fullNames[i*len(lastNames)+j] = f + " " + l
		}
	}

	r = splitmix{s: hotURLSalt}
	for i := range t.hotURLs {
		t.hotURLs[i] = string(appendBaseURL(nil, &r))
	}

	// All cached channel names and URLs share two backing strings.
	var names, urls []byte
	nameEnd := make([]int, channelsNumber)
	urlEnd := make([]int, channelsNumber)
	for i := range channelsNumber {
		names = append(names, "channel-"...)
		names = strconv.AppendInt(names, int64(i), 10)
		nameEnd[i] = len(names)

		r := splitmix{s: mix64(uint64(i) ^ channelSalt)}
		urls = appendBaseURL(urls, &r)
		if r.intn(10) > 0 {
			urls = append(urls, "&channel_id="...)
			urls = strconv.AppendInt(urls, int64(reversedChannelID(i)), 10)
		}
		urlEnd[i] = len(urls)
	}
	allNames, allURLs := string(names), string(urls)
	nameStart, urlStart := 0, 0
	for i := range channelsNumber {
		t.channels[i] = channel{allNames[nameStart:nameEnd[i]], allURLs[urlStart:urlEnd[i]]}
		nameStart, urlStart = nameEnd[i], urlEnd[i]
	}
	return t
}

// reversedChannelID is the reference's Math.abs(Integer.reverse(i)),
// including its overflow: channel 1 reverses to MinInt32, whose absolute
// value is still MinInt32.
func reversedChannelID(i int) int32 {
	v := int32(bits.Reverse32(uint32(i)))
	if v < 0 {
		v = -v // MinInt32 stays negative, as in Java.
	}
	return v
}

// appendBaseURL appends a URL of the reference's shape:
// https://www.nexmark.com/<s>/<s>/<s>/item.htm?query=1, where each <s> is a
// random string of 3 or 4 characters with '_' one time in 13.
func appendBaseURL(dst []byte, r *splitmix) []byte {
	dst = append(dst, "https://www.nexmark.com/"...)
	for range 3 {
		n := minStringLength + int(r.intn(5-minStringLength))
		for range n {
			dst = append(dst, randomChar(r, '_'))
		}
		dst = append(dst, '/')
	}
	return append(dst, "item.htm?query=1"...)
}

// randomChar draws one character of the reference's nextString: special one
// time in 13, otherwise a lowercase letter.
func randomChar(r *splitmix, special byte) byte {
	if r.intn(13) == 0 {
		return special
	}
	return byte('a' + r.intn(26))
}

// fillExact fills b the way the reference's nextExactString does: each 32-bit
// signed draw yields six characters 'a' + rnd%26 (Java remainder, so negative
// draws give the characters 'H' to '`'), then rnd /= 26.
func fillExact(r *splitmix, b []byte) {
	var rnd int32
	n := 0
	for i := range b {
		if n == 0 {
			rnd = int32(r.next() >> 32)
			n = 6
		}
		b[i] = byte('a' + rnd%26)
		rnd /= 26
		n--
	}
}

// trimSpaces removes leading and trailing spaces, like Java's String.trim on
// the strings generated here.
func trimSpaces(s string) string {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}

// arena hands out small byte blocks carved from larger slabs, so that person
// strings cost no allocation of their own. A block must be fully written
// before it is turned into a string, and never written again.
type arena struct{ buf []byte }

func (a *arena) alloc(n int) []byte {
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, max(arenaSlab, n))
	}
	start := len(a.buf)
	a.buf = a.buf[:start+n]
	return a.buf[start : start+n : start+n]
}

// bytesToString returns a string sharing b's memory; b must not change
// afterwards.
func bytesToString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}
