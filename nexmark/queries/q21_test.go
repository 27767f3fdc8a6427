package queries

import (
	"regexp"
	"strings"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

// q21Regexp is q21's expression, to check the hand-written scan against.
var q21Regexp = regexp.MustCompile(`(&|^)channel_id=([^&]*)`)

func regexpExtract(url string) (string, bool) {
	m := q21Regexp.FindStringSubmatch(url)
	if m == nil {
		return "", false
	}
	return m[2], true
}

func TestQ21(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		var want []Q21Result
		hot := map[string]string{"apple": "0", "google": "1", "facebook": "2", "baidu": "3"}
		withID, without := 0, 0
		for _, b := range d.bids {
			id, ok := hot[strings.ToLower(b.Channel)]
			if !ok {
				if id, ok = regexpExtract(b.URL); !ok {
					without++
					continue
				}
				withID++
			}
			want = append(want, Q21Result{b.Auction, b.Bidder, b.Price, b.Channel, id})
		}
		if withID == 0 || without == 0 {
			t.Fatalf("the test data lacks bids with (%d) or without (%d) a channel_id", withID, without)
		}
		got := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q21Result] { return Q21(env, cfg) })
		sameMultiset(t, got, want)
	})
}

func TestChannelIDParam(t *testing.T) {
	for _, url := range []string{
		"", "channel_id=", "channel_id=7", "channel_id=7&x=1", "a=1&channel_id=42", "a=1&channel_id=42&channel_id=43",
		"xchannel_id=1", "xchannel_id=1&channel_id=2", "a?channel_id=3", "&channel_id=", "channel_id=&a",
		"https://www.nexmark.com/a/b/c/item.htm?query=1&channel_id=1073741824", "channel_idchannel_id=5&channel_id=6",
		"&&channel_id=x&", "channel_id=channel_id=9",
	} {
		gotID, gotOK := channelIDParam(url)
		wantID, wantOK := regexpExtract(url)
		if gotID != wantID || gotOK != wantOK {
			t.Errorf("%q: got %q %v, want %q %v", url, gotID, gotOK, wantID, wantOK)
		}
	}
	for ch, want := range map[string]string{"Apple": "0", "GOOGLE": "1", "faceBook": "2", "baidu": "3", "bing": "", "Bai\u0130du": "", "faceboo\u212a": "2"} {
		id, ok := hotChannelID(ch)
		if id != want || ok != (want != "") {
			t.Errorf("hotChannelID(%q) = %q %v, want %q", ch, id, ok, want)
		}
	}
}
