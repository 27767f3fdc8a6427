package nexmark

import (
	"bytes"
	"fmt"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// ParseJSON parses one JSON object in the shape AppendJSON writes and stores
// it in e, overwriting all of e. Whitespace and key order are free, unknown
// keys are ignored, and the records not selected by event_type may be null or
// absent. Times may be RFC 3339 strings (a space may replace the "T", and a
// missing zone means UTC) or integers of milliseconds since the Unix epoch.
// Errors name the offending field, such as "bid.price".
func ParseJSON(data []byte, e *Event) error {
	*e = Event{}
	p := jsonParser{data: data}
	eventType := int64(-1)
	var have [3]bool
	err := p.object("event", func(key string) error {
		var err error
		switch key {
		case "event_type":
			eventType, err = p.integer("event_type")
			if err == nil && (eventType < 0 || eventType > 2) {
				err = p.fail("event_type", "is %d; want 0 (person), 1 (auction) or 2 (bid)", eventType)
			}
		case "person":
			if !p.null() {
				have[PersonEvent] = true
				err = p.person(&e.Person)
			}
		case "auction":
			if !p.null() {
				have[AuctionEvent] = true
				err = p.auction(&e.Auction)
			}
		case "bid":
			if !p.null() {
				have[BidEvent] = true
				err = p.bid(&e.Bid)
			}
		default:
			err = p.skip(key)
		}
		return err
	})
	if err != nil {
		return err
	}
	p.ws()
	if p.pos != len(p.data) {
		return p.fail("event", "unexpected data after the object")
	}
	if eventType < 0 {
		return fmt.Errorf("nexmark: JSON field %q is missing", "event_type")
	}
	e.Type = EventType(eventType)
	if !have[e.Type] {
		return fmt.Errorf("nexmark: JSON field %q is missing or null but event_type is %d", e.Type.String(), eventType)
	}
	return nil
}

// jsonParser is a small scanner for the Nexmark event objects.
type jsonParser struct {
	data []byte
	pos  int
}

func (p *jsonParser) fail(field, format string, args ...any) error {
	return fmt.Errorf("nexmark: JSON field %q: %s (at byte %d)", field, fmt.Sprintf(format, args...), p.pos)
}

func (p *jsonParser) ws() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte, or 0 at the end.
func (p *jsonParser) peek() byte {
	p.ws()
	if p.pos < len(p.data) {
		return p.data[p.pos]
	}
	return 0
}

// null consumes a null literal if one comes next.
func (p *jsonParser) null() bool {
	if p.peek() == 'n' && bytes.HasPrefix(p.data[p.pos:], []byte("null")) {
		p.pos += 4
		return true
	}
	return false
}

// object parses an object, calling member for each key with the parser
// positioned at the value.
func (p *jsonParser) object(field string, member func(key string) error) error {
	if p.peek() != '{' {
		return p.fail(field, "expected an object")
	}
	p.pos++
	if p.peek() == '}' {
		p.pos++
		return nil
	}
	for {
		if p.peek() != '"' {
			return p.fail(field, "expected a quoted key")
		}
		key, err := p.rawString(field)
		if err != nil {
			return err
		}
		if p.peek() != ':' {
			return p.fail(field, "expected ':' after key %q", key)
		}
		p.pos++
		if err := member(key); err != nil {
			return err
		}
		switch p.peek() {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return nil
		default:
			return p.fail(field, "expected ',' or '}'")
		}
	}
}

// str parses a JSON string value.
func (p *jsonParser) str(field string) (string, error) {
	if p.peek() != '"' {
		return "", p.fail(field, "expected a string")
	}
	return p.rawString(field)
}

// rawString parses the string starting at the opening quote at p.pos.
func (p *jsonParser) rawString(field string) (string, error) {
	p.pos++ // opening quote
	start := p.pos
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			s := string(p.data[start:p.pos])
			p.pos++
			return s, nil
		case c == '\\':
			return p.escapedString(field, start)
		case c < 0x20:
			return "", p.fail(field, "control character 0x%02x in string", c)
		}
		p.pos++
	}
	return "", p.fail(field, "unterminated string")
}

