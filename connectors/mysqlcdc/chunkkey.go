package mysqlcdc

import (
	"encoding/hex"
	"strconv"
	"strings"
)

// keyOrder is how the server orders the values of a chunk key, for the
// keys whose order the source reproduces exactly: a change of the binary
// log belongs to a chunk by comparing its key with the chunk's bounds,
// which the server chose. A key whose order the source cannot reproduce
// (a string of a case- or accent-insensitive collation, an ENUM, ...) has
// orderNone, and its table is read as one chunk.
type keyOrder uint8

const (
	orderNone keyOrder = iota
	// orderInteger: integers, bounds in decimal.
	orderInteger
	// orderDecimal: DECIMAL numbers, bounds as the server writes them.
	orderDecimal
	// orderText: DATE, DATETIME and TIMESTAMP (in UTC, as the source's
	// sessions and the binary log write them), whose text of a column has
	// one width: bytewise.
	orderText
	// orderBytes: bytewise, every byte counting (NO PAD): BINARY (padded
	// with zero bytes to its length), VARBINARY, and VARCHAR of a *_nopad_bin
	// collation or MySQL's utf8mb4_0900_bin. Bounds are the raw bytes.
	orderBytes
	// orderPadSpace: bytewise, as if the shorter value were padded with
	// spaces (PAD SPACE): CHAR and VARCHAR of a *_bin collation of latin1,
	// ascii, utf8mb3 or utf8mb4, whose byte order is the order of code
	// points. Bounds are the raw bytes.
	orderPadSpace
)

// padSpaceBin are the binary collations of PAD SPACE whose order is the
// order of their strings' bytes; noPadBin those of NO PAD.
var (
	padSpaceBin = map[string]bool{"latin1_bin": true, "ascii_bin": true, "utf8_bin": true, "utf8mb3_bin": true, "utf8mb4_bin": true}
	noPadBin    = map[string]bool{"latin1_nopad_bin": true, "ascii_nopad_bin": true, "utf8_nopad_bin": true,
		"utf8mb3_nopad_bin": true, "utf8mb4_nopad_bin": true, "utf8mb4_0900_bin": true}
)

// keyOrder returns the order of the column's values as a chunk key.
func (c *column) keyOrder() keyOrder {
	if c.isInteger() {
		return orderInteger
	}
	switch c.dataType {
	case "decimal", "numeric":
		return orderDecimal
	case "date", "datetime", "timestamp":
		return orderText
	case "binary", "varbinary":
		return orderBytes
	case "varchar":
		if noPadBin[c.collation] {
			return orderBytes
		}
		if padSpaceBin[c.collation] {
			return orderPadSpace
		}
	case "char":
		// A CHAR value is stored padded with spaces: only PAD SPACE
		// collations compare it as it is read.
		if padSpaceBin[c.collation] {
			return orderPadSpace
		}
	}
	return orderNone
}

// binaryLength is the length of a BINARY(n) column, 0 for other columns.
func (c *column) binaryLength() int {
	if c.dataType != "binary" {
		return 0
	}
	n := 1
	if open := strings.IndexByte(c.columnType, '('); open >= 0 {
		if m, err := strconv.Atoi(strings.TrimSuffix(c.columnType[open+1:], ")")); err == nil {
			n = m
		}
	}
	return n
}

// padBinary returns a value of a BINARY(n) column padded with zero bytes
// to n bytes, as the server stores it and a snapshot reads it: the binary
// log leaves out the trailing zero bytes. Other values are returned as
// they are.
func padBinary(c *column, v any) any {
	n := c.binaryLength()
	if n == 0 {
		return v
	}
	switch x := v.(type) {
	case string:
		if len(x) < n {
			return x + strings.Repeat("\x00", n-len(x))
		}
	case []byte:
		if len(x) < n {
			return append(append([]byte(nil), x...), make([]byte, n-len(x))...)
		}
	}
	return v
}

// compareKeys compares two values of a chunk key of order o, as
// valueText renders them.
func compareKeys(o keyOrder, a, b string) int {
	switch o {
	case orderInteger:
		return compareInts(a, b)
	case orderDecimal:
		return compareDecimals(a, b)
	case orderPadSpace:
		return comparePadSpace(a, b)
	}
	return strings.Compare(a, b)
}

// comparePadSpace compares strings bytewise as if the shorter were padded
// with spaces to the length of the longer, as the server's PAD SPACE
// binary collations do (my_strnncollsp_*_bin): 'a' = 'a  ', 'a' > 'a\t'.
func comparePadSpace(a, b string) int {
	n := min(len(a), len(b))
	if c := strings.Compare(a[:n], b[:n]); c != 0 {
		return c
	}
	sign := 1
	rest := a[n:]
	if len(b) > len(a) {
		sign, rest = -1, b[n:]
	}
	for i := 0; i < len(rest); i++ {
		switch {
		case rest[i] < ' ':
			return -sign
		case rest[i] > ' ':
			return sign
		}
	}
	return 0
}

// compareDecimals compares two decimal numbers as the server writes them
// ('-12.340'): by sign, then the integer part's digits, then the fraction.
func compareDecimals(a, b string) int {
	an, bn := strings.HasPrefix(a, "-"), strings.HasPrefix(b, "-")
	a, b = strings.TrimPrefix(a, "-"), strings.TrimPrefix(b, "-")
	an, bn = an && !isZeroDecimal(a), bn && !isZeroDecimal(b) // -0 is 0
	switch {
	case an && !bn:
		return -1
	case bn && !an:
		return 1
	}
	c := compareMagnitudeDecimals(a, b)
	if an {
		return -c
	}
	return c
}

func compareMagnitudeDecimals(a, b string) int {
	ai, af, _ := strings.Cut(a, ".")
	bi, bf, _ := strings.Cut(b, ".")
	ai, bi = strings.TrimLeft(ai, "0"), strings.TrimLeft(bi, "0")
	if c := compareMagnitudes(ai, bi); c != 0 {
		return c
	}
	af, bf = strings.TrimRight(af, "0"), strings.TrimRight(bf, "0")
	return strings.Compare(af, bf)
}

func isZeroDecimal(s string) bool { return strings.Trim(s, "0.") == "" }

// keyLiteral is the SQL literal of a bound of a chunk key of column c.
func keyLiteral(c *column, o keyOrder, bound string) string {
	switch o {
	case orderInteger, orderDecimal:
		return bound
	case orderText:
		return quoteString(bound)
	}
	lit := "X'" + hex.EncodeToString([]byte(bound)) + "'"
	if c.charset == "" || c.collation == "" {
		return lit
	}
	// The bound's bytes, in the column's character set and collation,
	// whatever the session's.
	return "_" + c.charset + " " + lit + " COLLATE " + c.collation
}

// keySelect is the expression that reads a value of a chunk key of order
// o, given by expr, as keyBound takes it: the bytes of strings in hex, as
// the column stores them, whatever the session's character set.
func keySelect(o keyOrder, expr string) string {
	if o == orderBytes || o == orderPadSpace {
		return "HEX(" + expr + ")"
	}
	return expr
}

// keyBound reads a value keySelect selected as a chunk bound. An empty
// string of PAD SPACE, which is above the strings of control characters,
// is read as a space, which equals it: an empty bound is none.
func keyBound(o keyOrder, s string) string {
	switch o {
	case orderBytes:
		if b, err := hex.DecodeString(s); err == nil {
			return string(b)
		}
	case orderPadSpace:
		if b, err := hex.DecodeString(s); err == nil && len(b) > 0 {
			return string(b)
		} else if err == nil {
			return " "
		}
	}
	return s
}
