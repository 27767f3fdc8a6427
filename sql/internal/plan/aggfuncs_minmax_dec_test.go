package plan

import (
	"math/big"
	"math/rand"
	"testing"

	"github.com/eddystream/eddy/sql/types"
)

// TestDecimalOrderKey checks that the encodings of DECIMALs of one scale
// compare bytewise as the values do, and decode to them, for values of
// every magnitude up to 38 digits, negative, zero and positive.
func TestDecimalOrderKey(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	random := func() types.Decimal {
		u := new(big.Int).Rand(rng, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(rng.Intn(39))), nil))
		if rng.Intn(2) == 0 {
			u.Neg(u)
		}
		return types.DecimalFromBig(u, 3)
	}
	for i := 0; i < 20000; i++ {
		a, b := random(), random()
		ka, kb := decimalOrderKey(a), decimalOrderKey(b)
		want := a.Cmp(b)
		got := 0
		switch {
		case ka < kb:
			got = -1
		case ka > kb:
			got = 1
		}
		if got != want {
			t.Fatalf("%s and %s compare %d, their keys %x and %x compare %d", a, b, want, ka, kb, got)
		}
		if back := decimalFromOrderKey(ka, 3); !back.Equal(a) || back.Scale() != 3 {
			t.Fatalf("%s decodes as %s", a, back)
		}
	}
}
