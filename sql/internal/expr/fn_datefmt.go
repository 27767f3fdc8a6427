package expr

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// dateFormat is a compiled date-time pattern in the letters of Java's
// DateTimeFormatter, which Flink's DATE_FORMAT, TO_TIMESTAMP, TO_DATE,
// UNIX_TIMESTAMP and FROM_UNIXTIME use ('yyyy-MM-dd HH:mm:ss', 'HH:mm',
// 'dd/MMM/yyyy:HH:mm:ss Z'): the same as SimpleDateFormat's for the usual
// letters, except that S is the fraction of the second.
type dateFormat struct {
	items []fmtItem
	// hasZone: the pattern prints or parses an offset or a zone.
	hasZone bool
}

type fmtItem struct {
	letter byte // 0 for literal text
	count  int
	text   string
}

var monthNames = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
var dayNames = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

// parseDateFormat compiles a pattern; letters without a meaning are an
// error, as in Java.
func parseDateFormat(p string) (*dateFormat, error) {
	f := &dateFormat{}
	lit := func(s string) {
		if n := len(f.items); n > 0 && f.items[n-1].letter == 0 {
			f.items[n-1].text += s
			return
		}
		f.items = append(f.items, fmtItem{text: s})
	}
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\'':
			j := i + 1
			var b strings.Builder
			for {
				if j >= len(p) {
					return nil, fmt.Errorf("bad date format %q: a quote is not closed", p)
				}
				if p[j] == '\'' {
					if j+1 < len(p) && p[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(p[j])
				j++
			}
			if j == i+1 {
				lit("'")
			} else {
				lit(b.String())
			}
			i = j + 1
		case c == '[' || c == ']':
			i++ // optional sections: printed in full
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(p) && p[j] == c {
				j++
			}
			n := j - i
			if !strings.ContainsRune("yuMLdDHhkKmsSnaEQZXxzV", rune(c)) {
				return nil, fmt.Errorf("bad date format %q: unknown pattern letter %c", p, c)
			}
			if strings.ContainsRune("ZXxzV", rune(c)) {
				f.hasZone = true
			}
			f.items = append(f.items, fmtItem{letter: c, count: n})
			i = j
		default:
			_, size := utf8.DecodeRuneInString(p[i:])
			lit(p[i : i+size])
			i += size
		}
	}
	return f, nil
}

func appendPadded(b []byte, v int64, width int) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], v, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// format appends t (a wall clock; offset is its zone's offset in seconds,
// name its zone's name) as the pattern says.
func (f *dateFormat) format(b []byte, t time.Time, nanos int, offset int, zone string) []byte {
	year, month, day := t.Date()
	hour, minute, second := t.Clock()
	for _, it := range f.items {
		n := it.count
		switch it.letter {
		case 0:
			b = append(b, it.text...)
		case 'y', 'u':
			y := int64(year)
			if n == 2 {
				b = appendPadded(b, (y%100+100)%100, 2)
			} else {
				b = appendPadded(b, y, n)
			}
		case 'M', 'L':
			m := int(month)
			switch {
			case n >= 4:
				b = append(b, monthNames[m-1]...)
			case n == 3:
				b = append(b, monthNames[m-1][:3]...)
			default:
				b = appendPadded(b, int64(m), n)
			}
		case 'd':
			b = appendPadded(b, int64(day), n)
		case 'D':
			b = appendPadded(b, int64(t.YearDay()), n)
		case 'H':
			b = appendPadded(b, int64(hour), n)
		case 'k':
			h := hour
			if h == 0 {
				h = 24
			}
			b = appendPadded(b, int64(h), n)
		case 'h':
			h := hour % 12
			if h == 0 {
				h = 12
			}
			b = appendPadded(b, int64(h), n)
		case 'K':
			b = appendPadded(b, int64(hour%12), n)
		case 'm':
			b = appendPadded(b, int64(minute), n)
		case 's':
			b = appendPadded(b, int64(second), n)
		case 'S':
			frac := appendPadded(nil, int64(nanos), 9)
			for i := 0; i < n; i++ {
				if i < 9 {
					b = append(b, frac[i])
				} else {
					b = append(b, '0')
				}
			}
		case 'n':
			b = appendPadded(b, int64(nanos), n)
		case 'a':
			if hour < 12 {
				b = append(b, "AM"...)
			} else {
				b = append(b, "PM"...)
			}
		case 'E':
			d := dayNames[t.Weekday()]
			if n < 4 {
				d = d[:3]
			}
			b = append(b, d...)
		case 'Q':
			b = appendPadded(b, int64((int(month)+2)/3), n)
		case 'Z', 'X', 'x':
			b = appendOffset(b, it.letter, n, offset)
		case 'z', 'V':
			b = append(b, zone...)
		}
	}
	return b
}

func appendOffset(b []byte, letter byte, n, offset int) []byte {
	if offset == 0 && letter == 'X' {
		return append(b, 'Z')
	}
	sign := byte('+')
	if offset < 0 {
		sign, offset = '-', -offset
	}
	h, m := offset/3600, offset/60%60
	b = append(b, sign)
	b = appendPadded(b, int64(h), 2)
	switch {
	case letter == 'Z' && n < 4, (letter == 'X' || letter == 'x') && n == 2:
		b = appendPadded(b, int64(m), 2)
	case letter == 'X' || letter == 'x':
		if n == 1 {
			if m != 0 {
				b = appendPadded(b, int64(m), 2)
			}
		} else {
			b = append(b, ':')
			b = appendPadded(b, int64(m), 2)
		}
	default:
		b = append(b, ':')
		b = appendPadded(b, int64(m), 2)
	}
	return b
}

