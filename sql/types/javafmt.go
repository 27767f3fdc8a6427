package types

import (
	"math"
	"strconv"
)

// AppendJavaFloat appends f as Java's Double.toString (bitSize 64) or
// Float.toString (bitSize 32) writes it, which is what Flink prints and
// what CAST(x AS STRING) gives: the shortest digits that read back as f,
// in plain notation with at least one fractional digit for 1e-3 <= |f| <
// 1e7 ("1.0", "0.001", "1234567.0"), else in scientific notation ("1.0E7",
// "1.0E-4"); NaN, Infinity, -Infinity.
func AppendJavaFloat(dst []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, bitSize) // d[.ddd]e±XX
	var digits [24]byte
	nd := 0
	i := 0
	for ; i < len(e) && e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	exp, _ := strconv.Atoi(string(e[i+1:]))
	if nd == 1 {
		// Java writes at least two digits, the pair closest to f among
		// those that read back as f (4.9E-324, not 5.0E-324).
		two := strconv.AppendFloat(buf[:0], f, 'e', 1, bitSize)
		if back, err := strconv.ParseFloat(string(two), bitSize); err == nil && back == f {
			digits[0], digits[1] = two[0], two[2]
			nd = 2
			exp, _ = strconv.Atoi(string(two[4:]))
			if digits[1] == '0' {
				nd = 1
			}
		}
	}
	if f >= 1e-3 && f < 1e7 {
		if exp >= 0 {
			for k := 0; k <= exp; k++ {
				if k < nd {
					dst = append(dst, digits[k])
				} else {
					dst = append(dst, '0')
				}
			}
			dst = append(dst, '.')
			if exp+1 < nd {
				return append(dst, digits[exp+1:nd]...)
			}
			return append(dst, '0')
		}
		dst = append(dst, '0', '.')
		for k := 0; k < -exp-1; k++ {
			dst = append(dst, '0')
		}
		return append(dst, digits[:nd]...)
	}
	dst = append(dst, digits[0], '.')
	if nd > 1 {
		dst = append(dst, digits[1:nd]...)
	} else {
		dst = append(dst, '0')
	}
	dst = append(dst, 'E')
	return strconv.AppendInt(dst, int64(exp), 10)
}

// appendJavaLocalTime appends Java's LocalTime.toString: HH:mm, then :ss if
// the seconds or nanoseconds are not zero, then the fraction in groups of 3
// digits if not zero.
func appendJavaLocalTime(dst []byte, t Time) []byte {
	h, m, s, n := t.Clock()
	dst = append2(dst, h)
	dst = append(dst, ':')
	dst = append2(dst, m)
	if s == 0 && n == 0 {
		return dst
	}
	dst = append(dst, ':')
	dst = append2(dst, s)
	return appendJavaNanos(dst, n)
}

// appendJavaNanos appends the fraction of a second as java.time does: none
// for 0, else 3, 6 or 9 digits.
func appendJavaNanos(dst []byte, n int) []byte {
	switch {
	case n == 0:
		return dst
	case n%NanosPerMilli == 0:
		return appendPadded(append(dst, '.'), n/NanosPerMilli, 3)
	case n%1000 == 0:
		return appendPadded(append(dst, '.'), n/1000, 6)
	}
	return appendPadded(append(dst, '.'), n, 9)
}

func appendPadded(dst []byte, v, width int) []byte {
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], int64(v), 10)
	for k := len(s); k < width; k++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// appendJavaDate appends Java's LocalDate.toString (years beyond 9999 with
// a '+').
func appendJavaDate(dst []byte, d Date) []byte {
	y, _, _ := d.Civil()
	if y > 9999 {
		dst = append(dst, '+')
	}
	return d.AppendText(dst)
}

// appendJavaPeriod appends Java's Period.toString of Period.of(months/12,
// months%12, 0), as Flink converts an INTERVAL YEAR TO MONTH: "P1Y2M",
// "P0D".
func appendJavaPeriod(dst []byte, months int64) []byte {
	if months == 0 {
		return append(dst, "P0D"...)
	}
	dst = append(dst, 'P')
	if y := months / 12; y != 0 {
		dst = strconv.AppendInt(dst, y, 10)
		dst = append(dst, 'Y')
	}
	if m := months % 12; m != 0 {
		dst = strconv.AppendInt(dst, m, 10)
		dst = append(dst, 'M')
	}
	return dst
}

// appendJavaDuration appends Java's Duration.toString of Duration.ofMillis
// (an INTERVAL DAY TO SECOND): "PT1H2M3.004S", "PT0S", "PT-0.5S".
func appendJavaDuration(dst []byte, millis int64) []byte {
	if millis == 0 {
		return append(dst, "PT0S"...)
	}
	seconds := floorDiv(millis, 1000)
	nanos := floorMod(millis, 1000) * NanosPerMilli
	eff := seconds
	if seconds < 0 && nanos > 0 {
		eff++
	}
	hours := eff / 3600
	minutes := (eff % 3600) / 60
	secs := eff % 60
	dst = append(dst, 'P', 'T')
	start := len(dst)
	if hours != 0 {
		dst = strconv.AppendInt(dst, hours, 10)
		dst = append(dst, 'H')
	}
	if minutes != 0 {
		dst = strconv.AppendInt(dst, minutes, 10)
		dst = append(dst, 'M')
	}
	if secs == 0 && nanos == 0 && len(dst) > start {
		return dst
	}
	if seconds < 0 && nanos > 0 && secs == 0 {
		dst = append(dst, "-0"...)
	} else {
		dst = strconv.AppendInt(dst, secs, 10)
	}
	if nanos > 0 {
		pos := len(dst)
		if seconds < 0 {
			dst = strconv.AppendInt(dst, 2*NanosPerSecond-nanos, 10)
		} else {
			dst = strconv.AppendInt(dst, nanos+NanosPerSecond, 10)
		}
		for dst[len(dst)-1] == '0' {
			dst = dst[:len(dst)-1]
		}
		dst[pos] = '.'
	}
	return append(dst, 'S')
}
