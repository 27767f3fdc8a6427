package main

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

// TestRun checks the window sums the job prints against a brute-force
// computation.
func TestRun(t *testing.T) {
	c := config{shards: 3, perShard: 450, parallelism: 2, checkpoints: t.TempDir()}
	var out bytes.Buffer
	if err := run(context.Background(), c, &out); err != nil {
		t.Fatal(err)
	}
	sums := map[[2]int64]int64{}
	for _, r := range (&LogSource{Shards: c.shards, PerShard: c.perShard}).All() {
		sums[[2]int64{int64(r.Shard), r.Time / 10000 * 10000}] += r.Value
	}
	var want []string
	for k, v := range sums {
		want = append(want, fmt.Sprintf("+I[%d, %d, %d]", k[0], k[1], v))
	}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("printed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestConformance runs the connector conformance suite on the source.
func TestConformance(t *testing.T) {
	src := &LogSource{Shards: 7, PerShard: 700}
	connectortest.RunSource(t, connectortest.SourceCase[Reading]{
		Open: func(testing.TB) (connector.Source[Reading], func()) { return src, nil },
		Want: src.All(),
		Seq:  func(r Reading) int64 { return r.Seq },
	})
}
