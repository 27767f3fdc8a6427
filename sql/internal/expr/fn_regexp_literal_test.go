package expr

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"testing"
)

func TestRequiredLiteral(t *testing.T) {
	for p, want := range map[string]string{
		"(&|^)channel_id=([^&]*)": "channel_id=",
		"abc":                     "abc",
		"a(bcd)+e":                "bcd",
		"(?i)abc":                 "",
		"abc|abd":                 "ab", // parsed as ab[cd]
		"abc|xyz":                 "",
		"x(abc)?y":                "x",
		"(abc)*":                  "",
		"(ab){2,3}c":              "ab",
		"^$":                      "",
		"a.b":                     "a",
		"[ab]cde":                 "cde",
	} {
		ast, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := requiredLiteral(ast.Simplify()); got != want {
			t.Errorf("requiredLiteral(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestMatcherAgreesWithRegexp checks that the literal test never changes
// an answer: over random strings of a small alphabet, each pattern's
// matcher gives what its regular expression alone gives.
func TestMatcherAgreesWithRegexp(t *testing.T) {
	patterns := []string{"(&|^)ch_id=([^&]*)", "a(bc)+d", "(?i)ABC", "ab|cd", "x(ab)?y", "b.c", "(ab){2}", "^ab", "c$", "[ab]cd+",
		// Anchored windows: bounded parts before a literal, start-of-text
		// assertions in and after them, and what must not take a window.
		"(x|^)ab(c*)", "a?b?cd(a|$)", "[^&]{0,3}ab", "(ab|^c)d(_*)", "(^|&)(d)ab", "y{1,2}(^|a)bc", "(?i:a)bcd", "(?m)^ab", "\\bab", "(a|b)*cd", "^(ab)$"}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := "abcdxy&=_ABCh_id"
	for _, p := range patterns {
		re := regexp.MustCompile(p)
		m, err := compileRegexp(p)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3000; i++ {
			b := make([]byte, rng.IntN(16))
			for j := range b {
				b[j] = alphabet[rng.IntN(len(alphabet))]
			}
			s := string(b)
			if i%7 == 0 {
				s += "&ch_id=" + s // some that match the first pattern
			}
			if m.MatchString(s) != re.MatchString(s) ||
				!slices.Equal(m.FindStringIndex(s), re.FindStringIndex(s)) ||
				!slices.Equal(m.FindStringSubmatchIndex(s), re.FindStringSubmatchIndex(s)) ||
				m.ReplaceAllLiteralString(s, "#") != re.ReplaceAllLiteralString(s, "#") {
				t.Fatalf("pattern %q on %q: the matcher (literal %q) disagrees with the regular expression", p, s, m.need)
			}
		}
	}
}

// TestAnchorWindow checks which patterns search from a window before their
// anchor literal, and how far before it.
func TestAnchorWindow(t *testing.T) {
	for p, want := range map[string]struct {
		anchor string
		before int
	}{
		"(&|^)channel_id=([^&]*)": {"channel_id=", 1},
		"[^&]{0,3}ab":             {"ab", 12},
		"x(ab)":                   {"x", 0},
		"(a|b)*cd":                {},
		"(?m)^ab":                 {},
		`\bab`:                    {},
		"ab|cd":                   {},
	} {
		m, err := compileRegexp(p)
		if err != nil {
			t.Fatal(err)
		}
		if m.anchor != want.anchor || m.before != want.before || (m.inner != nil) != (want.anchor != "") {
			t.Errorf("%q: anchor %q, %d bytes before, want %q, %d", p, m.anchor, m.before, want.anchor, want.before)
		}
	}
}
