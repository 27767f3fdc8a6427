package types

import (
	"fmt"
	"strings"
	"time"
)

// Date is a DATE value: days since 1970-01-01 in the proleptic Gregorian
// calendar.
type Date int32

// Time is a TIME value: nanoseconds since midnight, 0 to 86399999999999.
// (Flink keeps milliseconds; eddy keeps the nanoseconds a TIME(9) can hold.)
type Time int64

// Timestamp is a TIMESTAMP or TIMESTAMP_LTZ value, as Flink's TimestampData:
// milliseconds since 1970-01-01 00:00:00 and nanoseconds within the
// millisecond (0 to 999999). A TIMESTAMP is a date and time without zone
// (read as if in UTC); a TIMESTAMP_LTZ is an instant.
type Timestamp struct {
	Millis      int64
	NanoOfMilli int32
}

// Durations of the calendar units, in their stored units.
const (
	MillisPerSecond = 1000
	MillisPerMinute = 60 * MillisPerSecond
	MillisPerHour   = 60 * MillisPerMinute
	MillisPerDay    = 24 * MillisPerHour
	NanosPerMilli   = 1000000
	NanosPerSecond  = 1000 * NanosPerMilli
	NanosPerDay     = int64(MillisPerDay) * NanosPerMilli
)

// Limits of DATE and TIMESTAMP values, as Flink: years 0000 to 9999.
const (
	MinDate Date = -719528 // 0000-01-01
	MaxDate Date = 2932896 // 9999-12-31
)

// DateOf returns the date of a year, month (1-12) and day (1-31). It does
// not check them; see ParseDate.
func DateOf(year, month, day int) Date {
	y := year
	if month <= 2 {
		y--
	}
	era := floorDiv(int64(y), 400)
	yoe := int64(y) - era*400
	m := month + 9
	if month > 2 {
		m = month - 3
	}
	doy := int64((153*m+2)/5 + day - 1)
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return Date(era*146097 + doe - 719468)
}

