package types

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// TestWriterOrderIndependent sets the fields of random rows in random
// orders, some twice and some NULL first, and checks that the row is the
// one written in field order: the encoding is canonical however it is
// written.
func TestWriterOrderIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 2000; iter++ {
		rt := randRowType(rng, 1)
		vals := make([]Value, rt.Len())
		for i := range vals {
			vals[i] = randValue(rng, rt.FieldType(i))
		}
		want := MustBuildRow(rt, nil, vals...)
		w := NewRowWriter(rt, NewArena(256))
		for round := 0; round < 3; round++ {
			for _, i := range rng.Perm(rt.Len()) {
				switch rng.IntN(4) {
				case 0: // a decoy value first
					if err := w.SetValue(i, randValue(rng, rt.FieldType(i))); err != nil {
						t.Fatal(err)
					}
				case 1:
					w.SetNull(i)
				}
				if err := w.SetValue(i, vals[i]); err != nil {
					t.Fatal(err)
				}
			}
			if got := w.Finish(); got != want {
				t.Fatalf("%s: written out of order:\n%x\nin order:\n%x", rt, got.Encoding(), want.Encoding())
			}
		}
	}
}

// TestCompareMatchesEquality checks on random values that Compare is 0
// exactly for equal encodings, antisymmetric, and transitive on triples.
func TestCompareMatchesEquality(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for iter := 0; iter < 3000; iter++ {
		typ := randType(rng, 2)
		rt := MustRowType(F("v", typ))
		var rows [3]Row
		for k := range rows {
			v := randValue(rng, typ)
			if k > 0 && rng.IntN(3) == 0 {
				v = RowValues(rt, rows[k-1])[0] // equal values now and then
			}
			rows[k] = MustBuildRow(rt, nil, v)
		}
		for a := 0; a < 3; a++ {
			for b := 0; b < 3; b++ {
				c1, c2 := Compare(typ, rows[a], rows[b], 0), Compare(typ, rows[b], rows[a], 0)
				if c1 != -c2 {
					t.Fatalf("%s: not antisymmetric: %d %d", typ, c1, c2)
				}
				if (c1 == 0) != (rows[a] == rows[b]) {
					t.Fatalf("%s: compare %d but bytes equal %v: %v vs %v", typ, c1, rows[a] == rows[b],
						FormatRow(rt, rows[a]), FormatRow(rt, rows[b]))
				}
			}
		}
		c01, c12, c02 := Compare(typ, rows[0], rows[1], 0), Compare(typ, rows[1], rows[2], 0), Compare(typ, rows[0], rows[2], 0)
		if c01 <= 0 && c12 <= 0 && c02 > 0 {
			t.Fatalf("%s: not transitive", typ)
		}
	}
}

func TestRowComparatorOrders(t *testing.T) {
	rt := MustRowType(F("a", Int()), F("b", String()))
	rows := []Row{
		MustBuildRow(rt, nil, int32(2), "x"),
		MustBuildRow(rt, nil, nil, "y"),
		MustBuildRow(rt, nil, int32(1), nil),
		MustBuildRow(rt, nil, int32(1), "a"),
	}
	cases := []struct {
		keys []SortKey
		want []int
	}{
		{[]SortKey{{Field: 0}, {Field: 1}}, []int{1, 2, 3, 0}},                                     // ASC: NULLs first
		{[]SortKey{{Field: 0, Descending: true}}, []int{0, 2, 3, 1}},                               // DESC: NULLs last
		{[]SortKey{{Field: 0, Nulls: NullsLast}, {Field: 1, Nulls: NullsLast}}, []int{3, 2, 0, 1}}, // explicit
		{[]SortKey{{Field: 0, Descending: true, Nulls: NullsFirst}, {Field: 1}}, []int{1, 0, 2, 3}},
	}
	for _, c := range cases {
		cmp := NewRowComparator(rt, c.keys...)
		idx := []int{0, 1, 2, 3}
		for i := range idx { // insertion sort, stable
			for j := i; j > 0 && cmp.Compare(rows[idx[j]], rows[idx[j-1]]) < 0; j-- {
				idx[j], idx[j-1] = idx[j-1], idx[j]
			}
		}
		for i := range idx {
			if idx[i] != c.want[i] {
				t.Errorf("keys %+v: order %v, want %v", c.keys, idx, c.want)
				break
			}
		}
	}
}

