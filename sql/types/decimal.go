package types

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
)

// ErrOverflow is wrapped by the errors of values that do not fit their type:
// a DECIMAL beyond its precision, an integer beyond its range. Flink's
// arithmetic on DECIMAL gives NULL where eddy's Decimal methods return this
// error; the expression compiler decides which to surface.
var ErrOverflow = errors.New("value out of range")

// ErrDivisionByZero is wrapped by the errors of a division or modulo by
// zero.
var ErrDivisionByZero = errors.New("division by zero")

// Decimal is an exact decimal number: an unscaled integer and a scale, the
// value being unscaled * 10^-scale. Values whose unscaled integer fits in an
// int64 (every DECIMAL with precision <= 18) use no heap; larger ones use
// math/big. A Decimal carries no precision: the type it is stored as does
// (see Fit). The zero Decimal is 0 with scale 0. Compare with Cmp, not ==.
type Decimal struct {
	u     int64    // the unscaled value when b is nil
	b     *big.Int // the unscaled value when it does not fit in an int64
	scale int32
}

var pow10 = func() [19]int64 {
	var p [19]int64
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

var bigTen = big.NewInt(10)

func bigPow10(n int) *big.Int {
	if n < len(pow10) {
		return big.NewInt(pow10[n])
	}
	return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil)
}

// NewDecimal returns unscaled * 10^-scale.
func NewDecimal(unscaled int64, scale int) Decimal {
	return Decimal{u: unscaled, scale: int32(scale)}
}

// DecimalFromBig returns unscaled * 10^-scale; unscaled is not retained.
func DecimalFromBig(unscaled *big.Int, scale int) Decimal {
	return normBig(new(big.Int).Set(unscaled), int32(scale))
}

// normBig returns the decimal of b (which it may keep), in the int64 form
// when it fits.
func normBig(b *big.Int, scale int32) Decimal {
	if b.IsInt64() {
		return Decimal{u: b.Int64(), scale: scale}
	}
	return Decimal{b: b, scale: scale}
}

// DecimalFromInt64 returns v with scale 0.
func DecimalFromInt64(v int64) Decimal { return Decimal{u: v} }

// DecimalFromFloat64 returns the decimal of the shortest text that reads
// back as f (Java's BigDecimal.valueOf(double), which Flink's casts use).
// NaN and infinities are refused.
func DecimalFromFloat64(f float64) (Decimal, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Decimal{}, fmt.Errorf("types: %v has no DECIMAL value: %w", f, ErrOverflow)
	}
	return ParseDecimal(strconv.FormatFloat(f, 'g', -1, 64))
}

// ParseDecimal parses a decimal number: an optional sign, digits with an
// optional point, an optional exponent (1.5, -.5, 12e-3, +7E2); blanks
// around it are ignored. The scale is the number of digits after the point
// less the exponent, at least 0.
func ParseDecimal(s string) (Decimal, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return Decimal{}, fmt.Errorf("types: %q is not a decimal number: it is empty", s)
	}
	i, neg := 0, false
	if t[0] == '+' || t[0] == '-' {
		neg = t[0] == '-'
		i++
	}
	digits := make([]byte, 0, len(t))
	scale, point, nd := 0, false, 0
	for ; i < len(t); i++ {
		c := t[i]
		if c >= '0' && c <= '9' {
			digits = append(digits, c)
			nd++
			if point {
				scale++
			}
		} else if c == '.' && !point {
			point = true
		} else {
			break
		}
	}
	if nd == 0 {
		return Decimal{}, fmt.Errorf("types: %q is not a decimal number: it has no digits", s)
	}
	if i < len(t) {
		if t[i] != 'e' && t[i] != 'E' {
			return Decimal{}, fmt.Errorf("types: %q is not a decimal number: unexpected %q", s, t[i:])
		}
		exp, err := strconv.Atoi(t[i+1:])
		if err != nil || len(t[i+1:]) == 0 || t[i+1] == ' ' {
			return Decimal{}, fmt.Errorf("types: %q is not a decimal number: bad exponent %q", s, t[i+1:])
		}
		if exp > 10000 || exp < -10000 {
			return Decimal{}, fmt.Errorf("types: %q is out of range for a decimal: %w", s, ErrOverflow)
		}
		scale -= exp
	}
	if neg {
		digits = append([]byte{'-'}, digits...)
	}
	var d Decimal
	if len(digits) <= 18 {
		u, _ := strconv.ParseInt(string(digits), 10, 64)
		d = Decimal{u: u}
	} else {
		b, _ := new(big.Int).SetString(string(digits), 10)
		d = normBig(b, 0)
	}
	if scale < 0 {
		if -scale > 200 {
			return Decimal{}, fmt.Errorf("types: %q is out of range for a decimal: %w", s, ErrOverflow)
		}
		d = d.mulPow10(-scale)
		scale = 0
	}
	if scale > 400 {
		// Far beyond any DECIMAL scale: round it away now.
		d.scale = int32(scale)
		return d.Rescale(2 * MaxDecimalPrecision), nil
	}
	d.scale = int32(scale)
	return d, nil
}

