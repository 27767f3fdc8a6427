// Command relational runs each of eddy's relational operators on a small
// changelog and prints what it produces: the changelog itself where its
// order is fixed, the final table it describes where two inputs interleave.
// The programs are those of docs/relational.md, and the test of this
// package checks their output, so that the page cannot drift from the code.
//
//	go run ./examples/relational
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
)

// section is one small job of the tour.
type section struct {
	name string
	run  func(ctx context.Context, w io.Writer) error
}

// sections lists the jobs in the order docs/relational.md shows them.
var sections = []section{
	{"GroupAggregate", groupAggregate},
	{"MiniBatch and LocalGlobal", miniBatch},
	{"Join", join},
	{"TemporalJoin", temporalJoin},
	{"LookupJoin", lookupJoin},
	{"TopN", topN},
	{"TopNRanked", topNRanked},
	{"Deduplicate", deduplicate},
	{"ChangelogNormalize", normalize},
	{"WriteUpserts", writeUpserts},
}

// run runs every section, writing its name and its output to w.
func run(ctx context.Context, w io.Writer) error {
	for _, s := range sections {
		fmt.Fprintf(w, "== %s\n", s.name)
		if err := s.run(ctx, w); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}
