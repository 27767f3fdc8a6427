package datagen

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// rng is splitmix64: a tiny generator whose whole state is one word, so
// that each value can be seeded from the row's number and its column.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// float returns a number in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// between returns an integer in [lo, hi].
func (r *rng) between(lo, hi int64) int64 {
	span := uint64(hi-lo) + 1
	if span == 0 {
		return int64(r.next())
	}
	return lo + int64(r.next()%span)
}

// seed returns the generator of column col in row n.
func seed(n int64, col int) rng {
	r := rng{uint64(n)*0xD6E8FEB86659FD93 ^ uint64(col+1)*0xA0761D6478BD642F}
	r.next()
	return r
}

// column generates the values of one column.
type column struct {
	name     string
	t        types.Type
	nullRate float64
	// seq is set for a sequence: the value of row n is start + n.
	seq        bool
	start, end int64
	random     func(r *rng, now time.Time) types.Value
}

// count returns how many values a sequence has.
func (c *column) count() int64 { return c.end - c.start + 1 }

// value returns the column's value in row n.
func (c *column) value(n int64, col int, now time.Time) types.Value {
	r := seed(n, col)
	if c.nullRate > 0 && r.float() < c.nullRate {
		return nil
	}
	if c.seq {
		return sequenceValue(c.t, c.start+n)
	}
	return c.random(&r, now)
}

func sequenceValue(t types.Type, v int64) types.Value {
	switch {
	case t.IsIntegral():
		return v
	case t.Kind() == types.KindFloat:
		return float32(v)
	case t.Kind() == types.KindDouble:
		return float64(v)
	case t.Kind() == types.KindDecimal:
		return types.DecimalFromInt64(v).Rescale(t.Scale())
	}
	return strconv.FormatInt(v, 10)
}

// colOptions reads the options of one column.
type colOptions struct {
	o    connector.Options
	name string
}

func (c colOptions) key(opt string) string { return "fields." + c.name + "." + opt }
func (c colOptions) set(opt string) bool   { return c.o.IsSet(c.key(opt)) }
func (c colOptions) str(opt string) string { return c.o.String(c.key(opt)) }
func (c colOptions) bad(opt, problem string, args ...any) error {
	return &connector.OptionError{Connector: spec.Name, Key: c.key(opt), Problem: fmt.Sprintf(problem, args...)}
}

// only refuses the options that do not apply to the column's type.
func (c colOptions) only(t types.Type, allowed ...string) error {
	for _, opt := range []string{"min", "max", "max-past", "length", "var-len", "start", "end"} {
		if c.set(opt) && !contains(allowed, opt) {
			return c.bad(opt, "does not apply to column %s of type %s", c.name, t)
		}
	}
	return nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// newColumn compiles the generator of a column from its options.
func newColumn(name string, t types.Type, o connector.Options) (*column, error) {
	co := colOptions{o, name}
	c := &column{name: name, t: t, nullRate: o.Float(co.key("null-rate"))}
	if !t.IsNullable() && c.nullRate > 0 {
		return nil, co.bad("null-rate", "= '%v' but column %s is NOT NULL", c.nullRate, name)
	}
	if o.String(co.key("kind")) == "sequence" {
		if !(t.IsNumeric() || t.IsString()) {
			return nil, co.bad("kind", "= 'sequence' but column %s is %s; sequences are of numbers and strings", name, t)
		}
		if err := co.only(t, "start", "end"); err != nil {
			return nil, err
		}
		for _, opt := range []string{"start", "end"} {
			if !co.set(opt) {
				return nil, co.bad(opt, "is required for the sequence of column %s", name)
			}
		}
		var err error
		if c.start, err = seqBound(co, "start", t); err != nil {
			return nil, err
		}
		if c.end, err = seqBound(co, "end", t); err != nil {
			return nil, err
		}
		if c.end < c.start {
			return nil, co.bad("end", "= '%d' is before 'fields.%s.start' = '%d'", c.end, name, c.start)
		}
		if c.end-c.start < 0 || c.end-c.start == math.MaxInt64 {
			return nil, co.bad("end", "makes a sequence too long to count; shorten it")
		}
		c.seq = true
		return c, nil
	}
	if co.set("start") || co.set("end") {
		opt := "start"
		if !co.set("start") {
			opt = "end"
		}
		return nil, co.bad(opt, "applies to sequences; set 'fields.%s.kind' = 'sequence'", name)
	}
	var err error
	c.random, err = randomOf(t, co, true)
	return c, err
}

// seqBound parses the start or end of a sequence.
func seqBound(co colOptions, opt string, t types.Type) (int64, error) {
	s := strings.TrimSpace(co.str(opt))
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, co.bad(opt, "= '%s': a sequence's bounds are integers", s)
	}
	if t.IsIntegral() {
		if _, err := types.ParseValue(t, s, nil); err != nil {
			return 0, co.bad(opt, "= '%s' is out of the range of %s", s, t)
		}
	}
	return v, nil
}