// MustParseDecimal is ParseDecimal for literals known to be valid; it
// panics on an error.
func MustParseDecimal(s string) Decimal {
	d, err := ParseDecimal(s)
	if err != nil {
		panic(err)
	}
	return d
}

// Scale returns the scale.
func (d Decimal) Scale() int { return int(d.scale) }

// Unscaled returns the unscaled value if it fits in an int64.
func (d Decimal) Unscaled() (int64, bool) { return d.u, d.b == nil }

// BigUnscaled returns the unscaled value as a new big.Int.
func (d Decimal) BigUnscaled() *big.Int {
	if d.b != nil {
		return new(big.Int).Set(d.b)
	}
	return big.NewInt(d.u)
}

func (d Decimal) bigU() *big.Int {
	if d.b != nil {
		return d.b
	}
	return big.NewInt(d.u)
}

// Sign returns -1, 0 or +1.
func (d Decimal) Sign() int {
	if d.b != nil {
		return d.b.Sign()
	}
	switch {
	case d.u < 0:
		return -1
	case d.u > 0:
		return 1
	}
	return 0
}

// IsZero reports whether d is 0.
func (d Decimal) IsZero() bool { return d.b == nil && d.u == 0 }

// Digits returns the number of digits of the unscaled value (1 for 0): the
// precision it needs.
func (d Decimal) Digits() int {
	if d.b != nil {
		return len(new(big.Int).Abs(d.b).String())
	}
	return digits64(d.u)
}

func digits64(v int64) int {
	a := uint64(v)
	if v < 0 {
		a = uint64(-v)
	}
	n := 1
	for n < 19 && a >= uint64(pow10[n]) {
		n++
	}
	return n
}

// mulPow10 multiplies the unscaled value by 10^n, keeping the scale.
func (d Decimal) mulPow10(n int) Decimal {
	if n == 0 {
		return d
	}
	if d.b == nil && n < len(pow10) {
		hi, lo := bits.Mul64(uabs(d.u), uint64(pow10[n]))
		if hi == 0 && lo <= math.MaxInt64 {
			v := int64(lo)
			if d.u < 0 {
				v = -v
			}
			return Decimal{u: v, scale: d.scale}
		}
	}
	return normBig(new(big.Int).Mul(d.bigU(), bigPow10(n)), d.scale)
}

func uabs(v int64) uint64 {
	if v < 0 {
		return uint64(-v)
	}
	return uint64(v)
}

