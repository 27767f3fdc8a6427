package types

import (
	"fmt"
	"math"
)

// RowFromBytes returns the row of type rt encoded in b (as Row.Bytes gives
// it), copying b. It checks the encoding fully, nested values included: a
// truncated, corrupted or non-canonical encoding gives an error, never a
// panic, so it is safe on bytes read from state or files.
func RowFromBytes(rt *RowType, b []byte) (Row, error) {
	if err := checkRow(rt, string(b), rowPath); err != nil {
		return Row{}, err
	}
	return Row{b: string(b), n: int32(rt.Len())}, nil
}

// RowFromString is RowFromBytes without the copy: the row shares s.
func RowFromString(rt *RowType, s string) (Row, error) {
	if err := checkRow(rt, s, rowPath); err != nil {
		return Row{}, err
	}
	return Row{b: s, n: int32(rt.Len())}, nil
}

// CorruptError says what is wrong with a row's encoding and where.
type CorruptError struct {
	// Path locates the bad value ("row.`bid`[3]").
	Path string
	// Problem says what is wrong.
	Problem string
}

// Error renders the problem.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("types: corrupt row encoding at %s: %s", e.Path, e.Problem)
}

func corrupt(path, format string, args ...any) error {
	return &CorruptError{Path: path, Problem: fmt.Sprintf(format, args...)}
}

// checkCells checks the bitmap, slots and variable part of n cells of the
// types typeOf(i) laid out in b from start (the bitmap) with offsets
// counted from base; the variable part must end exactly at len(b).
func checkCells(b string, start, n int, typeOf func(int) Type, name func(int) string) error {
	bm := bitmapBytes(n)
	fixedEnd := start + bm + 8*n
	if n < 0 || fixedEnd > len(b) || fixedEnd < start {
		return corrupt(name(-1), "%d bytes cannot hold %d values", len(b)-start, n)
	}
	// Bits beyond n must be clear.
	for j := n; j < bm*8; j++ {
		if b[start+j>>3]&(1<<(j&7)) != 0 {
			return corrupt(name(-1), "null bit %d is set beyond the %d values", j, n)
		}
	}
	next := fixedEnd
	for i := 0; i < n; i++ {
		t := typeOf(i)
		slot := le64(b, start+bm+8*i)
		null := b[start+i>>3]&(1<<(i&7)) != 0
		if null || t.kind == KindNull {
			if slot != 0 {
				return corrupt(name(i), "a NULL value has a non-zero slot")
			}
			if t.kind == KindNull && !null {
				return corrupt(name(i), "a value of the NULL type is not NULL")
			}
			continue
		}
		if t.IsFixed() {
			if err := checkFixed(t, slot); err != nil {
				return corrupt(name(i), "%s", err)
			}
			continue
		}
		off, l := int(slot>>32), int(uint32(slot))
		if off != next || off+l > len(b) || off+l < off {
			return corrupt(name(i), "variable part at %d+%d is not at %d within %d bytes", off, l, next, len(b))
		}
		if err := checkVar(t, b[off:off+l], func() string { return name(i) }); err != nil {
			return err
		}
		next = off + l
	}
	if next != len(b) {
		return corrupt(name(-1), "%d bytes after the last value", len(b)-next)
	}
	return nil
}

func checkRow(rt *RowType, b string, path func() string) error {
	return checkCells(b, 0, rt.Len(), rt.FieldType, func(i int) string {
		if i < 0 {
			return path()
		}
		return path() + "." + QuoteIdentifier(rt.fields[i].Name)
	})
}

func checkArray(elem Type, b string, path func() string) error {
	if len(b) < 4 {
		return corrupt(path(), "an array of %d bytes has no count", len(b))
	}
	n := int(le32(b, 0))
	if n > (len(b)-4)/8 {
		return corrupt(path(), "%d bytes cannot hold %d elements", len(b), n)
	}
	// Offsets count from the array's start, which is b[0]; the cells start
	// at 4. checkCells takes offsets relative to b, so pass b whole.
	return checkCells(b, 4, n, func(int) Type { return elem }, func(j int) string {
		if j < 0 {
			return path()
		}
		return fmt.Sprintf("%s[%d]", path(), j)
	})
}