// Civil returns the year, month (1-12) and day (1-31) of d.
func (d Date) Civil() (year, month, day int) {
	z := int64(d) + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day = int(doy - (153*mp+2)/5 + 1)
	month = int(mp + 3)
	if mp >= 10 {
		month = int(mp - 9)
	}
	if month <= 2 {
		y++
	}
	return int(y), month, day
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(y, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// String returns the date as yyyy-MM-dd, the text of CAST(d AS STRING).
func (d Date) String() string { return string(d.AppendText(nil)) }

// AppendText appends yyyy-MM-dd.
func (d Date) AppendText(dst []byte) []byte {
	y, m, day := d.Civil()
	dst = appendInt4(dst, y)
	dst = append(dst, '-')
	dst = append2(dst, m)
	dst = append(dst, '-')
	return append2(dst, day)
}

func append2(dst []byte, v int) []byte { return append(dst, byte('0'+v/10%10), byte('0'+v%10)) }

func appendInt4(dst []byte, v int) []byte {
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	if v > 9999 {
		return fmt.Appendf(dst, "%d", v)
	}
	return append(dst, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
}

// ParseDate parses a date as CAST('...' AS DATE) does in Flink: year, month
// and day separated by '-', each of one or more digits ("2020-01-01",
// "2020-1-1"; "2020-01" and "2020" mean the first day); anything after a
// space is ignored (a timestamp's time); years 0 to 9999.
func ParseDate(s string) (Date, error) {
	t := strings.TrimSpace(s)
	if sp := strings.IndexByte(t, ' '); sp > 0 {
		t = t[:sp]
	}
	parts := strings.Split(t, "-")
	if len(parts) > 3 {
		return 0, dateErr(s)
	}
	ymd := [3]int{0, 1, 1}
	for i, p := range parts {
		v, ok := atoiDigits(p, 9)
		if !ok {
			return 0, dateErr(s)
		}
		ymd[i] = v
	}
	y, m, d := ymd[0], ymd[1], ymd[2]
	if y > 9999 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return 0, fmt.Errorf("types: %q is not a valid DATE: no such day; use yyyy-MM-dd with years 0000 to 9999", s)
	}
	return DateOf(y, m, d), nil
}

func dateErr(s string) error {
	return fmt.Errorf("types: %q is not a DATE; write it as yyyy-MM-dd", s)
}

// atoiDigits parses one to maxLen ASCII digits.
func atoiDigits(s string, maxLen int) (int, bool) {
	if len(s) == 0 || len(s) > maxLen {
		return 0, false
	}
	v := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// TimeOf returns the time of day h:m:s plus nanos; it does not check them.
func TimeOf(hour, minute, second, nanos int) Time {
	return Time(((int64(hour)*60+int64(minute))*60+int64(second))*NanosPerSecond + int64(nanos))
}

// Clock returns the hour, minute, second and nanoseconds of t.
func (t Time) Clock() (hour, minute, second, nanos int) {
	v := int64(t)
	nanos = int(v % NanosPerSecond)
	s := v / NanosPerSecond
	return int(s / 3600), int(s / 60 % 60), int(s % 60), nanos
}

// Truncate drops the digits of the second's fraction beyond precision.
func (t Time) Truncate(precision int) Time {
	u := pow10[9-precision]
	return Time(int64(t) / u * u)
}

// Format returns the time as CAST(t AS STRING) gives it for TIME(precision):
// HH:mm:ss, then for precision > 0 a point and the fraction's digits up to
// precision without trailing zeros but at least one ("12:00:00.5",
// "12:00:00.0"), as Flink writes it.
func (t Time) Format(precision int) string { return string(t.AppendFormat(nil, precision)) }

// AppendFormat appends Format(precision).
func (t Time) AppendFormat(dst []byte, precision int) []byte {
	h, m, s, n := t.Clock()
	dst = append2(dst, h)
	dst = append(dst, ':')
	dst = append2(dst, m)
	dst = append(dst, ':')
	dst = append2(dst, s)
	if precision > 0 {
		dst = append(dst, '.')
		div := int64(NanosPerSecond / 10)
		v := int64(n)
		for i := 0; i < precision; i++ {
			dst = append(dst, byte('0'+v/div))
			v %= div
			div /= 10
			if v == 0 {
				break
			}
		}
	}
	return dst
}

// String returns the time as HH:mm:ss with the fraction's significant
// digits.
func (t Time) String() string { return t.Format(9) }

// ParseTime parses a time of day as CAST('...' AS TIME(precision)) does:
// H[:m[:s[.fraction]]], each part one or two digits, blanks around parts
// ignored; the fraction is cut to precision digits.
func ParseTime(s string, precision int) (Time, error) {
	t := strings.TrimSpace(s)
	parts := strings.Split(t, ":")
	if len(parts) > 3 {
		return 0, timeErr(s)
	}
	var hms [3]int
	nanos := 0
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if i == 2 {
			if dot := strings.IndexByte(p, '.'); dot >= 0 {
				n, ok := parseFraction(p[dot+1:])
				if !ok {
					return 0, timeErr(s)
				}
				nanos = n
				p = p[:dot]
			}
		}
		v, ok := atoiDigits(p, 2)
		if !ok {
			return 0, timeErr(s)
		}
		hms[i] = v
	}
	if hms[0] > 23 || hms[1] > 59 || hms[2] > 59 {
		return 0, fmt.Errorf("types: %q is not a valid TIME: hours 0-23, minutes and seconds 0-59", s)
	}
	return TimeOf(hms[0], hms[1], hms[2], nanos).Truncate(precision), nil
}

func timeErr(s string) error {
	return fmt.Errorf("types: %q is not a TIME; write it as HH:mm:ss[.fraction]", s)
}

// parseFraction parses up to 9 digits of a second's fraction into
// nanoseconds.
func parseFraction(f string) (int, bool) {
	if len(f) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < 9; i++ {
		n *= 10
		if i < len(f) {
			c := f[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			n += int(c - '0')
		}
	}
	return n, true
}

// TimestampOf returns the timestamp of a civil date and time.
func TimestampOf(year, month, day, hour, minute, second, nanos int) Timestamp {
	ms := int64(DateOf(year, month, day))*MillisPerDay + int64(TimeOf(hour, minute, second, 0))/NanosPerMilli +
		int64(nanos/NanosPerMilli)
	return Timestamp{Millis: ms, NanoOfMilli: int32(nanos % NanosPerMilli)}
}

// TimestampFromMillis returns the timestamp ms milliseconds after the
// epoch.
func TimestampFromMillis(ms int64) Timestamp { return Timestamp{Millis: ms} }

// TimestampFromTime returns the timestamp of t's wall clock in its own
// location (a TIMESTAMP) - for the instant, pass t.UTC() (a TIMESTAMP_LTZ).
func TimestampFromTime(t time.Time) Timestamp {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return TimestampOf(y, int(mo), d, h, mi, s, t.Nanosecond())
}

// UTC returns the timestamp as a time.Time in UTC.
func (ts Timestamp) UTC() time.Time {
	return time.UnixMilli(ts.Millis).UTC().Add(time.Duration(ts.NanoOfMilli))
}

// Date returns the date part.
func (ts Timestamp) Date() Date { return Date(floorDiv(ts.Millis, MillisPerDay)) }

// TimeOfDay returns the time part.
func (ts Timestamp) TimeOfDay() Time {
	return Time(floorMod(ts.Millis, MillisPerDay)*NanosPerMilli + int64(ts.NanoOfMilli))
}

// Nanos returns the nanoseconds of the second.
func (ts Timestamp) Nanos() int {
	return int(floorMod(ts.Millis, 1000))*NanosPerMilli + int(ts.NanoOfMilli)
}

// Compare orders timestamps: -1, 0 or +1.
func (ts Timestamp) Compare(u Timestamp) int {
	switch {
	case ts.Millis < u.Millis:
		return -1
	case ts.Millis > u.Millis:
		return 1
	case ts.NanoOfMilli < u.NanoOfMilli:
		return -1
	case ts.NanoOfMilli > u.NanoOfMilli:
		return 1
	}
	return 0
}

// Truncate drops the digits of the second's fraction beyond precision.
func (ts Timestamp) Truncate(precision int) Timestamp {
	if precision >= 9 {
		return ts
	}
	if precision <= 3 {
		u := pow10[3-precision]
		return Timestamp{Millis: floorDiv(ts.Millis, u) * u}
	}
	u := int32(pow10[9-precision])
	return Timestamp{Millis: ts.Millis, NanoOfMilli: ts.NanoOfMilli / u * u}
}

// Format returns the timestamp as CAST(ts AS STRING) gives it for
// TIMESTAMP(precision): yyyy-MM-dd HH:mm:ss, then the fraction with
// trailing zeros dropped down to precision digits
// ("2015-07-15 08:00:00.001", "2015-07-15 08:00:00.000" for precision 3).
func (ts Timestamp) Format(precision int) string { return string(ts.AppendFormat(nil, precision)) }

// AppendFormat appends Format(precision).
func (ts Timestamp) AppendFormat(dst []byte, precision int) []byte {
	return ts.appendSQL(dst, ' ', precision)
}

func (ts Timestamp) appendSQL(dst []byte, sep byte, minDigits int) []byte {
	dst = ts.Date().AppendText(dst)
	dst = append(dst, sep)
	tod := ts.TimeOfDay()
	h, m, s, n := tod.Clock()
	dst = append2(dst, h)
	dst = append(dst, ':')
	dst = append2(dst, m)
	dst = append(dst, ':')
	dst = append2(dst, s)
	return appendFractionMin(dst, n, minDigits)
}

// appendFractionMin appends '.' and the nanoseconds' 9 digits with
// trailing zeros dropped while more than minDigits remain; nothing if none
// remain.
func appendFractionMin(dst []byte, nanos, minDigits int) []byte {
	var f [9]byte
	v := nanos
	for i := 8; i >= 0; i-- {
		f[i] = byte('0' + v%10)
		v /= 10
	}
	k := 9
	for k > minDigits && f[k-1] == '0' {
		k--
	}
	if k == 0 {
		return dst
	}
	dst = append(dst, '.')
	return append(dst, f[:k]...)
}

// String returns Format(9) with the fraction's trailing zeros dropped.
func (ts Timestamp) String() string { return ts.Format(0) }

// ParseTimestamp parses a timestamp as CAST('...' AS TIMESTAMP(precision))
// does in Flink: yyyy-M-d, optionally followed by a space and H:m:s with
// an optional fraction of up to 9 digits ("2015-07-15 08:00:00.001",
// "2020-01-01"); blanks around it are ignored; the fraction is cut to
// precision digits.
func ParseTimestamp(s string, precision int) (Timestamp, error) {
	ts, err := parseTimestamp(strings.TrimSpace(s), ' ', false)
	if err != nil {
		return Timestamp{}, fmt.Errorf("types: %q is not a TIMESTAMP; write it as yyyy-MM-dd HH:mm:ss[.fraction]", s)
	}
	return ts.Truncate(precision), nil
}

// parseTimestamp parses yyyy-M-d[<sep>H:m:s[.f]], with the time required
// when timeRequired. It does not allocate.
func parseTimestamp(t string, sep byte, timeRequired bool) (Timestamp, error) {
	datePart, timePart, hasTime := t, "", false
	if i := strings.IndexByte(t, sep); i >= 0 {
		datePart, timePart, hasTime = t[:i], t[i+1:], true
	} else if timeRequired {
		return Timestamp{}, errBadTimestamp
	}
	var dp [3]string
	if !splitN(datePart, '-', dp[:]) || len(dp[0]) != 4 {
		return Timestamp{}, errBadTimestamp
	}
	y, ok1 := atoiDigits(dp[0], 4)
	m, ok2 := atoiDigits(dp[1], 2)
	d, ok3 := atoiDigits(dp[2], 2)
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return Timestamp{}, errBadTimestamp
	}
	var h, mi, sec, nanos int
	if hasTime {
		var tp [3]string
		if !splitN(timePart, ':', tp[:]) {
			return Timestamp{}, errBadTimestamp
		}
		secPart := tp[2]
		if dot := strings.IndexByte(secPart, '.'); dot >= 0 {
			n, ok := parseFraction(secPart[dot+1:])
			if !ok {
				return Timestamp{}, errBadTimestamp
			}
			nanos = n
			secPart = secPart[:dot]
		}
		var ok4, ok5, ok6 bool
		h, ok4 = atoiDigits(tp[0], 2)
		mi, ok5 = atoiDigits(tp[1], 2)
		sec, ok6 = atoiDigits(secPart, 2)
		if !ok4 || !ok5 || !ok6 || h > 23 || mi > 59 || sec > 59 {
			return Timestamp{}, errBadTimestamp
		}
	}
	return TimestampOf(y, m, d, h, mi, sec, nanos), nil
}

// splitN splits s at sep into exactly len(parts) parts.
func splitN(s string, sep byte, parts []string) bool {
	for k := 0; k < len(parts)-1; k++ {
		i := strings.IndexByte(s, sep)
		if i < 0 {
			return false
		}
		parts[k], s = s[:i], s[i+1:]
	}
	parts[len(parts)-1] = s
	return strings.IndexByte(s, sep) < 0
}

var errBadTimestamp = fmt.Errorf("bad timestamp")

// offsetMillis returns the offset of loc from UTC at the instant ms.
func offsetMillis(ms int64, loc *time.Location) int64 {
	if loc == nil || loc == time.UTC {
		return 0
	}
	_, off := time.UnixMilli(ms).In(loc).Zone()
	return int64(off) * MillisPerSecond
}

// ToLocal returns the wall-clock TIMESTAMP of the instant ts in loc (nil
// means UTC): how a TIMESTAMP_LTZ shows in a session's time zone.
func (ts Timestamp) ToLocal(loc *time.Location) Timestamp {
	return Timestamp{Millis: ts.Millis + offsetMillis(ts.Millis, loc), NanoOfMilli: ts.NanoOfMilli}
}

// FromLocal returns the instant (TIMESTAMP_LTZ) at which the wall clock of
// loc (nil means UTC) shows ts; in a gap of a daylight-saving change it
// moves forward as Java's ZonedDateTime does.
func (ts Timestamp) FromLocal(loc *time.Location) Timestamp {
	if loc == nil || loc == time.UTC {
		return ts
	}
	u := ts.UTC()
	t := time.Date(u.Year(), u.Month(), u.Day(), u.Hour(), u.Minute(), u.Second(), u.Nanosecond(), loc)
	return Timestamp{Millis: t.UnixMilli(), NanoOfMilli: ts.NanoOfMilli}
}

// FormatLTZ returns the text of CAST(ts AS STRING) for a TIMESTAMP_LTZ
// (precision): its wall clock in loc (nil means UTC), as Format.
func (ts Timestamp) FormatLTZ(loc *time.Location, precision int) string {
	return ts.ToLocal(loc).Format(precision)
}

// ParseTimestampLTZ parses the text of a TIMESTAMP_LTZ(precision), a wall
// clock in loc (nil means UTC), as CAST('...' AS TIMESTAMP_LTZ) does.
func ParseTimestampLTZ(s string, precision int, loc *time.Location) (Timestamp, error) {
	ts, err := ParseTimestamp(s, precision)
	if err != nil {
		return Timestamp{}, fmt.Errorf("types: %q is not a TIMESTAMP_LTZ; write it as yyyy-MM-dd HH:mm:ss[.fraction] in the session time zone", s)
	}
	return ts.FromLocal(loc), nil
}

// FormatIntervalYearMonth returns CAST of an INTERVAL YEAR TO MONTH of the
// given months to STRING: "+1-02", "-0-11".
func FormatIntervalYearMonth(months int64) string {
	return string(appendIntervalYearMonth(nil, months))
}

func appendIntervalYearMonth(dst []byte, months int64) []byte {
	if months >= 0 {
		dst = append(dst, '+')
	} else {
		dst = append(dst, '-')
		months = -months
	}
	dst = fmt.Appendf(dst, "%d-", months/12)
	return append2(dst, int(months%12))
}

// FormatIntervalDayTime returns CAST of an INTERVAL DAY TO SECOND of the
// given milliseconds to STRING: "+1 02:03:04.005".
func FormatIntervalDayTime(millis int64) string { return string(appendIntervalDayTime(nil, millis)) }

func appendIntervalDayTime(dst []byte, v int64) []byte {
	if v >= 0 {
		dst = append(dst, '+')
	} else {
		dst = append(dst, '-')
		v = -v
	}
	ms := v % 1000
	v /= 1000
	s := v % 60
	v /= 60
	m := v % 60
	v /= 60
	h := v % 24
	d := v / 24
	dst = fmt.Appendf(dst, "%d ", d)
	dst = append2(dst, int(h))
	dst = append(dst, ':')
	dst = append2(dst, int(m))
	dst = append(dst, ':')
	dst = append2(dst, int(s))
	return append(dst, '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
}

// IntervalUnit is a field of an interval qualifier (YEAR, MONTH, DAY,
// HOUR, MINUTE, SECOND).
type IntervalUnit uint8

// The interval units, from the largest.
const (
	Year IntervalUnit = iota
	Month
	Day
	Hour
	Minute
	Second
)

var unitNames = [...]string{"YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND"}

// String names the unit.
func (u IntervalUnit) String() string {
	if int(u) < len(unitNames) {
		return unitNames[u]
	}
	return fmt.Sprintf("IntervalUnit(%d)", uint8(u))
}

// ParseInterval evaluates the string of an interval literal INTERVAL 's'
// from [TO to] (pass to == from for a single unit): '1-2' YEAR TO MONTH,
// '10' DAY, '1 02:03:04.5' DAY TO SECOND, '2:30' HOUR TO MINUTE, '1.5'
// SECOND, with an optional sign. It returns months for YEAR and MONTH
// qualifiers and milliseconds for the others, with the interval's type.
func ParseInterval(s string, from, to IntervalUnit) (int64, Type, error) {
	if to < from || (from <= Month) != (to <= Month) {
		return 0, Type{}, fmt.Errorf("types: INTERVAL %s TO %s is not a valid qualifier", from, to)
	}
	t := strings.TrimSpace(s)
	neg := false
	if t != "" && (t[0] == '-' || t[0] == '+') {
		neg = t[0] == '-'
		t = strings.TrimSpace(t[1:])
	}
	bad := func() (int64, Type, error) {
		q := from.String()
		if to != from {
			q += " TO " + to.String()
		}
		return 0, Type{}, fmt.Errorf("types: %q is not a valid INTERVAL %s literal", s, q)
	}
	// Split into the fields of the qualifier, by their separators.
	seps := map[IntervalUnit]byte{Month: '-', Hour: ' ', Minute: ':', Second: ':'}
	var vals [6]int64
	fracNanos := 0
	rest := t
	for u := from; u <= to; u++ {
		part := rest
		if u < to {
			sep := seps[u+1]
			i := strings.IndexByte(rest, sep)
			if i < 0 {
				return bad()
			}
			part, rest = rest[:i], rest[i+1:]
		}
		if u == Second {
			if dot := strings.IndexByte(part, '.'); dot >= 0 {
				n, ok := parseFraction(part[dot+1:])
				if !ok {
					return bad()
				}
				fracNanos = n
				part = part[:dot]
			}
		}
		v, ok := atoiDigits(part, 10)
		if !ok {
			return bad()
		}
		vals[u] = int64(v)
	}
	var out int64
	var typ Type
	if from <= Month {
		out, typ = vals[Year]*12+vals[Month], IntervalYearMonth()
	} else {
		out = vals[Day]*MillisPerDay + vals[Hour]*MillisPerHour + vals[Minute]*MillisPerMinute +
			vals[Second]*MillisPerSecond + int64(fracNanos/NanosPerMilli)
		typ = IntervalDayTime()
	}
	if neg {
		out = -out
	}
	return out, typ.NotNull(), nil
}
