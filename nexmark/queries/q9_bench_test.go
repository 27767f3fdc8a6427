package queries

import (
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

// BenchmarkQ9Variants runs q9 as Q9 runs it ("custom": one keyed function
// that emits each winner when its auction closes) and as Flink plans it
// ("join": q9OnJoin, a join of auctions and bids and a top 1 per auction),
// alternating, at parallelism 1 and 2:
//
//	go test -run XXX -bench Q9Variants -benchtime 3000000x ./nexmark/queries
func BenchmarkQ9Variants(b *testing.B) {
	benchVariants(b, []string{"custom", "join"}, func(v string, env *eddy.Environment, cfg nexmark.Config) {
		if v == "join" {
			eddy.Discard(q9OnJoin(env, cfg))
			return
		}
		eddy.Discard(Q9(env, cfg))
	})
}
