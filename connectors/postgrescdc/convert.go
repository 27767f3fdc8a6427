package postgrescdc

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/eddystream/eddy/sql/types"
)

// The snapshot reads values as text, and pgoutput sends them as text (in
// sessions set up by sessionParams): setField reads both, so a value is the
// same whichever way it came.

// str views b as a string without copying; it must not outlive b.
func str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// converter holds the scratch space of setField.
type converter struct {
	buf []byte
}

// setField sets field i of w (of type t) from the text of a value of
// column c; nil is NULL. Values that do not fit t are errors, never cut.
func (cv *converter) setField(w *types.RowWriter, i int, t types.Type, c *column, b []byte) error {
	if b == nil {
		w.SetNull(i)
		return nil
	}
	if t.IsString() && c.kind != kindBytea {
		if n := t.Length(); n < types.MaxLength && utf8.RuneCount(b) > n {
			return fmt.Errorf("a value of %d characters does not fit %s", utf8.RuneCount(b), t)
		}
		w.SetBytes(i, b)
		return nil
	}
	s := str(b)
	if c.kind >= kindDate && len(s) > 3 && s[len(s)-3:] == " BC" {
		return fmt.Errorf("%q is before the year 1, which eddy's temporal types do not hold", s)
	}
	switch c.kind {
	case kindInt:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer: %w", s, err)
		}
		return setInt(w, i, t, n)
	case kindNumeric:
		return setNumeric(w, i, t, s)
	case kindFloat:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number: %w", s, err)
		}
		return setFloat(w, i, t, f)
	case kindBool:
		switch s {
		case "t":
			w.SetBool(i, true)
		case "f":
			w.SetBool(i, false)
		default:
			return fmt.Errorf("%q is not a boolean", s)
		}
		return nil
	case kindBytea:
		if len(b) < 2 || b[0] != '\\' || b[1] != 'x' {
			return fmt.Errorf("a bytea value not in hex format (bytea_output = hex)")
		}
		n := (len(b) - 2) / 2
		if l := t.Length(); l < types.MaxLength && n > l {
			return fmt.Errorf("a value of %d bytes does not fit %s", n, t)
		}
		cv.buf = append(cv.buf[:0], make([]byte, n)...)
		if _, err := hex.Decode(cv.buf, b[2:]); err != nil {
			return fmt.Errorf("a bytea value: %w", err)
		}
		w.SetBytes(i, cv.buf)
		return nil
	case kindDate:
		d, err := types.ParseDate(s)
		if err != nil {
			return fmt.Errorf("%q is not a date eddy holds (years 0001 to 9999): %w", s, err)
		}
		w.SetDate(i, d)
		return nil
	case kindTime:
		v, err := types.ParseTime(s, 9)
		if err != nil {
			return fmt.Errorf("%q is not a time of day eddy holds: %w", s, err)
		}
		w.SetTime(i, v)
		return nil
	case kindTimestamp:
		ts, err := types.ParseTimestamp(s, 9)
		if err != nil {
			return fmt.Errorf("%q is not a timestamp eddy holds (years 0001 to 9999): %w", s, err)
		}
		w.SetTimestamp(i, ts)
		return nil
	case kindTimestampTZ:
		ts, err := parseTimestampTZ(s)
		if err != nil {
			return err
		}
		w.SetTimestamp(i, ts)
		return nil
	}
	return fmt.Errorf("a value of type %s", c.typeName)
}

// parseTimestampTZ reads a timestamptz as the server writes it (ISO, with
// an offset such as +00, +05:30 or -03:00:15) as the instant, a UTC
// timestamp.
func parseTimestampTZ(s string) (types.Timestamp, error) {
	j := len(s) - 1
	for j > 10 && s[j] != '+' && s[j] != '-' {
		j--
	}
	if j <= 10 {
		return types.Timestamp{}, fmt.Errorf("%q is not a timestamp with time zone eddy holds (years 0001 to 9999)", s)
	}
	ts, err := types.ParseTimestamp(s[:j], 9)
	if err != nil {
		return types.Timestamp{}, fmt.Errorf("%q is not a timestamp with time zone eddy holds (years 0001 to 9999): %w", s, err)
	}
	off := 0
	for k, part := range []int{3600, 60, 1} {
		p := j + 1 + 3*k
		if p+2 > len(s) {
			break
		}
		v, err := strconv.Atoi(s[p : p+2])
		if err != nil {
			return types.Timestamp{}, fmt.Errorf("%q has an offset eddy does not read", s)
		}
		off += v * part
	}
	if s[j] == '-' {
		off = -off
	}
	if off == 0 {
		return ts, nil
	}
	// The wall clock minus its offset is the instant.
	return ts.FromLocal(fixedZone(off)), nil
}

