package expr

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestHandMatcherShapes checks which patterns the hand matcher takes.
func TestHandMatcherShapes(t *testing.T) {
	for p, want := range map[string]bool{
		"(&|^)channel_id=([^&]*)": true,
		"channel_id=([^&]*)":      true,
		"[&;]id=([0-9]+)":         true,
		"(^|&)id=(.*?)(x*)":       true,
		"id=[0-9]+$":              false,
		"id=([0-9]+)(x*)":         false, // x* could leave to [0-9]+ what it needs
		"(?i)id=(.*)":             false,
		"(a|b)*id=":               false,
		"id":                      false, // not a concatenation: the engine's literal search is fast
		"(?m)^id=(.*)":            false,
		"(id=(.*))":               false,
	} {
		m, err := compileRegexp(p)
		if err != nil {
			t.Fatal(err)
		}
		if (m.hand != nil) != want {
			t.Errorf("%q: hand matcher %v, want %v", p, m.hand != nil, want)
		}
	}
}

// TestHandMatcherAgreesWithRegexp builds random patterns of the hand
// matcher's shape (and near it) and checks every answer against Go's
// regexp on random strings, UTF-8 and not.
func TestHandMatcherAgreesWithRegexp(t *testing.T) {
	pre := []string{"", "(&|^)", "(^|&)", "[&;]", "(|x)", "(x|)", "^", "(ab|a|^)", "(b|^)(^|a)", "a?", "[^a]", "(é|^)", "(?:&|^)"}
	anchors := []string{"ch=", "a", "ab", "é", "=="}
	post := []string{"", "([^&]*)", "[a-c]*", "(.*?)", "(b+)", "x?", "(é*)", "[^é]*", "(.?)", "(?s:.*)", "(a*?)", "b*", "(a+?)", "(=)*"}
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "b", "c", "x", "&", ";", "=", "é", "\xff", "\n", "ch=", "ch=", "&ch="}
	taken := 0
	for n := 0; n < 3000; n++ {
		p := pre[rng.IntN(len(pre))]
		if rng.IntN(4) == 0 {
			p += pre[rng.IntN(len(pre))]
		}
		p += anchors[rng.IntN(len(anchors))]
		for k := rng.IntN(3); k > 0; k-- {
			p += post[rng.IntN(len(post))]
		}
		re, err := regexp.Compile(p)
		if err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		m, err := compileRegexp(p)
		if err != nil {
			t.Fatal(err)
		}
		if m.hand != nil {
			taken++
		}
		for i := 0; i < 200; i++ {
			var b strings.Builder
			for j := rng.IntN(12); j > 0; j-- {
				b.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			s := b.String()
			want := re.FindStringSubmatchIndex(s)
			if got := m.FindStringSubmatchIndex(s); !slices.Equal(got, want) {
				t.Fatalf("pattern %q on %q: %v, want %v (hand %v)", p, s, got, want, m.hand != nil)
			}
			if got := m.FindStringIndex(s); !slices.Equal(got, re.FindStringIndex(s)) {
				t.Fatalf("pattern %q on %q: FindStringIndex %v", p, s, got)
			}
			if m.MatchString(s) != (want != nil) {
				t.Fatalf("pattern %q on %q: MatchString", p, s)
			}
			for g := 0; g <= re.NumSubexp(); g++ {
				start, end, ok := m.group(s, g)
				wok := want != nil && want[2*g] >= 0
				if ok != wok || ok && (start != want[2*g] || end != want[2*g+1]) {
					t.Fatalf("pattern %q on %q: group %d is %d:%d %v, want %v", p, s, g, start, end, ok, want)
				}
			}
		}
	}
	t.Logf("taken %d", taken)
	if taken < 1000 {
		t.Errorf("the hand matcher took %d patterns of 3000", taken)
	}
}
