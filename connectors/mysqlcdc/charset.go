package mysqlcdc

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The source reads text as the bytes its column stores, in the column's
// character set, from the snapshot (its sessions take results without
// conversion: character_set_results = binary) as from the binary log, which
// carries them so, and decodes them to UTF-8 with the same function: the
// snapshot's values and the binary log's are the same, and keys compare
// with chunk bounds as the stored bytes. A column of a character set the
// source does not decode is refused when the table is described.

// decodesCharset tells whether the source decodes text of character set
// cs, an information_schema CHARACTER_SET_NAME in lower case ("" for a
// column that holds no text).
func decodesCharset(cs string) bool {
	switch cs {
	case "", "binary", "utf8mb4", "utf8mb3", "utf8", "ascii", "latin1":
		return true
	}
	return false
}

// checkCharset refuses a text column of a character set the source does
// not decode.
func checkCharset(t *tableInfo, c *column) error {
	if decodesCharset(c.charset) {
		return nil
	}
	return fmt.Errorf("mysql-cdc: column %q of table %s has the character set %s, which the source does not decode (it decodes utf8mb4, utf8mb3, latin1 and ascii): convert the column (ALTER TABLE %s MODIFY %s ... CHARACTER SET utf8mb4) or leave it out of the SQL table",
		c.name, t.id(), c.charset, quote(t.db)+"."+quote(t.name), quote(c.name))
}

// decodeText returns text of column c, as the bytes of its character set,
// as UTF-8.
func decodeText(c *column, s string) (string, error) {
	switch c.charset {
	case "", "binary", "utf8mb4", "utf8mb3", "utf8":
		return s, nil
	case "latin1":
		return decodeLatin1(s), nil
	case "ascii":
		return decodeASCII(s), nil
	}
	return "", fmt.Errorf("the character set %s is not decoded: convert the column to utf8mb4", c.charset)
}

// latin1High is MySQL's latin1 from 0x80 to 0x9F: Windows-1252, with the
// five bytes it leaves undefined read as the C1 controls of their value,
// as the server converts them. From 0xA0 on a byte is its code point.
var latin1High = [32]rune{
	0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
	0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
}

// decodeLatin1 decodes MySQL's latin1.
func decodeLatin1(s string) string {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + (len(s)-i)*2)
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c < utf8.RuneSelf:
			b.WriteByte(c)
		case c < 0xA0:
			b.WriteRune(latin1High[c-0x80])
		default:
			b.WriteRune(rune(c))
		}
	}
	return b.String()
}

// decodeASCII decodes ascii, a byte above 0x7F (which the column cannot
// store) as '?', as the server converts it.
func decodeASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= utf8.RuneSelf {
					b[j] = '?'
				}
			}
			return string(b)
		}
	}
	return s
}
