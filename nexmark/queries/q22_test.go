package queries

import (
	"strings"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

// splitIndex is Flink's SPLIT_INDEX(s, sep, i): the i-th field of s split
// at sep keeping empty fields, NULL past the last.
func splitIndex(s, sep string, i int) NullString {
	if s == "" {
		return NullString{}
	}
	f := strings.Split(s, sep)
	if i >= len(f) {
		return NullString{}
	}
	return NullString{S: f[i], Valid: true}
}

func TestQ22(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		var want []Q22Result
		for _, b := range d.bids {
			want = append(want, Q22Result{b.Auction, b.Bidder, b.Price, b.Channel,
				splitIndex(b.URL, "/", 3), splitIndex(b.URL, "/", 4), splitIndex(b.URL, "/", 5)})
		}
		nonEmpty(t, want, 1000)
		got := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q22Result] { return Q22(env, cfg) })
		sameMultiset(t, got, want)
	})
}

func TestSplitDirs(t *testing.T) {
	for _, url := range []string{"", "a", "a/b/c", "a/b/c/d", "a/b/c/d/e", "a/b/c/d/e/f/g", "///", "////", "a//b///", "https://www.nexmark.com/x/y/z/item.htm"} {
		d3, d4, d5 := splitDirs(url)
		if w := splitIndex(url, "/", 3); d3 != w {
			t.Errorf("%q dir1: got %v, want %v", url, d3, w)
		}
		if w := splitIndex(url, "/", 4); d4 != w {
			t.Errorf("%q dir2: got %v, want %v", url, d4, w)
		}
		if w := splitIndex(url, "/", 5); d5 != w {
			t.Errorf("%q dir3: got %v, want %v", url, d5, w)
		}
	}
}
