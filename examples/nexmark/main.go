// Command nexmark runs one Nexmark query of package nexmark/queries on the
// built-in generator and prints its results, one a line:
//
//	go run ./examples/nexmark -query q5 -events 200000
//
// `eddy nexmark` runs the same queries as a benchmark.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/nexmark/queries"
)

func main() {
	name := flag.String("query", "q5", "query to run, q0 to q22")
	events := flag.Int64("events", 200_000, "Nexmark events to generate")
	tps := flag.Int64("tps", 100_000, "events per second of event time")
	flag.Parse()

	q, ok := queries.Lookup(*name)
	if !ok {
		log.Fatalf("unknown query %q", *name)
	}
	cfg := nexmark.DefaultConfig()
	cfg.MaxEvents = *events
	cfg.FirstEventRate = *tps

	// q10 writes files and q13 reads a side input: give them a directory.
	dir, err := os.MkdirTemp("", "nexmark-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	opts := queries.Options{Sink: queries.Collect, Dir: filepath.Join(dir, "q10"), SideInput: filepath.Join(dir, "side_input.txt")}
	if err := queries.WriteSideInput(opts.SideInput, queries.SideInputRows); err != nil {
		log.Fatal(err)
	}

	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	out, err := q.Build(env, cfg, opts)
	if err != nil {
		log.Fatal(err)
	}
	if err := env.Execute(context.Background(), *name); err != nil {
		log.Fatal(err)
	}
	enc := json.NewEncoder(os.Stdout)
	results := out.Results()
	for _, r := range results {
		if err := enc.Encode(r); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Fprintf(os.Stderr, "%s (%s): %d results from %d events\n", q.Name, q.Title, len(results), *events)
}
