package types

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// textStyle selects the text form of values: that of CAST(x AS STRING) or
// that of Flink's print connector (Java's toString of the external
// objects).
type textStyle uint8

const (
	castStyle textStyle = iota
	printStyle
)

// AppendText appends field i of r (of type rt) as CAST(x AS STRING) gives
// it (see FormatValue); a NULL field appends "NULL". loc is the session
// time zone of TIMESTAMP_LTZ values (nil means UTC).
func AppendText(dst []byte, rt *RowType, r Row, i int, loc *time.Location) []byte {
	if r.IsNull(i) {
		return append(dst, "NULL"...)
	}
	return appendCell(dst, rt.fields[i].Type, r.b, r.slot(i), castStyle, loc)
}

// FormatValue returns v of type t as CAST(v AS STRING) gives it in Flink
// (1.15 and later): TRUE/FALSE; integers; FLOAT and DOUBLE as Java prints
// them ("1.0", "1.0E-5"); DECIMAL in plain notation with its scale
// ("1.50"); strings as they are; bytes decoded as UTF-8; DATE yyyy-MM-dd;
// TIME HH:mm:ss[.f]; TIMESTAMP yyyy-MM-dd HH:mm:ss[.f] with the fraction to
// the type's precision; TIMESTAMP_LTZ the same in loc (nil means UTC);
// INTERVAL "+1-02" and "+1 02:03:04.000"; ARRAY "[1, NULL]"; ROW "(1, a)";
// MAP and MULTISET "{a=1, b=2}". NULL gives "NULL".
func FormatValue(t Type, v Value, loc *time.Location) (string, error) {
	return formatBoxed(t, v, castStyle, loc)
}

// FormatPrint returns v of type t in the form of Flink's print connector
// (see FormatRow).
func FormatPrint(t Type, v Value) (string, error) { return formatBoxed(t, v, printStyle, nil) }

func formatBoxed(t Type, v Value, style textStyle, loc *time.Location) (string, error) {
	if v == nil {
		if style == printStyle {
			return "null", nil
		}
		return "NULL", nil
	}
	rt := MustRowType(F("v", t))
	r, err := BuildRow(rt, nil, v)
	if err != nil {
		return "", err
	}
	return string(appendCell(nil, t, r.b, r.slot(0), style, loc)), nil
}

func appendNull(dst []byte, style textStyle) []byte {
	if style == printStyle {
		return append(dst, "null"...)
	}
	return append(dst, "NULL"...)
}

