package types

import (
	"encoding/base64"
	"math/big"
	"math/rand/v2"
	"testing"
)

// javaBytes is Java's BigInteger.toByteArray of x, computed the slow way:
// the fewest bytes n whose two's complement range holds x.
func javaBytes(x *big.Int) []byte {
	for n := 1; ; n++ {
		lim := new(big.Int).Lsh(big.NewInt(1), uint(8*n-1))
		if x.Cmp(new(big.Int).Neg(lim)) >= 0 && x.Cmp(lim) < 0 {
			v := new(big.Int).Set(x)
			if v.Sign() < 0 {
				v.Add(v, new(big.Int).Lsh(lim, 1))
			}
			return v.FillBytes(make([]byte, n))
		}
	}
}

// TestTwosComplementRandom checks the unscaled values of decimals, small
// and big, near the byte boundaries and random, against Java's encoding,
// and that they read back.
func TestTwosComplementRandom(t *testing.T) {
	var xs []*big.Int
	for k := 0; k <= 130; k++ {
		p := new(big.Int).Lsh(big.NewInt(1), uint(k))
		for _, d := range []int64{-1, 0, 1} {
			v := new(big.Int).Add(p, big.NewInt(d))
			xs = append(xs, v, new(big.Int).Neg(v))
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		v := new(big.Int)
		for range 1 + r.IntN(3) {
			v.Lsh(v, 64).Or(v, new(big.Int).SetUint64(r.Uint64()>>r.IntN(64)))
		}
		if r.IntN(2) == 0 {
			v.Neg(v)
		}
		xs = append(xs, v)
	}
	xs = append(xs, big.NewInt(0))
	for _, x := range xs {
		d := DecimalFromBig(x, 3)
		got := appendTwosComplement(nil, d)
		if want := javaBytes(x); string(got) != string(want) {
			t.Fatalf("%s: two's complement %x, want %x", x, got, want)
		}
		back := DecimalFromTwosComplement(got, 3)
		if back.Cmp(d) != 0 {
			t.Fatalf("%s: read back as %s", d, back)
		}
	}
}

// TestJSONDebeziumValues writes a row of every temporal kind and decimals
// with JSONOptions.Debezium, and checks each value as Debezium's
// connectors write it; a date nested in an array is written as text.
func TestJSONDebeziumValues(t *testing.T) {
	rt := MustRowType(F("d", DateType()), F("t0", TimeType(0)), F("t6", TimeType(6)), F("t9", TimeType(9)),
		F("ts3", TimestampType(3)), F("ts6", TimestampType(6)), F("ts9", TimestampType(9)), F("ltz", TimestampLTZType(6)),
		F("m", DecimalType(10, 2)), F("n", DecimalType(38, 4)), F("a", ArrayOf(DateType())), F("s", String()))
	ts := TimestampOf(2024, 5, 6, 7, 8, 9, 123456789)
	r := MustBuildRow(rt, nil, DateOf(2024, 5, 6), TimeOf(1, 2, 3, 0), TimeOf(1, 2, 3, 456789000), TimeOf(1, 2, 3, 456789123),
		ts.Truncate(3), ts.Truncate(6), ts, ts.Truncate(6),
		MustParseDecimal("-1.50"), MustParseDecimal("123456789012345678901234.5678"), []Value{DateOf(1970, 1, 2)}, "x")
	got, err := AppendJSON(nil, rt, r, &JSONOptions{Debezium: true})
	if err != nil {
		t.Fatal(err)
	}
	big1, _ := new(big.Int).SetString("1234567890123456789012345678", 10)
	want := `{"d":19849,"t0":3723000,"t6":3723456789,"t9":3723456789123,` +
		`"ts3":1714979289123,"ts6":1714979289123456,"ts9":1714979289123456789,"ltz":"2024-05-06T07:08:09.123456Z",` +
		`"m":"` + base64.StdEncoding.EncodeToString([]byte{0xff, 0x6a}) + `","n":"` + base64.StdEncoding.EncodeToString(javaBytes(big1)) + `",` +
		`"a":["1970-01-02"],"s":"x"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, c := range []struct {
		t    Type
		typ  string
		name string
	}{
		{DateType(), "int32", DebeziumDate}, {TimeType(3), "int32", DebeziumTime}, {TimeType(6), "int64", DebeziumMicroTime},
		{TimestampType(0), "int64", DebeziumTimestamp}, {TimestampType(6), "int64", DebeziumMicroTimestamp},
		{TimestampType(9), "int64", DebeziumNanoTimestamp}, {TimestampLTZType(3), "string", DebeziumZonedTimestamp},
		{DecimalType(10, 2), "bytes", ConnectDecimal}, {Int(), "", ""},
	} {
		typ, name, _ := DebeziumLogical(c.t)
		if typ != c.typ || name != c.name {
			t.Errorf("%s: %s %s, want %s %s", c.t, typ, name, c.typ, c.name)
		}
	}
	// A TIMESTAMP(9) beyond 2262 does not fit in nanoseconds.
	far := MustRowType(F("ts", TimestampType(9)))
	if _, err := AppendJSON(nil, far, MustBuildRow(far, nil, TimestampOf(2300, 1, 1, 0, 0, 0, 1)), &JSONOptions{Debezium: true}); err == nil {
		t.Error("a TIMESTAMP(9) of 2300 was written as nanoseconds")
	}
}
