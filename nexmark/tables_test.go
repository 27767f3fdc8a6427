package nexmark

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestChannelCache(t *testing.T) {
	tb := getTables()
	urlShape := regexp.MustCompile(`^https://www\.nexmark\.com/[a-z_]{3,4}/[a-z_]{3,4}/[a-z_]{3,4}/item\.htm\?query=1(&channel_id=-?\d+)?$`)
	withID := 0
	for i, c := range tb.channels {
		if c.name != "channel-"+strconv.Itoa(i) {
			t.Fatalf("channel %d is named %q", i, c.name)
		}
		if !urlShape.MatchString(c.url) {
			t.Fatalf("channel %d URL %q has the wrong shape", i, c.url)
		}
		if _, id, ok := strings.Cut(c.url, "&channel_id="); ok {
			withID++
			if want := strconv.Itoa(int(reversedChannelID(i))); id != want {
				t.Fatalf("channel %d: channel_id=%s, want %s", i, id, want)
			}
		}
	}
	within(t, "share of cached channels with channel_id", float64(withID)/channelsNumber, 0.9, 0.01)
	for i, u := range tb.hotURLs {
		if !urlShape.MatchString(u) || strings.Contains(u, "channel_id") {
			t.Fatalf("hot channel %s URL %q has the wrong shape", hotChannels[i], u)
		}
	}
}

func TestReversedChannelID(t *testing.T) {
	// Math.abs(Integer.reverse(i)) in Java; reverse(1) is MinInt32, whose
	// absolute value overflows back to MinInt32.
	for i, want := range map[int]int32{0: 0, 1: math.MinInt32, 2: 1 << 30, 3: 1 << 30, 6: 0x60000000, 9999: 0x0F1C0000} {
		if got := reversedChannelID(i); got != want {
			t.Errorf("reversedChannelID(%d) = %d, want %d", i, got, want)
		}
	}
}

func TestExtraPoolCharacters(t *testing.T) {
	// nextExactString: 'a' + rnd%26 with Java's signed remainder gives 'H'..'z'.
	var counts [256]int
	for _, c := range []byte(getTables().extraPool) {
		counts[c]++
	}
	for c, n := range counts {
		if n > 0 && (c < 'H' || c > 'z') {
			t.Fatalf("extra pool contains %q", rune(c))
		}
	}
	if counts['\\'] == 0 || counts['z'] == 0 || counts['H'] == 0 {
		t.Fatal("extra pool lacks characters the reference produces")
	}
	within(t, "share of lowercase letters in padding", float64(countRange(counts[:], 'a', 'z'))/reusableStringSize, 0.5+0.5/26, 0.01)
}

func TestTextPoolCharacters(t *testing.T) {
	var counts [256]int
	for _, c := range []byte(getTables().textPool) {
		counts[c]++
	}
	if countRange(counts[:], 'a', 'z')+counts[' '] != textPoolSize {
		t.Fatal("text pool has characters other than a-z and space")
	}
	within(t, "share of spaces in text", float64(counts[' '])/textPoolSize, 1.0/13, 0.005)
}

func countRange(counts []int, lo, hi byte) int {
	n := 0
	for c := int(lo); c <= int(hi); c++ {
		n += counts[c]
	}
	return n
}

func TestTrimSpaces(t *testing.T) {
	for in, want := range map[string]string{"": "", "   ": "", " ab c ": "ab c", "abc": "abc"} {
		if got := trimSpaces(in); got != want {
			t.Errorf("trimSpaces(%q) = %q, want %q", in, got, want)
		}
	}
}