const hexDigits = "0123456789abcdef"

// randomOf returns the random generator of values of type t; top says that
// t is the column's own type, to which its options apply (nested values
// take the defaults).
func randomOf(t types.Type, co colOptions, top bool) (func(*rng, time.Time) types.Value, error) {
	allow := func(opts ...string) error {
		if !top {
			return nil
		}
		return co.only(t, opts...)
	}
	length := func(def int) int {
		if top && co.set("length") {
			return int(co.o.Int(co.key("length")))
		}
		return def
	}
	switch k := t.Kind(); {
	case k == types.KindNull:
		return func(*rng, time.Time) types.Value { return nil }, allow()
	case k == types.KindBoolean:
		return func(r *rng, _ time.Time) types.Value { return r.next()&1 == 1 }, allow()
	case t.IsIntegral(), t.IsInterval():
		if err := allow("min", "max"); err != nil {
			return nil, err
		}
		lo, hi := intRange(t)
		var err error
		if lo, err = intBound(co, top, "min", t, lo); err != nil {
			return nil, err
		}
		if hi, err = intBound(co, top, "max", t, hi); err != nil {
			return nil, err
		}
		if lo > hi {
			return nil, co.bad("min", "= '%d' is above 'fields.%s.max' = '%d'", lo, co.name, hi)
		}
		if k == types.KindIntervalYearMonth {
			return func(r *rng, _ time.Time) types.Value { return int32(r.between(lo, hi)) }, nil
		}
		return func(r *rng, _ time.Time) types.Value { return r.between(lo, hi) }, nil
	case t.IsApproximateNumeric(), k == types.KindDecimal:
		if err := allow("min", "max"); err != nil {
			return nil, err
		}
		lo, hi := -math.MaxFloat64, math.MaxFloat64
		if k == types.KindFloat {
			lo, hi = -math.MaxFloat32, math.MaxFloat32
		}
		if k == types.KindDecimal {
			hi = math.Pow10(t.Precision()-t.Scale()) - math.Pow10(-t.Scale())
			lo = -hi
		}
		var err error
		if lo, err = floatBound(co, top, "min", lo); err != nil {
			return nil, err
		}
		if hi, err = floatBound(co, top, "max", hi); err != nil {
			return nil, err
		}
		if lo > hi {
			return nil, co.bad("min", "= '%v' is above 'fields.%s.max' = '%v'", lo, co.name, hi)
		}
		draw := func(r *rng) float64 { u := r.float(); return lo*(1-u) + hi*u }
		switch k {
		case types.KindFloat:
			return func(r *rng, _ time.Time) types.Value { return float32(draw(r)) }, nil
		case types.KindDouble:
			return func(r *rng, _ time.Time) types.Value { return draw(r) }, nil
		}
		p, s := t.Precision(), t.Scale()
		return func(r *rng, _ time.Time) types.Value {
			d, err := types.DecimalFromFloat64(draw(r))
			if err == nil {
				if d, err = d.Rescale(s).Fit(p, s); err == nil {
					return d
				}
			}
			return types.DecimalFromInt64(0).Rescale(s)
		}, nil
	case t.IsString(), t.IsBinary():
		if err := allow("length", "var-len"); err != nil {
			return nil, err
		}
		n := min(length(100), t.Length())
		fixed := k == types.KindChar || k == types.KindBinary
		if fixed {
			n = t.Length()
		}
		varLen := top && co.o.Bool(co.key("var-len"))
		bin := t.IsBinary()
		return func(r *rng, _ time.Time) types.Value {
			l := n
			if varLen {
				l = int(r.between(1, int64(n)))
			}
			b := make([]byte, l)
			for i := range b {
				x := r.next()
				if bin {
					b[i] = byte(x)
				} else {
					b[i] = hexDigits[x&15]
				}
			}
			if bin {
				return b
			}
			return string(b)
		}, nil
	case k == types.KindDate:
		return func(_ *rng, now time.Time) types.Value { return types.TimestampFromTime(now).Date() }, allow()
	case k == types.KindTime:
		return func(_ *rng, now time.Time) types.Value { return types.TimestampFromTime(now).TimeOfDay() }, allow()
	case t.IsTimestamp():
		if err := allow("max-past"); err != nil {
			return nil, err
		}
		past := int64(0)
		if top {
			past = co.o.Duration(co.key("max-past")).Milliseconds()
		}
		return func(r *rng, now time.Time) types.Value {
			return types.TimestampFromMillis(now.UnixMilli() - r.between(0, past))
		}, nil
	case k == types.KindRow:
		if err := allow(); err != nil {
			return nil, err
		}
		var fs []func(*rng, time.Time) types.Value
		for _, f := range t.Row().Fields() {
			g, err := randomOf(f.Type, co, false)
			if err != nil {
				return nil, err
			}
			fs = append(fs, g)
		}
		return func(r *rng, now time.Time) types.Value {
			out := make([]types.Value, len(fs))
			for i, g := range fs {
				out[i] = g(r, now)
			}
			return out
		}, nil
	case k == types.KindArray, k == types.KindMultiset, k == types.KindMap:
		if err := allow("length"); err != nil {
			return nil, err
		}
		n := length(3)
		elem, err := randomOf(t.Elem(), co, false)
		if err != nil {
			return nil, err
		}
		if k == types.KindArray {
			return func(r *rng, now time.Time) types.Value {
				out := make([]types.Value, n)
				for i := range out {
					out[i] = elem(r, now)
				}
				return out
			}, nil
		}
		val := func(*rng, time.Time) types.Value { return int32(1) }
		if k == types.KindMap {
			if val, err = randomOf(t.Value(), co, false); err != nil {
				return nil, err
			}
		}
		return func(r *rng, now time.Time) types.Value {
			out := make([]types.MapEntry, n)
			for i := range out {
				out[i] = types.MapEntry{Key: elem(r, now), Value: val(r, now)}
			}
			return out
		}, nil
	}
	return nil, fmt.Errorf("datagen: column %s has type %s, which datagen cannot generate", co.name, t)
}

func intRange(t types.Type) (int64, int64) {
	switch t.Kind() {
	case types.KindTinyInt:
		return math.MinInt8, math.MaxInt8
	case types.KindSmallInt:
		return math.MinInt16, math.MaxInt16
	case types.KindInt, types.KindIntervalYearMonth:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

func intBound(co colOptions, top bool, opt string, t types.Type, def int64) (int64, error) {
	if !top || !co.set(opt) {
		return def, nil
	}
	s := strings.TrimSpace(co.str(opt))
	v, err := strconv.ParseInt(s, 10, 64)
	lo, hi := intRange(t)
	if err != nil || v < lo || v > hi {
		return 0, co.bad(opt, "= '%s' is not an integer in the range of %s", s, t)
	}
	return v, nil
}

func floatBound(co colOptions, top bool, opt string, def float64) (float64, error) {
	if !top || !co.set(opt) {
		return def, nil
	}
	s := strings.TrimSpace(co.str(opt))
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, co.bad(opt, "= '%s' is not a number", s)
	}
	return v, nil
}