// appendCell appends the text of a non-NULL cell.
func appendCell(dst []byte, t Type, b string, slot uint64, style textStyle, loc *time.Location) []byte {
	switch t.kind {
	case KindNull:
		return appendNull(dst, style)
	case KindBoolean:
		if style == printStyle {
			return strconv.AppendBool(dst, slot != 0)
		}
		if slot != 0 {
			return append(dst, "TRUE"...)
		}
		return append(dst, "FALSE"...)
	case KindTinyInt, KindSmallInt, KindInt, KindBigInt:
		return strconv.AppendInt(dst, int64(slot), 10)
	case KindFloat:
		return AppendJavaFloat(dst, float64(math.Float32frombits(uint32(slot))), 32)
	case KindDouble:
		return AppendJavaFloat(dst, math.Float64frombits(slot), 64)
	case KindDecimal:
		d := decimalAt(b, slot, int(t.p), int(t.s))
		if style == printStyle {
			return append(dst, d.JavaString()...)
		}
		return d.AppendText(dst)
	case KindChar, KindVarChar:
		return append(dst, varAt(b, slot)...)
	case KindBinary, KindVarBinary:
		v := varAt(b, slot)
		if style == printStyle {
			// Java's Arrays.toString(byte[]): signed bytes.
			dst = append(dst, '[')
			for k := 0; k < len(v); k++ {
				if k > 0 {
					dst = append(dst, ',', ' ')
				}
				dst = strconv.AppendInt(dst, int64(int8(v[k])), 10)
			}
			return append(dst, ']')
		}
		if utf8.ValidString(v) {
			return append(dst, v...)
		}
		return append(dst, strings.ToValidUTF8(v, "\uFFFD")...)
	case KindDate:
		if style == printStyle {
			return appendJavaDate(dst, Date(int32(slot)))
		}
		return Date(int32(slot)).AppendText(dst)
	case KindTime:
		if style == printStyle {
			return appendJavaLocalTime(dst, Time(slot))
		}
		return Time(slot).AppendFormat(dst, int(t.p))
	case KindTimestamp:
		ts := timestampAt(b, slot, int(t.p))
		if style == printStyle {
			return appendJavaLocalDateTime(dst, ts)
		}
		return ts.AppendFormat(dst, int(t.p))
	case KindTimestampLTZ:
		ts := timestampAt(b, slot, int(t.p))
		if style == printStyle {
			// Java's Instant.toString: UTC, seconds always, 'Z'.
			dst = ts.Date().AppendText(dst)
			dst = append(dst, 'T')
			h, m, s, n := ts.TimeOfDay().Clock()
			dst = append2(dst, h)
			dst = append(dst, ':')
			dst = append2(dst, m)
			dst = append(dst, ':')
			dst = append2(dst, s)
			dst = appendJavaNanos(dst, n)
			return append(dst, 'Z')
		}
		return ts.ToLocal(loc).AppendFormat(dst, int(t.p))
	case KindIntervalYearMonth:
		if style == printStyle {
			return appendJavaPeriod(dst, int64(int32(slot)))
		}
		return appendIntervalYearMonth(dst, int64(int32(slot)))
	case KindIntervalDayTime:
		if style == printStyle {
			return appendJavaDuration(dst, int64(slot))
		}
		return appendIntervalDayTime(dst, int64(slot))
	case KindRow:
		r := Row{b: varAt(b, slot), n: int32(t.row.Len())}
		if style == printStyle {
			dst = append(dst, "+I"...)
			return appendRowFields(dst, t.row, r, '[', ']', style, loc)
		}
		return appendRowFields(dst, t.row, r, '(', ')', style, loc)
	case KindArray:
		a := Array{b: varAt(b, slot)}
		dst = append(dst, '[')
		for j := 0; j < a.Len(); j++ {
			if j > 0 {
				dst = append(dst, ',', ' ')
			}
			if a.IsNull(j) {
				dst = appendNull(dst, style)
			} else {
				dst = appendCell(dst, *t.elem, a.b, a.slot(j), style, loc)
			}
		}
		return append(dst, ']')
	case KindMap, KindMultiset:
		m := Map{b: varAt(b, slot)}
		ks, vs := m.Keys(), m.Values()
		kt, vt := t.Elem(), t.Value()
		dst = append(dst, '{')
		for j := 0; j < ks.Len(); j++ {
			if j > 0 {
				dst = append(dst, ',', ' ')
			}
			if ks.IsNull(j) {
				dst = appendNull(dst, style)
			} else {
				dst = appendCell(dst, kt, ks.b, ks.slot(j), style, loc)
			}
			dst = append(dst, '=')
			if vs.IsNull(j) {
				dst = appendNull(dst, style)
			} else {
				dst = appendCell(dst, vt, vs.b, vs.slot(j), style, loc)
			}
		}
		return append(dst, '}')
	}
	return dst
}

func appendRowFields(dst []byte, rt *RowType, r Row, open, close byte, style textStyle, loc *time.Location) []byte {
	dst = append(dst, open)
	for i := 0; i < rt.Len(); i++ {
		if i > 0 {
			dst = append(dst, ',', ' ')
		}
		if r.IsNull(i) {
			dst = appendNull(dst, style)
		} else {
			dst = appendCell(dst, rt.fields[i].Type, r.b, r.slot(i), style, loc)
		}
	}
	return append(dst, close)
}

// appendJavaLocalDateTime appends Java's LocalDateTime.toString:
// yyyy-MM-ddTHH:mm[:ss[.fff]].
func appendJavaLocalDateTime(dst []byte, ts Timestamp) []byte {
	dst = appendJavaDate(dst, ts.Date())
	dst = append(dst, 'T')
	return appendJavaLocalTime(dst, ts.TimeOfDay())
}

