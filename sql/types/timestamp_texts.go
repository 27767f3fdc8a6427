package types

// TimestampTexts appends the text of timestamps (Timestamp.AppendFormat)
// that mostly fall in the second of the one before, as a column of event
// times does: it keeps the text of the last second it wrote, and writes a
// timestamp of that second as a copy of it and the fraction. The zero
// value is ready for use; it is not safe for concurrent use.
type TimestampTexts struct {
	valid  bool
	sec    int64
	prefix []byte
}

// AppendFormat appends ts.AppendFormat(precision).
func (c *TimestampTexts) AppendFormat(dst []byte, ts Timestamp, precision int) []byte {
	sec := ts.Millis / 1000
	if ts.Millis%1000 < 0 {
		sec--
	}
	if !c.valid || sec != c.sec {
		// The second's text, with no fraction: appendSQL writes none
		// for a whole second and no digits asked for.
		c.prefix = Timestamp{Millis: sec * 1000}.appendSQL(c.prefix[:0], ' ', 0)
		c.valid, c.sec = true, sec
	}
	dst = append(dst, c.prefix...)
	return appendFractionMin(dst, int(ts.Millis-sec*1000)*1_000_000+int(ts.NanoOfMilli), precision)
}