// escapedString finishes a string that contains escapes; p.pos is at the
// first backslash and start at the first character of the string.
func (p *jsonParser) escapedString(field string, start int) (string, error) {
	buf := append([]byte(nil), p.data[start:p.pos]...)
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(buf), nil
		case c < 0x20:
			return "", p.fail(field, "control character 0x%02x in string", c)
		case c != '\\':
			buf = append(buf, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.data) {
			break
		}
		esc := p.data[p.pos+1]
		p.pos += 2
		switch esc {
		case '"', '\\', '/':
			buf = append(buf, esc)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.fail(field, "invalid \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
					save := p.pos
					p.pos += 2
					if lo, ok := p.hex4(); ok && utf16.DecodeRune(r, lo) != utf8.RuneError {
						r2 = utf16.DecodeRune(r, lo)
					} else {
						p.pos = save
					}
				}
				r = r2
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", p.fail(field, "invalid escape \\%c", esc)
		}
	}
	return "", p.fail(field, "unterminated string")
}

// hex4 parses four hex digits at p.pos.
func (p *jsonParser) hex4() (rune, bool) {
	if p.pos+4 > len(p.data) {
		return 0, false
	}
	var r rune
	for _, c := range p.data[p.pos : p.pos+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}

// integer parses a JSON number that must be an int64.
func (p *jsonParser) integer(field string) (int64, error) {
	p.ws()
	start := p.pos
	neg := false
	if p.pos < len(p.data) && p.data[p.pos] == '-' {
		neg = true
		p.pos++
	}
	var v uint64
	digits := 0
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		if v > (1<<63)/10 {
			p.pos = start
			return 0, p.fail(field, "integer out of range")
		}
		v = v*10 + uint64(p.data[p.pos]-'0')
		if v > 1<<63 {
			p.pos = start
			return 0, p.fail(field, "integer out of range")
		}
		p.pos++
		digits++
	}
	if digits == 0 || (p.pos < len(p.data) && strings.IndexByte(".eE", p.data[p.pos]) >= 0) {
		p.pos = start
		return 0, p.fail(field, "expected an integer")
	}
	if neg {
		return -int64(v), nil
	}
	if v > 1<<63-1 {
		p.pos = start
		return 0, p.fail(field, "integer out of range")
	}
	return int64(v), nil
}

// timestamp parses an event time into milliseconds since the Unix epoch.
func (p *jsonParser) timestamp(field string) (int64, error) {
	if c := p.peek(); c == '-' || (c >= '0' && c <= '9') {
		return p.integer(field)
	}
	start := p.pos
	s, err := p.str(field)
	if err != nil {
		return 0, err
	}
	if ms, ok := parseTimestamp(s); ok {
		return ms, nil
	}
	p.pos = start
	return 0, p.fail(field, "invalid time %q; want RFC 3339 such as 2026-01-01T00:00:00.000Z", s)
}

// parseTimestamp parses the RFC 3339 forms described at ParseJSON.
func parseTimestamp(s string) (int64, bool) {
	// Fast path: exactly what appendTimestamp writes.
	if len(s) == 24 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' &&
		s[16] == ':' && s[19] == '.' && s[23] == 'Z' {
		var v [7]int64
		var ok = true
		num := func(i, n int) int64 {
			var x int64
			for _, c := range []byte(s[i : i+n]) {
				if c < '0' || c > '9' {
					ok = false
				}
				x = x*10 + int64(c-'0')
			}
			return x
		}
		v[0], v[1], v[2] = num(0, 4), num(5, 2), num(8, 2)
		v[3], v[4], v[5], v[6] = num(11, 2), num(14, 2), num(17, 2), num(20, 3)
		if ok && v[1] >= 1 && v[1] <= 12 && v[2] >= 1 && v[2] <= 31 && v[3] < 24 && v[4] < 60 && v[5] < 60 {
			days := daysFromCivil(v[0], v[1], v[2])
			if y, m, d := civilFromDays(days); y == v[0] && m == v[1] && d == v[2] { // not Feb 30
				return ((days*24+v[3])*60+v[4])*60_000 + v[5]*1000 + v[6], true
			}
		}
	}
	if len(s) > 10 && s[10] == ' ' {
		s = s[:10] + "T" + s[11:]
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UnixMilli(), true
	}
	if t, err := time.Parse("2006-01-02T15:04:05.999999999", s); err == nil {
		return t.UnixMilli(), true
	}
	return 0, false
}

