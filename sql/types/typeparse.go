package types

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// ParseType parses a type in Flink's SQL syntax, as written in DDL or
// printed by String: BOOLEAN, TINYINT, SMALLINT, INT/INTEGER, BIGINT,
// FLOAT/REAL, DOUBLE [PRECISION], DECIMAL/DEC/NUMERIC[(p[, s])], CHAR[(n)],
// VARCHAR[(n)], STRING, BINARY[(n)], VARBINARY[(n)], BYTES, DATE, TIME[(p)],
// TIMESTAMP[(p)] [WITHOUT TIME ZONE | WITH LOCAL TIME ZONE],
// TIMESTAMP_LTZ[(p)], INTERVAL YEAR[(p)] [TO MONTH] and the other interval
// qualifiers, ROW<name type, ...> (or ROW(...)), ARRAY<T>, MAP<K, V>,
// MULTISET<T>, NULL, each optionally followed by NOT NULL or NULL. Keywords
// are case-insensitive; field names may be quoted in backticks.
func ParseType(s string) (Type, error) {
	p := &typeParser{src: s}
	p.next()
	t, err := p.parseType()
	if err != nil {
		return Type{}, err
	}
	if p.tok != "" {
		return Type{}, p.errorf("unexpected %q after the type", p.tok)
	}
	return t, nil
}

// MustParseType is ParseType for types known to be valid; it panics on an
// error.
func MustParseType(s string) Type {
	t, err := ParseType(s)
	if err != nil {
		panic(err)
	}
	return t
}

type typeParser struct {
	src    string
	pos    int
	tok    string // the current token, "" at the end
	quoted bool   // the token was a `quoted` identifier
}

func (p *typeParser) errorf(format string, args ...any) error {
	return fmt.Errorf("types: cannot parse type %q at column %d: %s", p.src, p.pos+1, fmt.Sprintf(format, args...))
}

func (p *typeParser) next() {
	for p.pos < len(p.src) && unicode.IsSpace(rune(p.src[p.pos])) {
		p.pos++
	}
	p.quoted = false
	if p.pos >= len(p.src) {
		p.tok = ""
		return
	}
	c := p.src[p.pos]
	switch {
	case c == '`':
		var b strings.Builder
		i := p.pos + 1
		for i < len(p.src) {
			if p.src[i] == '`' {
				if i+1 < len(p.src) && p.src[i+1] == '`' {
					b.WriteByte('`')
					i += 2
					continue
				}
				break
			}
			b.WriteByte(p.src[i])
			i++
		}
		p.tok, p.quoted = b.String(), true
		p.pos = i + 1
	case c == '_' || unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)):
		i := p.pos
		for i < len(p.src) && (p.src[i] == '_' || p.src[i] >= 0x80 || unicode.IsLetter(rune(p.src[i])) || unicode.IsDigit(rune(p.src[i]))) {
			i++
		}
		p.tok = p.src[p.pos:i]
		p.pos = i
	default:
		p.tok = string(c)
		p.pos++
	}
}

func (p *typeParser) is(kw string) bool { return !p.quoted && strings.EqualFold(p.tok, kw) }

func (p *typeParser) expect(tok string) error {
	if !p.is(tok) {
		got := p.tok
		if got == "" {
			got = "the end"
		}
		return p.errorf("expected %s, found %q", tok, got)
	}
	p.next()
	return nil
}

// params parses an optional (n[, m]) and returns the numbers given.
func (p *typeParser) params() ([]int, error) {
	if !p.is("(") {
		return nil, nil
	}
	p.next()
	var out []int
	for {
		n, err := strconv.Atoi(p.tok)
		if err != nil {
			return nil, p.errorf("expected a number, found %q", p.tok)
		}
		out = append(out, n)
		p.next()
		if p.is(")") {
			p.next()
			return out, nil
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
	}
}

func (p *typeParser) parseType() (t Type, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = p.errorf("%v", r)
		}
	}()
	t, err = p.parseBase()
	if err != nil {
		return Type{}, err
	}
	switch {
	case p.is("NOT"):
		p.next()
		if err := p.expect("NULL"); err != nil {
			return Type{}, err
		}
		t = t.NotNull()
	case p.is("NULL"):
		p.next()
	}
	return t, nil
}

