package expr

import "strings"

// byteRarity[b] estimates how seldom byte b occurs in text (URLs, names,
// words): higher is rarer. Lower-case letters, spaces, digits and the
// punctuation of paths are common; '_', '%', '#' and other symbols rarer;
// control bytes and those of non-ASCII characters rarest.
var byteRarity = func() (r [256]uint8) {
	for i := range r {
		r[i] = 250
	}
	for b := byte(' '); b < 0x7f; b++ {
		r[b] = 200 // other punctuation: _ % # @ ! * + ~ ...
	}
	tiers := []struct {
		rarity uint8
		bytes  string
	}{
		{10, " etaoinsrhl"},
		{40, "dcumfpgwybvk0123456789/."},
		{80, "xjqzABCDEFGHIJKLMNOPQRSTUVWXYZ,:-\n"},
		{150, "=&?'\"();"},
	}
	for _, t := range tiers {
		for i := 0; i < len(t.bytes); i++ {
			r[t.bytes[i]] = t.rarity
		}
	}
	return r
}()

// rareOffset returns the offset in sub of its rarest byte.
func rareOffset(sub string) int {
	best := 0
	for i := 1; i < len(sub); i++ {
		if byteRarity[sub[i]] > byteRarity[sub[best]] {
			best = i
		}
	}
	return best
}

// indexRare is strings.Index(s, sub) for a non-empty sub whose byte at off
// is rare: it looks for that byte and checks sub around it, far fewer
// checks than strings.Index makes from sub's first byte when that byte is
// common (the c of "channel_id=" in a URL). After a few false hits it
// leaves the rest to strings.Index.
func indexRare(s, sub string, off int) int {
	b := sub[off]
	for from, misses := 0, 0; from+len(sub) <= len(s); misses++ {
		if misses == 8 {
			if i := strings.Index(s[from:], sub); i >= 0 {
				return from + i
			}
			return -1
		}
		i := strings.IndexByte(s[from+off:], b)
		if i < 0 {
			return -1
		}
		start := from + i
		if start+len(sub) > len(s) {
			return -1
		}
		if s[start:start+len(sub)] == sub {
			return start
		}
		from = start + 1
	}
	return -1
}