// TestKeyEncoder checks on random rows that the key is the encoding of the
// row of the key fields, that KeyRow reads it back, that Hash is the hash
// of Key, that KeyIn makes the key in an arena, and that Hash and KeyIn do
// not allocate.
func TestKeyEncoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	keys := NewArena(256) // KeyIn's keys, chunks filled and left behind
	for iter := 0; iter < 1000; iter++ {
		rt := randRowType(rng, 1)
		if rt.Len() == 0 {
			continue
		}
		vals := make([]Value, rt.Len())
		for i := range vals {
			vals[i] = randValue(rng, rt.FieldType(i))
		}
		r := MustBuildRow(rt, nil, vals...)
		cols := make([]int, 1+rng.IntN(rt.Len()))
		for i := range cols {
			cols[i] = rng.IntN(rt.Len())
		}
		k := NewKeyEncoder(rt, cols...)
		kv := make([]Value, len(cols))
		for i, c := range cols {
			kv[i] = vals[c]
		}
		want := MustBuildRow(k.KeyType(), nil, kv...)
		key := k.Key(r)
		if key != want.Encoding() {
			t.Fatalf("%s cols %v: key %x, want %x", rt, cols, key, want.Encoding())
		}
		if _, err := RowFromString(k.KeyType(), key); err != nil {
			t.Fatalf("key does not read back: %v", err)
		}
		if k.KeyRow(key) != want || k.Project(NewArena(0), r) != want {
			t.Fatal("KeyRow or Project differ")
		}
		if k.Hash(r) != xxhash.Sum64String(key) {
			t.Fatal("Hash is not the hash of Key")
		}
		if in := k.KeyIn(keys, r); in != key {
			t.Fatalf("KeyIn %x, want the key %x", in, key)
		}
	}
	r := MustBuildRow(bidType, nil, int64(1), int64(2), int64(3), Timestamp{}, "Google", "u", "")
	k := NewKeyEncoder(bidType, 0, 4)
	if n := testing.AllocsPerRun(100, func() { k.Hash(r) }); n != 0 {
		t.Errorf("Hash allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { k.Key(r) }); n != 1 {
		t.Errorf("Key allocates %v times, want 1", n)
	}
	big := NewArena(1 << 20)
	big.String("x") // its first chunk
	if n := testing.AllocsPerRun(100, func() { k.KeyIn(big, r) }); n != 0 {
		t.Errorf("KeyIn allocates %v times", n)
	}
}

// TestDecimalArithmeticRandom checks Add, Sub, Mul, Div and Mod against
// exact rational arithmetic rounded HALF_UP.
func TestDecimalArithmeticRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	randDec := func() (Decimal, Type) {
		p := 1 + rng.IntN(38)
		s := rng.IntN(p + 1)
		typ := DecimalType(p, s)
		return randValue(rng, typ.NotNull()).(Decimal), typ
	}
	rat := func(d Decimal) *big.Rat {
		return new(big.Rat).SetFrac(d.BigUnscaled(), bigPow10(d.Scale()))
	}
	for iter := 0; iter < 20000; iter++ {
		a, ta := randDec()
		b, tb := randDec()
		op := ArithmeticOp(rng.IntN(5))
		rt, err := ArithmeticType(op, ta, tb)
		if err != nil {
			t.Fatal(err)
		}
		p, s := rt.Precision(), rt.Scale()
		var got Decimal
		var exact *big.Rat
		switch op {
		case OpAdd:
			got, err = a.Add(b, p, s)
			exact = new(big.Rat).Add(rat(a), rat(b))
		case OpSubtract:
			got, err = a.Sub(b, p, s)
			exact = new(big.Rat).Sub(rat(a), rat(b))
		case OpMultiply:
			got, err = a.Mul(b, p, s)
			exact = new(big.Rat).Mul(rat(a), rat(b))
		case OpDivide:
			got, err = a.Div(b, p, s)
			if b.IsZero() {
				if err == nil {
					t.Fatal("division by zero accepted")
				}
				continue
			}
			exact = new(big.Rat).Quo(rat(a), rat(b))
		case OpMod:
			got, err = a.Mod(b, p, s)
			if b.IsZero() {
				continue
			}
			// remainder with the dividend's sign: a - b*trunc(a/b)
			q := new(big.Rat).Quo(rat(a), rat(b))
			tq := new(big.Int).Quo(q.Num(), q.Denom())
			exact = new(big.Rat).Sub(rat(a), new(big.Rat).Mul(rat(b), new(big.Rat).SetInt(tq)))
		}
		// Round exact HALF_UP to scale s.
		scaled := new(big.Rat).Mul(exact, new(big.Rat).SetInt(bigPow10(s)))
		num, den := new(big.Int).Abs(scaled.Num()), scaled.Denom()
		q, r := new(big.Int).QuoRem(num, den, new(big.Int))
		if r.Lsh(r, 1).Cmp(den) >= 0 {
			q.Add(q, big.NewInt(1))
		}
		if scaled.Sign() < 0 {
			q.Neg(q)
		}
		want := DecimalFromBig(q, s)
		if want.Digits() > p {
			if err == nil {
				t.Fatalf("%s %s %s as %s: got %s, want overflow", a, op, b, rt, got)
			}
			continue
		}
		if err != nil || got.Cmp(want) != 0 || got.Scale() != s {
			t.Fatalf("%s %s %s as %s: got %s (%v), want %s", a, op, b, rt, got, err, want)
		}
	}
}

func TestDateCivilRoundTrip(t *testing.T) {
	prev := MinDate - 1
	for d := MinDate; d <= MaxDate; d++ {
		y, m, day := d.Civil()
		if DateOf(y, m, day) != d {
			t.Fatalf("date %d -> %d-%d-%d -> %d", d, y, m, day, DateOf(y, m, day))
		}
		if d != prev+1 {
			t.Fatal("gap")
		}
		prev = d
	}
	if s := Date(0).String(); s != "1970-01-01" {
		t.Fatal(s)
	}
	if s := MinDate.String(); s != "0000-01-01" {
		t.Fatal(s)
	}
	if s := MaxDate.String(); s != "9999-12-31" {
		t.Fatal(s)
	}
}