func (p *typeParser) parseBase() (Type, error) {
	name := strings.ToUpper(p.tok)
	if p.tok == "" || p.quoted {
		return Type{}, p.errorf("expected a type, found %q", p.tok)
	}
	p.next()
	one := func(def, lo, hi int) (int, error) {
		ps, err := p.params()
		if err != nil {
			return 0, err
		}
		switch len(ps) {
		case 0:
			return def, nil
		case 1:
			if ps[0] < lo || ps[0] > hi {
				return 0, p.errorf("%s(%d) is out of range; use %d to %d", name, ps[0], lo, hi)
			}
			return ps[0], nil
		}
		return 0, p.errorf("%s takes one parameter", name)
	}
	switch name {
	case "BOOLEAN", "BOOL":
		return Boolean(), nil
	case "TINYINT":
		return TinyInt(), nil
	case "SMALLINT":
		return SmallInt(), nil
	case "INT", "INTEGER":
		return Int(), nil
	case "BIGINT":
		return BigInt(), nil
	case "FLOAT", "REAL":
		return Float(), nil
	case "DOUBLE":
		if p.is("PRECISION") {
			p.next()
		}
		return Double(), nil
	case "DECIMAL", "DEC", "NUMERIC":
		ps, err := p.params()
		if err != nil {
			return Type{}, err
		}
		prec, scale := DefaultDecimalPrecision, DefaultDecimalScale
		if len(ps) > 0 {
			prec = ps[0]
			scale = 0
		}
		if len(ps) > 1 {
			scale = ps[1]
		}
		if len(ps) > 2 {
			return Type{}, p.errorf("DECIMAL takes at most two parameters")
		}
		if err := CheckDecimal(prec, scale); err != nil {
			return Type{}, err
		}
		return DecimalType(prec, scale), nil
	case "CHAR", "CHARACTER":
		if p.is("VARYING") {
			p.next()
			n, err := one(1, 1, MaxLength)
			return VarChar(n), err
		}
		n, err := one(1, 1, MaxLength)
		return Char(n), err
	case "VARCHAR":
		n, err := one(1, 1, MaxLength)
		return VarChar(n), err
	case "STRING":
		return String(), nil
	case "BINARY":
		n, err := one(1, 1, MaxLength)
		return Binary(n), err
	case "VARBINARY":
		n, err := one(1, 1, MaxLength)
		return VarBinary(n), err
	case "BYTES":
		return Bytes(), nil
	case "DATE":
		return DateType(), nil
	case "TIME":
		n, err := one(0, 0, MaxTimePrecision)
		if err == nil && p.is("WITHOUT") {
			err = p.zone(false)
		}
		return TimeType(n), err
	case "TIMESTAMP":
		n, err := one(DefaultTimestampPrecision, 0, MaxTimePrecision)
		if err != nil {
			return Type{}, err
		}
		if p.is("WITHOUT") {
			return TimestampType(n), p.zone(false)
		}
		if p.is("WITH") {
			return TimestampLTZType(n), p.zone(true)
		}
		return TimestampType(n), nil
	case "TIMESTAMP_LTZ":
		n, err := one(DefaultTimestampPrecision, 0, MaxTimePrecision)
		return TimestampLTZType(n), err
	case "INTERVAL":
		return p.interval()
	case "NULL":
		return NullType(), nil
	case "ARRAY", "MULTISET":
		if err := p.expect("<"); err != nil {
			return Type{}, err
		}
		e, err := p.parseType()
		if err != nil {
			return Type{}, err
		}
		if err := p.expect(">"); err != nil {
			return Type{}, err
		}
		if name == "ARRAY" {
			return ArrayOf(e), nil
		}
		return MultisetOf(e), nil
	case "MAP":
		if err := p.expect("<"); err != nil {
			return Type{}, err
		}
		k, err := p.parseType()
		if err != nil {
			return Type{}, err
		}
		if err := p.expect(","); err != nil {
			return Type{}, err
		}
		v, err := p.parseType()
		if err != nil {
			return Type{}, err
		}
		if err := p.expect(">"); err != nil {
			return Type{}, err
		}
		return MapOf(k, v), nil
	case "ROW":
		closeTok := ">"
		if p.is("(") {
			closeTok = ")"
		} else if !p.is("<") {
			return Type{}, p.errorf("expected < after ROW")
		}
		p.next()
		var fs []Field
		for !p.is(closeTok) {
			if p.tok == "" {
				return Type{}, p.errorf("unterminated ROW")
			}
			fname := p.tok
			p.next()
			ft, err := p.parseType()
			if err != nil {
				return Type{}, err
			}
			if p.quoted && p.tok != "" { // a COMMENT 'text' is not supported
				return Type{}, p.errorf("unexpected %q", p.tok)
			}
			fs = append(fs, F(fname, ft))
			if p.is(",") {
				p.next()
			}
		}
		p.next()
		rt, err := NewRowType(fs...)
		if err != nil {
			return Type{}, err
		}
		return rt.Type(), nil
	}
	return Type{}, p.errorf("unknown type %s", name)
}

func (p *typeParser) zone(local bool) error {
	p.next() // WITH or WITHOUT
	if local {
		if err := p.expect("LOCAL"); err != nil {
			return err
		}
	}
	if err := p.expect("TIME"); err != nil {
		return err
	}
	return p.expect("ZONE")
}

// interval parses the qualifier after INTERVAL, collapsing it to its
// family.
func (p *typeParser) interval() (Type, error) {
	unit := strings.ToUpper(p.tok)
	p.next()
	if _, err := p.params(); err != nil {
		return Type{}, err
	}
	if p.is("TO") {
		p.next()
		p.next()
		if _, err := p.params(); err != nil {
			return Type{}, err
		}
	}
	switch unit {
	case "YEAR", "MONTH":
		return IntervalYearMonth(), nil
	case "DAY", "HOUR", "MINUTE", "SECOND":
		return IntervalDayTime(), nil
	}
	return Type{}, p.errorf("unknown interval unit %s", unit)
}