// skip skips one value of any kind.
func (p *jsonParser) skip(field string) error {
	switch c := p.peek(); {
	case c == '{':
		return p.object(field, func(string) error { return p.skip(field) })
	case c == '[':
		p.pos++
		if p.peek() == ']' {
			p.pos++
			return nil
		}
		for {
			if err := p.skip(field); err != nil {
				return err
			}
			switch p.peek() {
			case ',':
				p.pos++
			case ']':
				p.pos++
				return nil
			default:
				return p.fail(field, "expected ',' or ']'")
			}
		}
	case c == '"':
		_, err := p.rawString(field)
		return err
	case c == 'n' || c == 't' || c == 'f' || c == '-' || (c >= '0' && c <= '9'):
		for p.pos < len(p.data) && strings.IndexByte(",}] \t\r\n", p.data[p.pos]) < 0 {
			p.pos++
		}
		return nil
	default:
		return p.fail(field, "expected a value")
	}
}

// fields tracks which required members of a record were seen.
type fields struct {
	names []string // qualified names, such as "bid.price"
	seen  uint32
}

func (f *fields) set(i int) { f.seen |= 1 << i }

func (f *fields) check() error {
	for i, n := range f.names {
		if f.seen&(1<<i) == 0 {
			return fmt.Errorf("nexmark: JSON field %q is missing", n)
		}
	}
	return nil
}

// field returns the index of key in f.names, or -1.
func (f *fields) field(key string) int {
	for i, n := range f.names {
		if len(n) == len(f.prefix())+len(key) && n[len(f.prefix()):] == key {
			return i
		}
	}
	return -1
}

// prefix returns the record name and dot that start every name.
func (f *fields) prefix() string {
	return f.names[0][:strings.IndexByte(f.names[0], '.')+1]
}

var (
	personFields = []string{"person.id", "person.name", "person.emailAddress", "person.creditCard",
		"person.city", "person.state", "person.dateTime", "person.extra"}
	auctionFields = []string{"auction.id", "auction.itemName", "auction.description", "auction.initialBid",
		"auction.reserve", "auction.dateTime", "auction.expires", "auction.seller", "auction.category", "auction.extra"}
	bidFields = []string{"bid.auction", "bid.bidder", "bid.price", "bid.channel", "bid.url", "bid.dateTime", "bid.extra"}
)

func (p *jsonParser) person(r *Person) error {
	f := fields{names: personFields}
	err := p.object("person", func(key string) error {
		i := f.field(key)
		if i < 0 {
			return p.skip("person")
		}
		f.set(i)
		name := f.names[i]
		var err error
		switch key {
		case "id":
			r.ID, err = p.integer(name)
		case "name":
			r.Name, err = p.str(name)
		case "emailAddress":
			r.EmailAddress, err = p.str(name)
		case "creditCard":
			r.CreditCard, err = p.str(name)
		case "city":
			r.City, err = p.str(name)
		case "state":
			r.State, err = p.str(name)
		case "dateTime":
			r.DateTime, err = p.timestamp(name)
		case "extra":
			r.Extra, err = p.str(name)
		}
		return err
	})
	if err != nil {
		return err
	}
	return f.check()
}

func (p *jsonParser) auction(r *Auction) error {
	f := fields{names: auctionFields}
	err := p.object("auction", func(key string) error {
		i := f.field(key)
		if i < 0 {
			return p.skip("auction")
		}
		f.set(i)
		name := f.names[i]
		var err error
		switch key {
		case "id":
			r.ID, err = p.integer(name)
		case "itemName":
			r.ItemName, err = p.str(name)
		case "description":
			r.Description, err = p.str(name)
		case "initialBid":
			r.InitialBid, err = p.integer(name)
		case "reserve":
			r.Reserve, err = p.integer(name)
		case "dateTime":
			r.DateTime, err = p.timestamp(name)
		case "expires":
			r.Expires, err = p.timestamp(name)
		case "seller":
			r.Seller, err = p.integer(name)
		case "category":
			r.Category, err = p.integer(name)
		case "extra":
			r.Extra, err = p.str(name)
		}
		return err
	})
	if err != nil {
		return err
	}
	return f.check()
}

func (p *jsonParser) bid(r *Bid) error {
	f := fields{names: bidFields}
	err := p.object("bid", func(key string) error {
		i := f.field(key)
		if i < 0 {
			return p.skip("bid")
		}
		f.set(i)
		name := f.names[i]
		var err error
		switch key {
		case "auction":
			r.Auction, err = p.integer(name)
		case "bidder":
			r.Bidder, err = p.integer(name)
		case "price":
			r.Price, err = p.integer(name)
		case "channel":
			r.Channel, err = p.str(name)
		case "url":
			r.URL, err = p.str(name)
		case "dateTime":
			r.DateTime, err = p.timestamp(name)
		case "extra":
			r.Extra, err = p.str(name)
		}
		return err
	})
	if err != nil {
		return err
	}
	return f.check()
}
