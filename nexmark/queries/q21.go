package queries

import (
	"strings"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

// Q21Result is a row of q21.
type Q21Result struct {
	Auction   int64  `json:"auction"`
	Bidder    int64  `json:"bidder"`
	Price     int64  `json:"price"`
	Channel   string `json:"channel"`
	ChannelID string `json:"channel_id"`
}

// Q21 adds a channel id to bids:
//
//	SELECT auction, bidder, price, channel,
//	  CASE WHEN lower(channel) = 'apple' THEN '0'
//	       WHEN lower(channel) = 'google' THEN '1'
//	       WHEN lower(channel) = 'facebook' THEN '2'
//	       WHEN lower(channel) = 'baidu' THEN '3'
//	       ELSE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) END AS channel_id
//	FROM bid
//	WHERE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) is not null
//	   or lower(channel) in ('apple', 'google', 'facebook', 'baidu');
//
// The regular expression is evaluated by an exact hand-written scan
// (channelIDParam).
func Q21(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q21Result] {
	return eddy.FlatMap(bidSource(env, cfg), func(b nexmark.Bid, emit func(Q21Result)) {
		id, ok := hotChannelID(b.Channel)
		if !ok {
			if id, ok = channelIDParam(b.URL); !ok {
				return
			}
		}
		emit(Q21Result{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel, ChannelID: id})
	}).Name("q21")
}

// hotChannelID returns q21's id of the four hot channels, matched as
// lower(channel) = name.
func hotChannelID(ch string) (string, bool) {
	switch len(ch) {
	case 5:
		if lowerEquals(ch, "apple") {
			return "0", true
		}
		if lowerEquals(ch, "baidu") {
			return "3", true
		}
	case 6:
		if lowerEquals(ch, "google") {
			return "1", true
		}
	case 8:
		if lowerEquals(ch, "facebook") {
			return "2", true
		}
	}
	for i := 0; i < len(ch); i++ {
		if ch[i] >= 0x80 {
			// Lower-casing non-ASCII text can change its length. Java
			// lower-cases U+0130 to "i\u0307", Go to "i".
			if strings.ContainsRune(ch, '\u0130') {
				return "", false
			}
			switch strings.ToLower(ch) {
			case "apple":
				return "0", true
			case "google":
				return "1", true
			case "facebook":
				return "2", true
			case "baidu":
				return "3", true
			}
			break
		}
	}
	return "", false
}

// lowerEquals reports whether lower(s) == lower, for an ASCII lower-case
// string lower of the same length as s.
func lowerEquals(s, lower string) bool {
	for i := 0; i < len(lower); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// channelIDParam is REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2): the
// value of the first "channel_id=" that starts the string or follows '&', up
// to the next '&'. ok is false where the expression gives NULL (no match).
func channelIDParam(url string) (id string, ok bool) {
	const key = "channel_id="
	for from := 0; ; {
		i := strings.Index(url[from:], key)
		if i < 0 {
			return "", false
		}
		i += from
		if i == 0 || url[i-1] == '&' {
			v := url[i+len(key):]
			if j := strings.IndexByte(v, '&'); j >= 0 {
				v = v[:j]
			}
			return v, true
		}
		from = i + 1
	}
}
