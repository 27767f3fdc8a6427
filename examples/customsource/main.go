// Command customsource runs a job on a source written outside eddy's
// internals, with the public connector SPI only (see source.go): a sharded
// log whose enumerator hands out shards on request and whose readers
// checkpoint their positions. It sums each shard's readings in 10-second
// event-time windows, with checkpoints, and prints the sums with the print
// connector.
//
//	go run ./examples/customsource -shards 4 -per-shard 2000
package main

import (
	"context"
	"flag"
	"io"
	"log"
	"os"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/connectors/print"
	"github.com/eddystream/eddy/window"
)

// WindowSum is the sum of a shard's readings in a window.
type WindowSum struct {
	Shard int
	Start int64
	Sum   int64
}

// config is what the command runs.
type config struct {
	shards      int
	perShard    int64
	parallelism int
	checkpoints string
}

// run runs the job, printing the window sums to out.
func run(ctx context.Context, c config, out io.Writer) error {
	env := eddy.NewEnvironment(eddy.WithParallelism(c.parallelism),
		eddy.WithCheckpointing(200*time.Millisecond), eddy.WithCheckpointDir(c.checkpoints), eddy.WithFreshStart())
	src := &LogSource{Shards: c.shards, PerShard: c.perShard}
	readings := eddy.FromSource(env, "sharded log", src, eddy.BoundedOutOfOrder(0, func(r Reading) int64 { return r.Time }))
	byShard := eddy.KeyBy(readings, func(r Reading) int { return r.Shard })
	sums := eddy.Aggregate(eddy.Window(byShard, window.Tumbling(10*time.Second)), agg.Sum(func(r Reading) int64 { return r.Value }))
	rows := eddy.Map(sums, func(w eddy.Windowed[int, int64]) WindowSum {
		return WindowSum{Shard: w.Key, Start: w.Window.Start, Sum: w.Value}
	})
	eddy.WriteTo(rows, "print", print.NewSink[WindowSum](print.Options{Writer: out})).Parallelism(1)
	return env.Execute(ctx, "custom source")
}

func main() {
	var c config
	flag.IntVar(&c.shards, "shards", 4, "shards of the log")
	flag.Int64Var(&c.perShard, "per-shard", 2000, "readings per shard")
	flag.IntVar(&c.parallelism, "parallelism", 2, "parallel subtasks")
	flag.StringVar(&c.checkpoints, "checkpoints", "", "checkpoint directory (default: a temporary one)")
	flag.Parse()
	if c.checkpoints == "" {
		dir, err := os.MkdirTemp("", "customsource")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		c.checkpoints = dir
	}
	if err := run(context.Background(), c, os.Stdout); err != nil {
		log.Fatal(err)
	}
}
