package keys

import (
	"testing"
)

type point struct {
	X, Y int32
	Tag  string
}

func TestHashIsStableAndSpreads(t *testing.T) {
	h, err := HasherFor[int64]()
	if err != nil {
		t.Fatal(err)
	}
	// A fixed value: key groups must not change between versions.
	if got, want := h(42), uint64(0x810879608e4259cc); got != want {
		t.Fatalf("h(42) = %#x, want %#x", got, want)
	}
	if got, want := HashString("eddy"), uint64(0x659308155a9687a7); got != want {
		t.Fatalf("HashString(eddy) = %#x, want %#x", got, want)
	}
	counts := make([]int, 128)
	for i := int64(0); i < 128000; i++ {
		counts[h(i)%128]++
	}
	for kg, c := range counts {
		if c < 800 || c > 1200 {
			t.Fatalf("key group %d got %d of 128000 sequential keys", kg, c)
		}
	}
}

func TestNamedAndStructKeys(t *testing.T) {
	type userID int64
	hu, _ := HasherFor[userID]()
	hi, _ := HasherFor[int64]()
	if hu(7) != hi(7) {
		t.Fatalf("named integer type hashes differently from its underlying type")
	}
	hs, _ := HasherFor[string]()
	if hs("abc") != HashString("abc") {
		t.Fatalf("string hash differs")
	}
	hp, err := HasherFor[point]()
	if err != nil {
		t.Fatal(err)
	}
	if hp(point{1, 2, "a"}) != hp(point{1, 2, "a"}) {
		t.Fatalf("equal struct keys hash differently")
	}
	if hp(point{1, 2, "a"}) == hp(point{2, 1, "a"}) {
		t.Fatalf("distinct struct keys collide")
	}
	if hp(point{1, 2, "ab"}) == hp(point{1, 2, "a"}) {
		t.Fatalf("string field prefixes collide")
	}
}

func TestUnstableKeyTypesAreRefused(t *testing.T) {
	if _, err := HasherFor[*int](); err == nil {
		t.Fatal("pointer keys accepted")
	}
	if _, err := HasherFor[struct{ A any }](); err == nil {
		t.Fatal("interface field accepted")
	}
}

func BenchmarkHashInt64(b *testing.B) {
	h, _ := HasherFor[int64]()
	var s uint64
	for i := 0; i < b.N; i++ {
		s += h(int64(i))
	}
	_ = s
}

func BenchmarkHashString(b *testing.B) {
	h, _ := HasherFor[string]()
	var s uint64
	for i := 0; i < b.N; i++ {
		s += h("channel-1234")
	}
	_ = s
}

// goldenKey has a field of every kind a key may hold.
type goldenKey struct {
	X, Y int32
	Tag  string
	F    float32
	B    bool
	A    [2]uint16
	N    int8
	G    float64
	U    uint
}

// TestCompositeKeyHashIsFixed pins the hash of composite keys: key groups,
// and with them the state in savepoints, depend on it.
func TestCompositeKeyHashIsFixed(t *testing.T) {
	h, err := HasherFor[goldenKey]()
	if err != nil {
		t.Fatal(err)
	}
	k := goldenKey{X: -3, Y: 7, Tag: "eddy", F: 1.5, B: true, A: [2]uint16{9, 65535}, N: -128, G: -0.0, U: 1 << 63}
	if got, want := h(k), uint64(0x39d6a12dd80859b); got != want {
		t.Fatalf("h(%v) = %#x, want %#x", k, got, want)
	}
	if got, want := h(goldenKey{}), uint64(0x1f3015449a5a2480); got != want {
		t.Fatalf("h(zero) = %#x, want %#x", got, want)
	}
	if allocs := testing.AllocsPerRun(100, func() { h(k) }); allocs != 0 {
		t.Fatalf("hashing a composite key allocates %v times", allocs)
	}
}