// Rescale returns d with the given scale, rounding HALF_UP (away from zero
// at a tie) when digits are dropped.
func (d Decimal) Rescale(scale int) Decimal {
	diff := scale - int(d.scale)
	if diff >= 0 {
		r := d.mulPow10(diff)
		r.scale = int32(scale)
		return r
	}
	k := -diff
	if d.b == nil && k < len(pow10) {
		p := uint64(pow10[k])
		a := uabs(d.u)
		q, r := a/p, a%p
		if r >= p-r { // 2r >= p without overflow
			q++
		}
		v := int64(q)
		if d.u < 0 {
			v = -v
		}
		return Decimal{u: v, scale: int32(scale)}
	}
	if d.b == nil && k >= len(pow10) {
		return Decimal{scale: int32(scale)} // |u| < 10^19 <= 10^k / 2
	}
	a := new(big.Int).Abs(d.b)
	p := bigPow10(k)
	q, r := new(big.Int).QuoRem(a, p, new(big.Int))
	if r.Lsh(r, 1).Cmp(p) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if d.b.Sign() < 0 {
		q.Neg(q)
	}
	return normBig(q, int32(scale))
}

// Fit returns d rounded HALF_UP to scale, or an error wrapping ErrOverflow
// if it then has more than precision digits: the value of d as a
// DECIMAL(precision, scale).
func (d Decimal) Fit(precision, scale int) (Decimal, error) {
	if d.b == nil && int(d.scale) == scale && (precision >= len(pow10) || (d.u < pow10[precision] && d.u > -pow10[precision])) {
		return d, nil // an int64 has at most 19 digits
	}
	r := d.Rescale(scale)
	if r.Digits() > precision {
		return Decimal{}, fmt.Errorf("types: %s does not fit DECIMAL(%d, %d): %w", d, precision, scale, ErrOverflow)
	}
	return r, nil
}

// align returns the unscaled values of d and e at their common (larger)
// scale.
func align(d, e Decimal) (Decimal, Decimal, int32) {
	s := max(d.scale, e.scale)
	return d.Rescale(int(s)), e.Rescale(int(s)), s
}

// Neg returns -d.
func (d Decimal) Neg() Decimal {
	if d.b == nil && d.u != math.MinInt64 {
		return Decimal{u: -d.u, scale: d.scale}
	}
	return normBig(new(big.Int).Neg(d.bigU()), d.scale)
}

// Abs returns |d|.
func (d Decimal) Abs() Decimal {
	if d.Sign() < 0 {
		return d.Neg()
	}
	return d
}

// add returns d+e exactly.
func (d Decimal) add(e Decimal) Decimal {
	a, b, s := align(d, e)
	if a.b == nil && b.b == nil {
		sum := a.u + b.u
		// Overflow iff both operands have the sign the sum lacks.
		if (a.u^sum)&(b.u^sum) >= 0 {
			return Decimal{u: sum, scale: s}
		}
	}
	return normBig(new(big.Int).Add(a.bigU(), b.bigU()), s)
}

// mul returns d*e exactly.
func (d Decimal) mul(e Decimal) Decimal {
	s := d.scale + e.scale
	if d.b == nil && e.b == nil {
		hi, lo := bits.Mul64(uabs(d.u), uabs(e.u))
		if hi == 0 && lo <= math.MaxInt64 {
			v := int64(lo)
			if (d.u < 0) != (e.u < 0) {
				v = -v
			}
			return Decimal{u: v, scale: s}
		}
	}
	return normBig(new(big.Int).Mul(d.bigU(), e.bigU()), s)
}

// Add returns d+e as a DECIMAL(precision, scale), rounded HALF_UP; an error
// wrapping ErrOverflow if it does not fit. AddType gives Flink's result
// type.
func (d Decimal) Add(e Decimal, precision, scale int) (Decimal, error) {
	return d.add(e).Fit(precision, scale)
}

// Sub returns d-e as a DECIMAL(precision, scale), like Add.
func (d Decimal) Sub(e Decimal, precision, scale int) (Decimal, error) {
	return d.add(e.Neg()).Fit(precision, scale)
}

