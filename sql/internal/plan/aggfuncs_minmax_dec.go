package plan

import (
	"math/big"

	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/sql/types"
)

// decimalView folds d into the view of call c, a MIN or MAX of DECIMALs
// over a changelog, which counts the group's values so that the next
// extremum is found when the current one is taken back. It reports
// whether the fold is done: a retraction is, an addition then updates the
// extremum as an insert-only MIN or MAX does. DECIMALs of up to 18 digits
// are kept by their unscaled values in a view of integers; wider ones by
// decimalOrderKey.
func (a *sqlAgg) decimalView(c *aggCall, s *aggSlots, acc *Acc, d types.Decimal, v agg.Views, first int, sign int64) bool {
	scale := c.ArgType.Scale()
	narrow := c.ArgType.Precision() <= types.MaxCompactPrecision
	var after int64
	if narrow {
		u, _ := d.Unscaled()
		_, after = v.AddInt(first+s.view, u, sign)
	} else {
		_, after = v.Add(first+s.view, decimalOrderKey(d), sign)
	}
	if sign > 0 {
		return false
	}
	if after == 0 && acc.W[s.w] > 0 && acc.D[s.d].Cmp(d) == 0 {
		decs := acc.D // a copy of the header: acc stays off the heap
		if narrow {
			v.RangeInt(first+s.view, func(u int64, _ int64) bool {
				decs[s.d] = types.NewDecimal(u, scale)
				return s.max // the last value for MAX, the first for MIN
			})
		} else {
			v.Range(first+s.view, func(key string, _ int64) bool {
				decs[s.d] = decimalFromOrderKey(key, scale)
				return s.max
			})
		}
	}
	return true
}

// decimalOrderKey encodes the unscaled value of d so that the encodings of
// values of one scale compare bytewise as the values do: a first byte
// 0x80+n for a positive value of n magnitude bytes (0x80 for zero) and
// 0x7f-n for a negative one, then the magnitude's bytes, big-endian,
// inverted for a negative value.
func decimalOrderKey(d types.Decimal) string {
	u := d.BigUnscaled()
	mag := u.Bytes()
	key := make([]byte, 1+len(mag))
	copy(key[1:], mag)
	if u.Sign() < 0 {
		key[0] = byte(0x7f - len(mag))
		for i := 1; i < len(key); i++ {
			key[i] = ^key[i]
		}
	} else {
		key[0] = byte(0x80 + len(mag))
	}
	return string(key)
}

// decimalFromOrderKey decodes a decimalOrderKey of a value of the given
// scale.
func decimalFromOrderKey(key string, scale int) types.Decimal {
	mag := []byte(key[1:])
	neg := key[0] < 0x80
	if neg {
		for i := range mag {
			mag[i] = ^mag[i]
		}
	}
	u := new(big.Int).SetBytes(mag)
	if neg {
		u.Neg(u)
	}
	return types.DecimalFromBig(u, scale)
}
