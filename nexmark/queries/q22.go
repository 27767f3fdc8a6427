package queries

import (
	"strings"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

// Q22Result is a row of q22.
type Q22Result struct {
	Auction int64      `json:"auction"`
	Bidder  int64      `json:"bidder"`
	Price   int64      `json:"price"`
	Channel string     `json:"channel"`
	Dir1    NullString `json:"dir1"`
	Dir2    NullString `json:"dir2"`
	Dir3    NullString `json:"dir3"`
}

// Q22 splits bid URLs into directories:
//
//	SELECT auction, bidder, price, channel,
//	  SPLIT_INDEX(url, '/', 3) as dir1,
//	  SPLIT_INDEX(url, '/', 4) as dir2,
//	  SPLIT_INDEX(url, '/', 5) as dir3 FROM bid;
//
// SPLIT_INDEX keeps empty fields and gives NULL past the last one, as
// Flink's does.
func Q22(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q22Result] {
	return eddy.Map(bidSource(env, cfg), func(b nexmark.Bid) Q22Result {
		r := Q22Result{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel}
		r.Dir1, r.Dir2, r.Dir3 = splitDirs(b.URL)
		return r
	}).Name("q22")
}

// splitDirs returns SPLIT_INDEX(url, '/', i) for i = 3, 4, 5 in one scan.
func splitDirs(url string) (d3, d4, d5 NullString) {
	s := url
	for i := 0; i < 3; i++ {
		j := strings.IndexByte(s, '/')
		if j < 0 {
			return
		}
		s = s[j+1:]
	}
	out := [3]*NullString{&d3, &d4, &d5}
	for _, d := range out {
		j := strings.IndexByte(s, '/')
		if j < 0 {
			*d = NullString{S: s, Valid: true}
			return
		}
		*d = NullString{S: s[:j], Valid: true}
		s = s[j+1:]
	}
	return
}