// fixedZone returns the zone of a UTC offset in seconds.
func fixedZone(off int) *time.Location { return time.FixedZone("", off) }

func setInt(w *types.RowWriter, i int, t types.Type, n int64) error {
	switch t.Kind() {
	case types.KindTinyInt:
		if n < math.MinInt8 || n > math.MaxInt8 {
			return fmt.Errorf("%d is out of the range of %s", n, t)
		}
	case types.KindSmallInt:
		if n < math.MinInt16 || n > math.MaxInt16 {
			return fmt.Errorf("%d is out of the range of %s", n, t)
		}
	case types.KindInt:
		if n < math.MinInt32 || n > math.MaxInt32 {
			return fmt.Errorf("%d is out of the range of %s", n, t)
		}
	case types.KindBigInt:
	case types.KindFloat:
		w.SetFloat32(i, float32(n))
		return nil
	case types.KindDouble:
		w.SetFloat64(i, float64(n))
		return nil
	case types.KindDecimal:
		if err := w.SetDecimal(i, types.DecimalFromInt64(n)); err != nil {
			return fmt.Errorf("%d is out of the range of %s: %w", n, t, err)
		}
		return nil
	default:
		return fmt.Errorf("an integer cannot be read as %s", t)
	}
	w.SetInt64(i, n)
	return nil
}

func setNumeric(w *types.RowWriter, i int, t types.Type, s string) error {
	switch t.Kind() {
	case types.KindDecimal:
		d, err := types.ParseDecimal(s)
		if err != nil {
			return fmt.Errorf("%q does not fit %s (NaN and infinities have no DECIMAL): %w", s, t, err)
		}
		if d.Scale() > t.Scale() && d.Rescale(t.Scale()).Cmp(d) != 0 {
			return fmt.Errorf("%s has more digits after the point than %s holds: declare the column with a larger scale", s, t)
		}
		f, err := d.Fit(t.Precision(), t.Scale())
		if err != nil {
			return fmt.Errorf("%s is out of the range of %s: %w", s, t, err)
		}
		return w.SetDecimal(i, f)
	case types.KindFloat, types.KindDouble:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number: %w", s, err)
		}
		return setFloat(w, i, t, f)
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("%s is not an integer that %s holds", s, t)
		}
		return setInt(w, i, t, n)
	}
	return fmt.Errorf("a number cannot be read as %s", t)
}

func setFloat(w *types.RowWriter, i int, t types.Type, f float64) error {
	switch t.Kind() {
	case types.KindFloat:
		if !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > math.MaxFloat32 {
			return fmt.Errorf("%g is out of the range of %s", f, t)
		}
		w.SetFloat32(i, float32(f))
	case types.KindDouble:
		w.SetFloat64(i, f)
	case types.KindDecimal:
		d, err := types.DecimalFromFloat64(f)
		if err != nil {
			return fmt.Errorf("%g cannot be read as %s: %w", f, t, err)
		}
		fit, err := d.Fit(t.Precision(), t.Scale())
		if err != nil {
			return fmt.Errorf("%g is out of the range of %s: %w", f, t, err)
		}
		return w.SetDecimal(i, fit)
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		if f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
			return fmt.Errorf("%g is not an integer that %s holds", f, t)
		}
		return setInt(w, i, t, int64(f))
	default:
		return fmt.Errorf("a number cannot be read as %s", t)
	}
	return nil
}

// chunkKeyOf reads the value of an integer chunk key; ok is false for NULL.
func chunkKeyOf(b []byte) (int64, bool, error) {
	if b == nil {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(str(b), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("chunk key %q is not an integer: %w", b, err)
	}
	return n, true, nil
}