func checkMap(t Type, b string, path func() string) error {
	if len(b) < 4 {
		return corrupt(path(), "a map of %d bytes has no key array length", len(b))
	}
	kl := int(le32(b, 0))
	if kl > len(b)-4 {
		return corrupt(path(), "key array of %d bytes in a map of %d", kl, len(b))
	}
	keys, vals := b[4:4+kl], b[4+kl:]
	if err := checkArray(t.Elem(), keys, func() string { return path() + ".keys" }); err != nil {
		return err
	}
	if err := checkArray(t.Value(), vals, func() string { return path() + ".values" }); err != nil {
		return err
	}
	if le32(keys, 0) != le32(vals, 0) {
		return corrupt(path(), "%d keys and %d values", le32(keys, 0), le32(vals, 0))
	}
	return nil
}

func checkFixed(t Type, slot uint64) error {
	v := int64(slot)
	switch t.kind {
	case KindBoolean:
		if slot > 1 {
			return fmt.Errorf("BOOLEAN slot %#x is not 0 or 1", slot)
		}
	case KindTinyInt, KindSmallInt, KindInt, KindIntervalYearMonth, KindDate:
		lo, hi := intRange(t.kind)
		if v < lo || v > hi {
			return fmt.Errorf("%s value %d is out of range", t.kind, v)
		}
	case KindFloat:
		if slot>>32 != 0 {
			return fmt.Errorf("FLOAT slot %#x has high bits set", slot)
		}
		f := math.Float32frombits(uint32(slot))
		if uint32(slot) != Float32Bits(f) {
			return fmt.Errorf("FLOAT bits %#x are not canonical", slot)
		}
	case KindDouble:
		if slot != Float64Bits(math.Float64frombits(slot)) {
			return fmt.Errorf("DOUBLE bits %#x are not canonical", slot)
		}
	case KindDecimal:
		if v >= pow10[t.p] || v <= -pow10[t.p] {
			return fmt.Errorf("unscaled %d does not fit %s", v, t)
		}
	case KindTime:
		if v < 0 || v >= NanosPerDay || v%pow10[9-t.p] != 0 {
			return fmt.Errorf("TIME nanoseconds %d are out of range for %s", v, t)
		}
	case KindTimestamp, KindTimestampLTZ:
		if v%pow10[3-t.p] != 0 {
			return fmt.Errorf("milliseconds %d have digits beyond %s", v, t)
		}
	}
	return nil
}

func checkVar(t Type, v string, pathFn func() string) error {
	switch t.kind {
	case KindDecimal:
		if len(v) == 0 || len(v) > 16 {
			return corrupt(pathFn(), "DECIMAL of %d bytes", len(v))
		}
		if len(v) > 1 && ((v[0] == 0 && v[1]&0x80 == 0) || (v[0] == 0xff && v[1]&0x80 != 0)) {
			return corrupt(pathFn(), "DECIMAL bytes are not minimal")
		}
		d := decimalFromBytes(v, int(t.s))
		if d.Digits() > int(t.p) {
			return corrupt(pathFn(), "DECIMAL %s does not fit %s", d, t)
		}
	case KindTimestamp, KindTimestampLTZ:
		if len(v) != 12 {
			return corrupt(pathFn(), "TIMESTAMP of %d bytes, not 12", len(v))
		}
		n := int64(int32(le32(v, 8)))
		if n < 0 || n >= NanosPerMilli || n%pow10[9-t.p] != 0 {
			return corrupt(pathFn(), "nanoseconds of the millisecond %d out of range for %s", n, t)
		}
	case KindRow:
		return checkRow(t.row, v, pathFn)
	case KindArray:
		return checkArray(*t.elem, v, pathFn)
	case KindMap, KindMultiset:
		return checkMap(t, v, pathFn)
	}
	return nil
}

func rowPath() string { return "row" }
