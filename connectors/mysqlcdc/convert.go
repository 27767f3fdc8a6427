package mysqlcdc

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/eddystream/eddy/sql/types"
)

// valueOptions are the options of reading values: 'server-time-zone' and
// 'jdbc.properties.zeroDateTimeBehavior'.
type valueOptions struct {
	zone      *time.Location
	zeroDates string // CONVERT_TO_NULL, ROUND or EXCEPTION
}

// zeroDate handles a zero date ('0000-00-00', with a time or not), which
// no SQL date or timestamp holds, as 'jdbc.properties.zeroDateTimeBehavior'
// says: as text into a STRING column; otherwise NULL (CONVERT_TO_NULL,
// the default; an error for a NOT NULL column), the first day of year 1
// (ROUND), or an error (EXCEPTION). It returns the text to read instead
// and true, or false once it has set the field or failed.
func (o valueOptions) zeroDate(w *types.RowWriter, i int, t types.Type, s string) (string, bool, error) {
	if t.IsString() {
		w.SetString(i, s)
		return "", false, nil
	}
	switch o.zeroDates {
	case "ROUND":
		return "0001-01-01" + s[len("0000-00-00"):], true, nil
	case "EXCEPTION":
		return "", false, fmt.Errorf("the zero date %q and 'jdbc.properties.zeroDateTimeBehavior' is EXCEPTION: set it to CONVERT_TO_NULL (NULL) or ROUND (0001-01-01)", s)
	}
	if !t.IsNullable() {
		return "", false, fmt.Errorf("the zero date %q cannot be read into a NOT NULL column as NULL: declare the column nullable or set 'jdbc.properties.zeroDateTimeBehavior' = 'ROUND' (0001-01-01)", s)
	}
	w.SetNull(i)
	return "", false, nil
}

// setValue sets field i of w (of type t) from a value of column c: a value
// of the snapshot's text protocol (int64, uint64, float64, []byte) or one
// the binary log decoded (the integer types, float32, float64, string,
// []byte), as o says. Text comes from both as the bytes of the column's
// character set, which are decoded to UTF-8. ENUM and SET values come as their names from a
// snapshot and as numbers from the binary log; BIT values as big-endian
// bytes and as a number.
func setValue(w *types.RowWriter, i int, t types.Type, c *column, v any, o valueOptions) error {
	zone := o.zone
	if v == nil {
		w.SetNull(i)
		return nil
	}
	if c.charset != "" {
		// Text, as the bytes of its character set.
		s, ok := textOf(v)
		if ok {
			var err error
			if v, err = decodeText(c, s); err != nil {
				return err
			}
		}
	}
	switch c.dataType {
	case "binary":
		v = padBinary(c, v) // the binary log leaves out trailing zero bytes
	case "float":
		if x, ok := v.(float64); ok {
			v = float32(x) // the snapshot's text of a FLOAT is a double's
		}
	case "enum", "set":
		if n, ok := types.Int64Of(v); ok {
			v = enumText(c, uint64(n))
		}
	case "bit":
		if b, ok := v.([]byte); ok {
			var buf [8]byte
			copy(buf[8-min(len(b), 8):], b[max(len(b)-8, 0):])
			v = int64(binary.BigEndian.Uint64(buf[:]))
		}
		if n, ok := types.Int64Of(v); ok {
			if t.IsBinary() {
				var buf [8]byte
				binary.BigEndian.PutUint64(buf[:], uint64(n))
				w.SetBytes(i, buf[8-bitBytes(c):])
				return nil
			}
			v = uint64(n)
		}
	case "date":
		if s, ok := textOf(v); ok && strings.HasPrefix(s, "0000-00-00") {
			r, read, err := o.zeroDate(w, i, t, s)
			if !read {
				return err
			}
			v = r
		}
	case "datetime", "timestamp":
		if s, ok := textOf(v); ok {
			instant := c.dataType == "timestamp"
			if strings.HasPrefix(s, "0000-00-00") {
				r, read, err := o.zeroDate(w, i, t, s)
				if !read {
					return err
				}
				// A zero date rounded is 0001-01-01 00:00:00 as it is,
				// in no time zone.
				s, zone, instant = r, time.UTC, false
			}
			return setDateTime(w, i, t, s, zone, instant)
		}
	}
	if c.isInteger() {
		if n, ok := types.Int64Of(v); ok && c.unsigned {
			v = unsignedOf(c, v, n)
		}
	}
	switch x := v.(type) {
	case uint64:
		return setUnsigned(w, i, t, x)
	case float32:
		// The shortest decimal that reads back as x, as the server writes
		// a FLOAT's text in a snapshot: 1.1, not 1.100000023841858.
		f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
		return setFloat(w, i, t, f)
	case float64:
		return setFloat(w, i, t, x)
	}
	if n, ok := types.Int64Of(v); ok {
		return setInt(w, i, t, n)
	}
	switch x := v.(type) {
	case []byte:
		if t.IsBinary() {
			w.SetBytes(i, x)
			return nil
		}
		return setText(w, i, t, string(x), zone)
	case string:
		if t.IsBinary() {
			w.SetString(i, x)
			return nil
		}
		return setText(w, i, t, x, zone)
	}
	return fmt.Errorf("a %s value of Go type %T", c.dataType, v)
}

