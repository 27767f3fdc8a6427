package queries

import (
	"strconv"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
)

// Time is an event time in milliseconds since the Unix epoch. It is written
// to JSON as an RFC 3339 string in UTC with milliseconds, such as
// "2026-01-01T00:00:00.000Z", as the generator writes dateTime.
type Time int64

// Time returns t as a time.Time in UTC.
func (t Time) Time() time.Time { return time.UnixMilli(int64(t)).UTC() }

// String returns t in RFC 3339 with milliseconds, in UTC.
func (t Time) String() string { return string(appendTime(nil, int64(t))) }

// MarshalJSON writes t as a quoted RFC 3339 string.
func (t Time) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 26)
	b = append(b, '"')
	b = appendTime(b, int64(t))
	return append(b, '"'), nil
}

// appendTime appends ms as "YYYY-MM-DDTHH:MM:SS.mmmZ".
func appendTime(dst []byte, ms int64) []byte {
	return time.UnixMilli(ms).UTC().AppendFormat(dst, "2006-01-02T15:04:05.000Z")
}

// Decimal3 is an exact decimal with three digits after the point, stored as
// thousandths: Decimal3(90800) is 90.8. It is the type of the reference's
// DECIMAL(23, 3) expression 0.908 * price (q1, q14), computed exactly as
// price * 908 thousandths. It is written to JSON as a number with three
// decimals, such as 90.800.
type Decimal3 int64

// Float64 returns d as a float64.
func (d Decimal3) Float64() float64 { return float64(d) / 1000 }

// String returns d with three decimals.
func (d Decimal3) String() string { return string(d.append(nil)) }

// MarshalJSON writes d as a JSON number with three decimals.
func (d Decimal3) MarshalJSON() ([]byte, error) { return d.append(make([]byte, 0, 24)), nil }

func (d Decimal3) append(dst []byte) []byte {
	v := int64(d)
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	dst = strconv.AppendInt(dst, v/1000, 10)
	f := v % 1000
	return append(dst, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

// euros returns 0.908 * price exactly, as the reference's DECIMAL product.
func euros(price int64) Decimal3 { return Decimal3(price * 908) }

// NullString is a string that may be SQL NULL (Valid false). It is written to
// JSON as a string or null.
type NullString struct {
	// S is the string; empty when Valid is false.
	S string
	// Valid is false for NULL.
	Valid bool
}

// String returns the string, or "NULL".
func (s NullString) String() string {
	if !s.Valid {
		return "NULL"
	}
	return s.S
}

// MarshalJSON writes s as a JSON string or null.
func (s NullString) MarshalJSON() ([]byte, error) {
	if !s.Valid {
		return []byte("null"), nil
	}
	return strconv.AppendQuote(nil, s.S), nil
}

// RowKind is the kind of change a changelog record makes to a query's result
// table: changelog.Kind, written "+I", "-U", "+U" or "-D".
type RowKind = changelog.Kind

// The row kinds of a changelog.
const (
	// Insert adds a row ("+I").
	Insert = changelog.Insert
	// UpdateBefore retracts the old version of an updated row ("-U"); the
	// UpdateAfter record with the new version follows it.
	UpdateBefore = changelog.UpdateBefore
	// UpdateAfter adds the new version of an updated row ("+U").
	UpdateAfter = changelog.UpdateAfter
	// Delete removes a row ("-D").
	Delete = changelog.Delete
)

// Calendar helpers, in UTC.

const (
	msPerMinute = 60_000
	msPerHour   = 3_600_000
	msPerDay    = 86_400_000
)

// floorDiv returns a/b rounded towards negative infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// dayOf returns the day number (days since 1970-01-01, UTC) of ms.
func dayOf(ms int64) int64 { return floorDiv(ms, msPerDay) }

// hourOf returns HOUR(ms) in UTC, 0 to 23.
func hourOf(ms int64) int { return int((ms - dayOf(ms)*msPerDay) / msPerHour) }

// minuteOfDay returns the minute of the day of ms in UTC, 0 to 1439.
func minuteOfDay(ms int64) int { return int((ms - dayOf(ms)*msPerDay) / msPerMinute) }

// appendDay appends day as DATE_FORMAT(…, 'yyyy-MM-dd').
func appendDay(dst []byte, day int64) []byte {
	return time.UnixMilli(day*msPerDay).UTC().AppendFormat(dst, "2006-01-02")
}

// appendHHMM appends a minute of the day as DATE_FORMAT(…, 'HH:mm').
func appendHHMM(dst []byte, minute int) []byte {
	h, m := minute/60, minute%60
	return append(dst, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10))
}

// dayNames caches the formatted name of the last day seen, since
// consecutive records almost always fall on the same day. Each operator
// subtask has its own.
type dayNames struct {
	day  int64
	name string
	ok   bool
}

// get returns day formatted as yyyy-MM-dd.
func (c *dayNames) get(day int64) string {
	if !c.ok || c.day != day {
		c.day, c.name, c.ok = day, string(appendDay(nil, day)), true
	}
	return c.name
}

// hhmmNames holds the 1440 minutes of a day formatted as HH:mm.
var hhmmNames = func() (t [1440]string) {
	for i := range t {
		t[i] = string(appendHHMM(nil, i))
	}
	return t
}()

// changeRows turns a query's changelog into its result rows with row, which
// each subtask calls with a day-name cache of its own.
func changeRows[C, R any](s *eddy.Stream[C], row func(c C, days *dayNames) R) *eddy.Stream[R] {
	return eddy.Process(s, func() eddy.ProcessFunction[C, R] {
		var days dayNames
		return eddy.ProcessFunc[C, R](func(ctx *eddy.ProcessContext[R], c C) error {
			ctx.Emit(row(c, &days))
			return nil
		})
	}).Name("result rows")
}