// Mul returns d*e as a DECIMAL(precision, scale), like Add.
func (d Decimal) Mul(e Decimal, precision, scale int) (Decimal, error) {
	return d.mul(e).Fit(precision, scale)
}

// Div returns d/e as a DECIMAL(precision, scale), rounded HALF_UP at the
// scale; errors wrap ErrDivisionByZero or ErrOverflow.
func (d Decimal) Div(e Decimal, precision, scale int) (Decimal, error) {
	if e.IsZero() {
		return Decimal{}, fmt.Errorf("types: %s / %s: %w", d, e, ErrDivisionByZero)
	}
	// d/e = (ud/ue) * 10^(se-sd); we want q = ud*10^(scale+se-sd) / ue.
	k := scale + int(e.scale) - int(d.scale)
	num, den := d.bigU(), e.bigU()
	if k >= 0 {
		num = new(big.Int).Mul(num, bigPow10(k))
	} else {
		den = new(big.Int).Mul(den, bigPow10(-k))
	}
	neg := num.Sign()*den.Sign() < 0
	na, da := new(big.Int).Abs(num), new(big.Int).Abs(den)
	q, r := new(big.Int).QuoRem(na, da, new(big.Int))
	if r.Lsh(r, 1).Cmp(da) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	return normBig(q, int32(scale)).Fit(precision, scale)
}

// Mod returns the remainder of d/e (its sign that of d, as Java's
// BigDecimal.remainder) as a DECIMAL(precision, scale); errors wrap
// ErrDivisionByZero or ErrOverflow.
func (d Decimal) Mod(e Decimal, precision, scale int) (Decimal, error) {
	if e.IsZero() {
		return Decimal{}, fmt.Errorf("types: %s %% %s: %w", d, e, ErrDivisionByZero)
	}
	a, b, s := align(d, e)
	if a.b == nil && b.b == nil && !(a.u == math.MinInt64 && b.u == -1) {
		return Decimal{u: a.u % b.u, scale: s}.Fit(precision, scale)
	}
	return normBig(new(big.Int).Rem(a.bigU(), b.bigU()), s).Fit(precision, scale)
}

// Cmp compares d and e by value (1.0 equals 1.00): -1, 0 or +1.
func (d Decimal) Cmp(e Decimal) int {
	if d.scale == e.scale && d.b == nil && e.b == nil {
		switch {
		case d.u < e.u:
			return -1
		case d.u > e.u:
			return 1
		}
		return 0
	}
	ds, es := d.Sign(), e.Sign()
	if ds != es {
		if ds < es {
			return -1
		}
		return 1
	}
	a, b, _ := align(d, e)
	if a.b == nil && b.b == nil {
		switch {
		case a.u < b.u:
			return -1
		case a.u > b.u:
			return 1
		}
		return 0
	}
	return a.bigU().Cmp(b.bigU())
}

// Equal reports whether d and e have the same value (regardless of scale).
func (d Decimal) Equal(e Decimal) bool { return d.Cmp(e) == 0 }

// Float64 returns the nearest float64.
func (d Decimal) Float64() float64 {
	if d.b == nil && d.scale == 0 {
		return float64(d.u)
	}
	f, _ := strconv.ParseFloat(d.String(), 64)
	return f
}

// Int64 returns the integral part of d (truncated toward zero, as Flink's
// casts of DECIMAL to integers do) and whether it fits in an int64.
func (d Decimal) Int64() (int64, bool) {
	if d.scale == 0 && d.b == nil {
		return d.u, true
	}
	var q Decimal
	if d.b == nil && int(d.scale) < len(pow10) {
		q = Decimal{u: d.u / pow10[d.scale]}
	} else {
		q = normBig(new(big.Int).Quo(d.bigU(), bigPow10(int(d.scale))), 0)
	}
	return q.u, q.b == nil
}