func bitBytes(c *column) int {
	n := 1
	if open := strings.IndexByte(c.columnType, '('); open >= 0 {
		if m, err := strconv.Atoi(strings.TrimSuffix(c.columnType[open+1:], ")")); err == nil {
			n = (m + 7) / 8
		}
	}
	return min(max(n, 1), 8)
}

// unsignedOf reads a signed value the binary log decoded from an unsigned
// column c as the unsigned number it is.
func unsignedOf(c *column, v any, n int64) any {
	switch v.(type) {
	case int8:
		return uint64(uint8(n))
	case int16:
		return uint64(uint16(n))
	case int32:
		if c.dataType == "mediumint" {
			// 24 bits, sign-extended to an int32.
			return uint64(n) & 0xFFFFFF
		}
		return uint64(uint32(n))
	case int64:
		return uint64(n)
	}
	return v
}

// enumText returns the text of an ENUM index or a SET bit mask.
func enumText(c *column, n uint64) string {
	if c.dataType == "enum" {
		if n == 0 || n > uint64(len(c.values)) {
			return "" // MySQL's error value
		}
		return c.values[n-1]
	}
	var b strings.Builder
	for j, name := range c.values {
		if n&(1<<j) != 0 {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(name)
		}
	}
	return b.String()
}

func textOf(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	}
	return "", false
}

func setInt(w *types.RowWriter, i int, t types.Type, n int64) error {
	switch t.Kind() {
	case types.KindBoolean:
		w.SetBool(i, n != 0)
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		if err := w.SetValue(i, n); err != nil {
			return fmt.Errorf("%d does not fit %s: %w", n, t, err)
		}
	case types.KindFloat:
		w.SetFloat32(i, float32(n))
	case types.KindDouble:
		w.SetFloat64(i, float64(n))
	case types.KindDecimal:
		return w.SetDecimal(i, types.DecimalFromInt64(n))
	default:
		if t.IsString() {
			w.SetString(i, strconv.FormatInt(n, 10))
			return nil
		}
		return fmt.Errorf("an integer cannot be read as %s", t)
	}
	return nil
}

func setUnsigned(w *types.RowWriter, i int, t types.Type, n uint64) error {
	if n <= math.MaxInt64 {
		return setInt(w, i, t, int64(n))
	}
	switch {
	case t.Kind() == types.KindDecimal:
		d, err := types.ParseDecimal(strconv.FormatUint(n, 10))
		if err != nil {
			return err
		}
		return w.SetDecimal(i, d)
	case t.IsString():
		w.SetString(i, strconv.FormatUint(n, 10))
		return nil
	case t.Kind() == types.KindDouble:
		w.SetFloat64(i, float64(n))
		return nil
	}
	return fmt.Errorf("%d is out of the range of %s: declare BIGINT UNSIGNED columns DECIMAL(20, 0)", n, t)
}

func setFloat(w *types.RowWriter, i int, t types.Type, f float64) error {
	switch t.Kind() {
	case types.KindFloat:
		w.SetFloat32(i, float32(f))
	case types.KindDouble:
		w.SetFloat64(i, f)
	case types.KindDecimal:
		d, err := types.DecimalFromFloat64(f)
		if err != nil {
			return err
		}
		return w.SetDecimal(i, d)
	default:
		if t.IsString() {
			w.SetString(i, strconv.FormatFloat(f, 'g', -1, 64))
			return nil
		}
		return fmt.Errorf("a number cannot be read as %s", t)
	}
	return nil
}

func setText(w *types.RowWriter, i int, t types.Type, s string, zone *time.Location) error {
	if t.IsString() {
		w.SetString(i, s)
		return nil
	}
	return w.ParseText(i, s, zone)
}

// setDateTime sets a DATETIME or TIMESTAMP value. A DATETIME is a wall
// clock: as a TIMESTAMP it is taken as it is, as a TIMESTAMP_LTZ it is read
// in the server's time zone. A TIMESTAMP is an instant, which the source
// reads in UTC: as a TIMESTAMP_LTZ it is that instant, as a TIMESTAMP the
// wall clock of the server's time zone.
func setDateTime(w *types.RowWriter, i int, t types.Type, s string, zone *time.Location, instant bool) error {
	if t.IsString() {
		w.SetString(i, s)
		return nil
	}
	ts, err := types.ParseTimestamp(s, 9)
	if err != nil {
		return err
	}
	switch {
	case t.Kind() == types.KindTimestampLTZ && !instant:
		ts = ts.FromLocal(zone)
	case t.Kind() == types.KindTimestamp && instant:
		ts = ts.ToLocal(zone)
	case t.Kind() != types.KindTimestamp && t.Kind() != types.KindTimestampLTZ:
		return w.ParseText(i, s, zone)
	}
	w.SetTimestamp(i, ts)
	return nil
}