// CastError says that a text cannot be cast to a type. TRY_CAST gives NULL
// where CAST fails with it.
type CastError struct {
	// Text is the input (cut if long).
	Text string
	// Type is the target type.
	Type Type
	// Reason says what is wrong and, where it helps, what form is expected.
	Reason string
	// Err is the underlying error (ErrOverflow for values out of range).
	Err error
}

// Error renders the failed cast.
func (e *CastError) Error() string {
	return fmt.Sprintf("types: cannot cast '%s' to %s: %s", e.Text, e.Type, e.Reason)
}

// Unwrap returns the underlying error.
func (e *CastError) Unwrap() error { return e.Err }

func castErr(s string, t Type, reason string, err error) error {
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return &CastError{Text: s, Type: t, Reason: reason, Err: err}
}

// ParseValue returns the value of CAST(s AS t) in Flink (1.15 and later),
// or a *CastError: booleans 'true', 'TRUE', 't', 'yes', 'y', '1' and their
// false counterparts; integers with an optional sign and an ignored
// fraction ('12.7' is 12), an error beyond the type's range; FLOAT and
// DOUBLE as Java reads them; DECIMAL rounded HALF_UP to the scale, an error
// beyond the precision; CHAR(n) padded with spaces and cut to n characters,
// VARCHAR(n) cut; BINARY and VARBINARY the UTF-8 bytes (BINARY padded with
// zero bytes); DATE, TIME, TIMESTAMP as ParseDate, ParseTime and
// ParseTimestamp; TIMESTAMP_LTZ as a wall clock in loc (nil means UTC);
// INTERVALs in the form FormatValue gives. Blanks around numbers, booleans
// and temporal values are ignored. Constructed types have no cast from a
// string.
func ParseValue(t Type, s string, loc *time.Location) (Value, error) {
	switch t.kind {
	case KindBoolean:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "t", "true", "y", "yes", "1":
			return true, nil
		case "f", "false", "n", "no", "0":
			return false, nil
		}
		return nil, castErr(s, t, "use TRUE or FALSE", nil)
	case KindTinyInt, KindSmallInt, KindInt, KindBigInt:
		v, err := parseInteger(s, t)
		if err != nil {
			return nil, err
		}
		switch t.kind {
		case KindTinyInt:
			return int8(v), nil
		case KindSmallInt:
			return int16(v), nil
		case KindInt:
			return int32(v), nil
		}
		return v, nil
	case KindFloat, KindDouble:
		f, err := parseJavaFloat(s, t)
		if err != nil {
			return nil, err
		}
		if t.kind == KindFloat {
			return float32(f), nil
		}
		return f, nil
	case KindDecimal:
		d, err := ParseDecimal(s)
		if err != nil {
			return nil, castErr(s, t, "not a number", err)
		}
		f, err := d.Fit(int(t.p), int(t.s))
		if err != nil {
			return nil, castErr(s, t, "too many digits before the point", ErrOverflow)
		}
		return f, nil
	case KindChar, KindVarChar:
		return CastString(t, s), nil
	case KindBinary, KindVarBinary:
		return castBinary(t, []byte(s)), nil
	case KindDate:
		d, err := ParseDate(s)
		if err != nil {
			return nil, castErr(s, t, "use yyyy-MM-dd", err)
		}
		return d, nil
	case KindTime:
		v, err := ParseTime(s, int(t.p))
		if err != nil {
			return nil, castErr(s, t, "use HH:mm:ss[.fraction]", err)
		}
		return v, nil
	case KindTimestamp:
		v, err := ParseTimestamp(s, int(t.p))
		if err != nil {
			return nil, castErr(s, t, "use yyyy-MM-dd HH:mm:ss[.fraction]", err)
		}
		return v, nil
	case KindTimestampLTZ:
		v, err := ParseTimestampLTZ(s, int(t.p), loc)
		if err != nil {
			return nil, castErr(s, t, "use yyyy-MM-dd HH:mm:ss[.fraction] in the session time zone", err)
		}
		return v, nil
	case KindIntervalYearMonth:
		v, _, err := ParseInterval(s, Year, Month)
		if err != nil {
			return nil, castErr(s, t, "use +y-mm", err)
		}
		if v < math.MinInt32 || v > math.MaxInt32 {
			return nil, castErr(s, t, "out of range", ErrOverflow)
		}
		return int32(v), nil
	case KindIntervalDayTime:
		v, _, err := ParseInterval(s, Day, Second)
		if err != nil {
			return nil, castErr(s, t, "use +d hh:mm:ss.fff", err)
		}
		return v, nil
	}
	return nil, castErr(s, t, "there is no cast from a string to "+t.kind.String(), nil)
}