// String returns d in plain notation with exactly Scale digits after the
// point ("-0.50", "12"): the text of CAST(d AS STRING).
func (d Decimal) String() string { return string(d.AppendText(nil)) }

// AppendText appends the plain form of d (see String).
func (d Decimal) AppendText(dst []byte) []byte {
	var digits []byte
	var buf [24]byte
	neg := false
	if d.b == nil {
		digits = strconv.AppendUint(buf[:0], uabs(d.u), 10)
		neg = d.u < 0
	} else {
		digits = new(big.Int).Abs(d.b).Append(buf[:0], 10)
		neg = d.b.Sign() < 0
	}
	if neg {
		dst = append(dst, '-')
	}
	s := int(d.scale)
	if s == 0 {
		return append(dst, digits...)
	}
	if len(digits) <= s {
		dst = append(dst, '0', '.')
		for i := len(digits); i < s; i++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[:len(digits)-s]...)
	dst = append(dst, '.')
	return append(dst, digits[len(digits)-s:]...)
}

// JavaString returns d as Java's BigDecimal.toString writes it (Flink's
// print connector and JSON encoder use it): plain notation unless the
// adjusted exponent is below -6, then scientific ("1.0E-7", "0E-8").
func (d Decimal) JavaString() string {
	n := d.Digits()
	adjusted := -int(d.scale) + n - 1
	if adjusted >= -6 {
		return d.String()
	}
	var digits string
	neg := d.Sign() < 0
	if d.b == nil {
		digits = strconv.FormatUint(uabs(d.u), 10)
	} else {
		digits = new(big.Int).Abs(d.b).String()
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteByte(digits[0])
	if len(digits) > 1 {
		b.WriteByte('.')
		b.WriteString(digits[1:])
	}
	b.WriteString("E")
	b.WriteString(strconv.Itoa(adjusted))
	return b.String()
}

// appendInt64Bytes appends the big-endian two's complement of v in as few
// bytes as hold it, sign bit included (Java's BigInteger.toByteArray of a
// long): 1 to 8 bytes.
func appendInt64Bytes(dst []byte, v int64) []byte {
	u := uint64(v)
	if v < 0 {
		u = ^u
	}
	// The magnitude's bits plus a sign bit, rounded up to bytes.
	n := (bits.Len64(u) + 8) / 8
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(v))
	return append(dst, b[8-n:]...)
}

// decimalBytes returns the big-endian two's complement of the unscaled
// value in as few bytes as hold it (Java's BigInteger.toByteArray): the
// variable-length encoding of DECIMAL(p > 18).
func (d Decimal) appendBytes(dst []byte) []byte {
	if d.b == nil {
		return appendInt64Bytes(dst, d.u)
	}
	if d.b.Sign() >= 0 {
		bs := d.b.Bytes()
		if bs[0]&0x80 != 0 {
			dst = append(dst, 0)
		}
		return append(dst, bs...)
	}
	// Two's complement of a negative value: ~(|v|-1).
	m := new(big.Int).Sub(new(big.Int).Neg(d.b), big.NewInt(1))
	bs := m.Bytes()
	start := len(dst)
	if len(bs) == 0 || bs[0]&0x80 != 0 {
		dst = append(dst, 0)
	}
	dst = append(dst, bs...)
	for i := start; i < len(dst); i++ {
		dst[i] = ^dst[i]
	}
	return dst
}

// decimalFromBytes decodes appendBytes's encoding.
func decimalFromBytes(b string, scale int) Decimal {
	if len(b) <= 8 {
		var v int64
		if len(b) > 0 && b[0]&0x80 != 0 {
			v = -1
		}
		for i := 0; i < len(b); i++ {
			v = v<<8 | int64(b[i])
		}
		return Decimal{u: v, scale: int32(scale)}
	}
	x := new(big.Int).SetBytes([]byte(b))
	if b[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return normBig(x, int32(scale))
}
