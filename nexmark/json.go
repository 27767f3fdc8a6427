package nexmark

import (
	"io"
	"math/bits"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// AppendJSON appends e to dst as one JSON object in the shape of the
// reference DDL and returns the extended slice. No newline is appended.
//
//	{"event_type":2,"person":null,"auction":null,"bid":{"auction":1000,...}}
//
// The record selected by e.Type is written; the other two are null (a Type
// other than PersonEvent and AuctionEvent is written as a bid). Field
// names are the reference's (id, name, emailAddress, creditCard, city, state,
// dateTime, extra / id, itemName, description, initialBid, reserve, dateTime,
// expires, seller, category, extra / auction, bidder, price, channel, url,
// dateTime, extra). Times are RFC 3339 strings in UTC with milliseconds, such
// as "2026-01-01T00:00:00.000Z". Strings are escaped as JSON requires, and
// invalid UTF-8 is replaced by U+FFFD.
func AppendJSON(dst []byte, e *Event) []byte {
	switch e.Type {
	case PersonEvent:
		p := &e.Person
		dst = append(dst, `{"event_type":0,"person":{"id":`...)
		dst = strconv.AppendInt(dst, p.ID, 10)
		dst = append(dst, `,"name":`...)
		dst = appendJSONString(dst, p.Name)
		dst = append(dst, `,"emailAddress":`...)
		dst = appendJSONString(dst, p.EmailAddress)
		dst = append(dst, `,"creditCard":`...)
		dst = appendJSONString(dst, p.CreditCard)
		dst = append(dst, `,"city":`...)
		dst = appendJSONString(dst, p.City)
		dst = append(dst, `,"state":`...)
		dst = appendJSONString(dst, p.State)
		dst = append(dst, `,"dateTime":"`...)
		dst = appendTimestamp(dst, p.DateTime)
		dst = append(dst, `","extra":`...)
		dst = appendJSONString(dst, p.Extra)
		return append(dst, `},"auction":null,"bid":null}`...)
	case AuctionEvent:
		a := &e.Auction
		dst = append(dst, `{"event_type":1,"person":null,"auction":{"id":`...)
		dst = strconv.AppendInt(dst, a.ID, 10)
		dst = append(dst, `,"itemName":`...)
		dst = appendJSONString(dst, a.ItemName)
		dst = append(dst, `,"description":`...)
		dst = appendJSONString(dst, a.Description)
		dst = append(dst, `,"initialBid":`...)
		dst = strconv.AppendInt(dst, a.InitialBid, 10)
		dst = append(dst, `,"reserve":`...)
		dst = strconv.AppendInt(dst, a.Reserve, 10)
		dst = append(dst, `,"dateTime":"`...)
		dst = appendTimestamp(dst, a.DateTime)
		dst = append(dst, `","expires":"`...)
		dst = appendTimestamp(dst, a.Expires)
		dst = append(dst, `","seller":`...)
		dst = strconv.AppendInt(dst, a.Seller, 10)
		dst = append(dst, `,"category":`...)
		dst = strconv.AppendInt(dst, a.Category, 10)
		dst = append(dst, `,"extra":`...)
		dst = appendJSONString(dst, a.Extra)
		return append(dst, `},"bid":null}`...)
	default:
		b := &e.Bid
		dst = append(dst, `{"event_type":2,"person":null,"auction":null,"bid":{"auction":`...)
		dst = strconv.AppendInt(dst, b.Auction, 10)
		dst = append(dst, `,"bidder":`...)
		dst = strconv.AppendInt(dst, b.Bidder, 10)
		dst = append(dst, `,"price":`...)
		dst = strconv.AppendInt(dst, b.Price, 10)
		dst = append(dst, `,"channel":`...)
		dst = appendJSONString(dst, b.Channel)
		dst = append(dst, `,"url":`...)
		dst = appendJSONString(dst, b.URL)
		dst = append(dst, `,"dateTime":"`...)
		dst = appendTimestamp(dst, b.DateTime)
		dst = append(dst, `","extra":`...)
		dst = appendJSONString(dst, b.Extra)
		return append(dst, `}}`...)
	}
}

var jsonBufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// WriteJSON writes e to w as AppendJSON formats it, followed by a newline, so
// that a sequence of calls produces JSON Lines.
func WriteJSON(w io.Writer, e *Event) error {
	bp := jsonBufPool.Get().(*[]byte)
	b := append(AppendJSON((*bp)[:0], e), '\n')
	_, err := w.Write(b)
	*bp = b
	jsonBufPool.Put(bp)
	return err
}

// jsonSafe[c] reports whether byte c can appear unescaped in a JSON string.
var jsonSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a quoted JSON string.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	i := 0
	for i < len(s) {
		// Skip eight safe bytes at a time.
		for i+8 <= len(s) {
			m := needsEscape8(load64(s, i))
			if m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if jsonSafe[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// load64 returns the eight bytes of s at i as a little-endian word (the
// compiler turns this into a single load).
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// needsEscape8 returns a word whose lowest set bit lies in the first byte of
// x that is a control character, '"', '\\' or not ASCII, or 0 if there is
// none. Bits above the first flagged byte may be spurious.
func needsEscape8(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	ctl := (x - 0x20*ones) &^ x
	quote := x ^ '"'*ones
	quote = (quote - ones) &^ quote
	bslash := x ^ '\\'*ones
	bslash = (bslash - ones) &^ bslash
	return (ctl | quote | bslash | x) & highs
}

// appendTimestamp appends ms (milliseconds since the Unix epoch) as
// "YYYY-MM-DDTHH:MM:SS.mmmZ" in UTC.
func appendTimestamp(dst []byte, ms int64) []byte {
	days := ms / 86_400_000
	rem := ms % 86_400_000
	if rem < 0 {
		days--
		rem += 86_400_000
	}
	var y, m, d int64
	if c := lastDay.Load(); days >= 0 && c>>32 == uint64(days)+1 {
		y, m, d = int64(c>>9&0x3fff), int64(c>>5&0xf), int64(c&0x1f)
	} else {
		y, m, d = civilFromDays(days)
		if days >= 0 && y <= 9999 {
			lastDay.Store((uint64(days)+1)<<32 | uint64(y)<<9 | uint64(m)<<5 | uint64(d))
		}
	}
	if y < 0 || y > 9999 {
		// Outside what RFC 3339 can express; let the time package decide.
		return time.UnixMilli(ms).UTC().AppendFormat(dst, "2006-01-02T15:04:05.000Z07:00")
	}
	sec := rem / 1000
	milli := rem % 1000
	h, mi, s := sec/3600, sec/60%60, sec%60
	return append(dst,
		byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+m/10), byte('0'+m%10), '-',
		byte('0'+d/10), byte('0'+d%10), 'T',
		byte('0'+h/10), byte('0'+h%10), ':',
		byte('0'+mi/10), byte('0'+mi%10), ':',
		byte('0'+s/10), byte('0'+s%10), '.',
		byte('0'+milli/100), byte('0'+milli/10%10), byte('0'+milli%10), 'Z')
}

// lastDay caches the date of the last day appendTimestamp converted, packed
// as (days+1)<<32 | year<<9 | month<<5 | day, since consecutive events almost
// always fall on the same day. Its zero value matches no day.
var lastDay atomic.Uint64

// civilFromDays converts days since 1970-01-01 to a proleptic Gregorian date
// (Howard Hinnant's algorithm).
func civilFromDays(z int64) (year, month, day int64) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day = doy - (153*mp+2)/5 + 1
	month = mp + 3
	if mp >= 10 {
		month = mp - 9
	}
	year = yoe + era*400
	if month <= 2 {
		year++
	}
	return year, month, day
}

// daysFromCivil converts a proleptic Gregorian date to days since 1970-01-01.
func daysFromCivil(year, month, day int64) int64 {
	if month <= 2 {
		year--
	}
	era := year / 400
	if year < 0 && year%400 != 0 {
		era--
	}
	yoe := year - era*400
	mp := month - 3
	if month <= 2 {
		mp = month + 9
	}
	doy := (153*mp+2)/5 + day - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