// ParseText sets field i of the row being written from its text, as
// ParseValue reads it.
func (w *RowWriter) ParseText(i int, s string, loc *time.Location) error {
	v, err := ParseValue(w.rt.fields[i].Type, s, loc)
	if err != nil {
		return fmt.Errorf("types: field %s: %w", QuoteIdentifier(w.rt.fields[i].Name), err)
	}
	return w.SetValue(i, v)
}

// parseInteger parses an integer as Flink's casts do: an optional sign,
// digits, and an optional fraction of digits that is dropped.
func parseInteger(s string, t Type) (int64, error) {
	str := strings.TrimSpace(s)
	if str == "" {
		return 0, castErr(s, t, "empty", nil)
	}
	i, neg := 0, false
	if str[0] == '+' || str[0] == '-' {
		neg = str[0] == '-'
		i++
	}
	lo, hi := intRange(t.kind)
	var v uint64
	limit := uint64(hi)
	if neg {
		limit = uint64(-(lo + 1)) + 1
	}
	digits, point := 0, false
	for ; i < len(str) && str[i] != '.'; i++ {
		c := str[i]
		if c < '0' || c > '9' {
			return 0, castErr(s, t, fmt.Sprintf("invalid character %q", c), nil)
		}
		d := uint64(c - '0')
		if v > limit/10 || v*10 > limit-d {
			return 0, castErr(s, t, "out of range", ErrOverflow)
		}
		v = v*10 + d
		digits++
	}
	if i < len(str) {
		point = true
		for i++; i < len(str); i++ {
			if str[i] < '0' || str[i] > '9' {
				return 0, castErr(s, t, fmt.Sprintf("invalid character %q", str[i]), nil)
			}
		}
	}
	// Like Flink, a lone point reads as 0 ('.5' is 0), a lone sign fails.
	if digits == 0 && !point {
		return 0, castErr(s, t, "no digits", nil)
	}
	if neg {
		return -int64(v-1) - 1, nil
	}
	return int64(v), nil
}

// parseJavaFloat reads a float as Java's Double.parseDouble: blanks
// around, an optional d/f suffix, NaN and Infinity.
func parseJavaFloat(s string, t Type) (float64, error) {
	str := strings.TrimSpace(s)
	switch str {
	case "NaN":
		return math.NaN(), nil
	case "Infinity", "+Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	if n := len(str); n > 1 {
		switch str[n-1] {
		case 'd', 'D', 'f', 'F':
			str = str[:n-1]
		}
	}
	bits := 64
	if t.kind == KindFloat {
		bits = 32
	}
	lower := strings.ToLower(str)
	if strings.Contains(lower, "inf") || strings.Contains(lower, "nan") || strings.Contains(str, "_") {
		return 0, castErr(s, t, "not a number", nil)
	}
	f, err := strconv.ParseFloat(str, bits)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, nil // Java reads an out-of-range number as infinity or zero
		}
		return 0, castErr(s, t, "not a number", err)
	}
	return f, nil
}

// CastString returns s as a value of the character string type t, as
// Flink's CAST does: CHAR(n) padded with spaces and cut to n characters,
// VARCHAR(n) cut to n characters (code points).
func CastString(t Type, s string) string {
	n := int(t.p)
	if t.kind != KindChar && t.kind != KindVarChar || n == MaxLength {
		return s
	}
	count := 0
	for i := range s {
		if count == n {
			return s[:i]
		}
		count++
	}
	if t.kind == KindChar && count < n {
		return s + strings.Repeat(" ", n-count)
	}
	return s
}

// castBinary cuts b to BINARY(n)/VARBINARY(n) and pads BINARY with zeros.
func castBinary(t Type, b []byte) []byte {
	n := int(t.p)
	if len(b) > n {
		return b[:n]
	}
	if t.kind == KindBinary && len(b) < n {
		return append(b, make([]byte, n-len(b))...)
	}
	return b
}
