package queries

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/nexmark"
)

// benchState selects the keyed state backend of BenchmarkQueries.
var benchState = flag.String("state", "heap", `keyed state backend of BenchmarkQueries: "heap" or "pebble" (256 MiB budget)`)

// BenchmarkQueries runs every query (and "gen", the generator alone) on
// b.N events at the reference V1 rate of 10 M events/s of event time, at
// parallelism 1 and 2, and reports events/s and events/s per core of the
// process (CPU time over wall time is the number of cores, as the Nexmark
// runner measures):
//
//	go test -run XXX -bench Queries -benchtime 10000000x ./nexmark/queries
//
// With -state pebble keyed state lives in Pebble.
func BenchmarkQueries(b *testing.B) {
	names := []string{"gen"}
	for _, q := range All {
		names = append(names, q.Name)
	}
	for _, name := range names {
		for _, p := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/p%d", name, p), func(b *testing.B) {
				cfg := nexmark.DefaultConfig()
				cfg.MaxEvents = int64(max(b.N, 1))
				dir := b.TempDir()
				o := Options{Sink: Blackhole, Dir: filepath.Join(dir, "q10"), SideInput: filepath.Join(dir, "side_input.txt")}
				if err := WriteSideInput(o.SideInput, SideInputRows); err != nil {
					b.Fatal(err)
				}
				opts := []eddy.Option{eddy.WithParallelism(p)}
				switch *benchState {
				case "heap":
				case "pebble":
					opts = append(opts, eddy.WithStateBackend(eddy.PebbleState(filepath.Join(dir, "state"), 256<<20)))
				default:
					b.Fatalf("-state %q: want heap or pebble", *benchState)
				}
				env := eddy.NewEnvironment(opts...)
				if name == "gen" {
					eddy.Discard(Generate(env, cfg))
				} else {
					q, _ := Lookup(name)
					if _, err := q.Build(env, cfg, o); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				cpu0, wall0 := connectortest.CPUTime(), time.Now()
				if err := env.Execute(context.Background(), name); err != nil {
					b.Fatal(err)
				}
				wall, cpu := time.Since(wall0), connectortest.CPUTime()-cpu0
				b.StopTimer()
				b.ReportMetric(float64(cfg.MaxEvents)/wall.Seconds(), "events/s")
				b.ReportMetric(float64(cfg.MaxEvents)/cpu.Seconds(), "events/s/core")
				b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores")
			})
		}
	}
}