// parsed holds the fields a pattern read.
type parsed struct {
	year, month, day, hour, minute, second, nanos int
	pm, hasAMPM, hasDate, hasTime                 bool
	offset                                        int
	hasOffset                                     bool
}

// parse reads s by the pattern (all of it) into a wall clock; the offset
// when the pattern has one.
func (f *dateFormat) parse(s string) (parsed, error) {
	p := parsed{year: 1970, month: 1, day: 1}
	bad := func() (parsed, error) { return parsed{}, fmt.Errorf("%q does not match the date format", s) }
	num := func(min, max int) (int, bool) {
		i := 0
		neg := false
		if i < len(s) && (s[i] == '-' || s[i] == '+') && min > 2 {
			neg = s[i] == '-'
			i++
		}
		j := i
		for j < len(s) && j-i < max && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j-i < min {
			return 0, false
		}
		v, _ := strconv.Atoi(s[i:j])
		s = s[j:]
		if neg {
			v = -v
		}
		return v, true
	}
	for k, it := range f.items {
		n := it.count
		// A variable-width number followed by another number takes its
		// own width only (Java's adjacent value parsing).
		maxw := 19
		if n >= 2 || k+1 < len(f.items) && f.items[k+1].letter != 0 {
			maxw = max(n, 2)
		}
		var ok bool
		var v int
		switch it.letter {
		case 0:
			if !strings.HasPrefix(s, it.text) {
				return bad()
			}
			s = s[len(it.text):]
			continue
		case 'y', 'u':
			p.hasDate = true
			switch {
			case n == 2:
				v, ok = num(2, 2)
				v += 2000
			case n >= 4 && (k+1 >= len(f.items) || f.items[k+1].letter == 0):
				v, ok = num(n, 19)
			default:
				v, ok = num(n, max(n, 4))
			}
			p.year = v
		case 'M', 'L':
			p.hasDate = true
			if n >= 3 {
				ok = false
				for i, name := range monthNames {
					cand := name
					if n == 3 {
						cand = name[:3]
					}
					if len(s) >= len(cand) && strings.EqualFold(s[:len(cand)], cand) {
						v, ok, s = i+1, true, s[len(cand):]
						break
					}
				}
			} else {
				v, ok = num(n, maxw)
			}
			p.month = v
		case 'd':
			p.hasDate = true
			v, ok = num(n, maxw)
			p.day = v
		case 'H', 'k':
			p.hasTime = true
			v, ok = num(n, maxw)
			if it.letter == 'k' && v == 24 {
				v = 0
			}
			p.hour = v
		case 'h', 'K':
			p.hasTime = true
			v, ok = num(n, maxw)
			p.hour = v % 12
		case 'm':
			p.hasTime = true
			v, ok = num(n, maxw)
			p.minute = v
		case 's':
			p.hasTime = true
			v, ok = num(n, maxw)
			p.second = v
		case 'S':
			before := len(s)
			v, ok = num(n, n)
			digits := before - len(s)
			for i := digits; i < 9; i++ {
				v *= 10
			}
			p.nanos = v
		case 'a':
			p.hasAMPM = true
			switch {
			case len(s) >= 2 && strings.EqualFold(s[:2], "AM"):
				ok, s = true, s[2:]
			case len(s) >= 2 && strings.EqualFold(s[:2], "PM"):
				ok, s, p.pm = true, s[2:], true
			}
		case 'E':
			for _, name := range dayNames {
				cand := name
				if n < 4 {
					cand = name[:3]
				}
				if len(s) >= len(cand) && strings.EqualFold(s[:len(cand)], cand) {
					ok, s = true, s[len(cand):]
					break
				}
			}
		case 'Z', 'X', 'x':
			if it.letter == 'X' && strings.HasPrefix(s, "Z") {
				ok, s, p.hasOffset = true, s[1:], true
				break
			}
			if len(s) == 0 || (s[0] != '+' && s[0] != '-') {
				break
			}
			sign := 1
			if s[0] == '-' {
				sign = -1
			}
			s = s[1:]
			h, ok1 := num(2, 2)
			m := 0
			if strings.HasPrefix(s, ":") {
				s = s[1:]
			}
			if len(s) >= 2 && s[0] >= '0' && s[0] <= '9' {
				m, _ = num(2, 2)
			}
			ok, p.offset, p.hasOffset = ok1, sign*(h*3600+m*60), true
		default:
			return parsed{}, fmt.Errorf("the date format letter %c cannot be parsed", it.letter)
		}
		if !ok {
			return bad()
		}
	}
	if s != "" {
		return bad()
	}
	if p.hasAMPM && p.pm {
		p.hour += 12
	}
	if p.month < 1 || p.month > 12 || p.day < 1 || p.day > daysIn(p.year, p.month) ||
		p.hour > 23 || p.minute > 59 || p.second > 59 {
		return bad()
	}
	return p, nil
}
