package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/eddystream/eddy/nexmark"
)

func newNexmarkGenerateCmd() *cobra.Command {
	var (
		events int64
		tps    int64
		out    string
	)
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Write Nexmark events as JSON lines",
		Long: `Write the events of the built-in Nexmark generator as JSON lines, one event
a line in the shape of the reference DDL:

  {"event_type":2,"person":null,"auction":null,"bid":{"auction":1000,...}}

The events are those one source subtask generates (part 0 of 1).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if events <= 0 {
				return fmt.Errorf("--events must be positive, got %d", events)
			}
			if tps <= 0 {
				return fmt.Errorf("--tps must be positive, got %d", tps)
			}
			cfg := nexmark.DefaultConfig()
			cfg.MaxEvents = events
			cfg.FirstEventRate = tps
			var w io.Writer = cmd.OutOrStdout()
			if out != "" && out != "-" {
				f, err := os.Create(out)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			var n atomic.Int64
			stop := startProgressOf(cmd.ErrOrStderr(), "generate", events, n.Load)
			err := generateJSON(cmd.Context(), w, cfg, &n)
			stop()
			if err != nil {
				return err
			}
			if f, ok := w.(*os.File); ok && f != os.Stdout {
				return f.Close()
			}
			return nil
		},
	}
	cmd.Flags().Int64Var(&events, "events", 10_000_000, "number of events to write")
	cmd.Flags().Int64Var(&tps, "tps", 10_000_000, "event rate in events per second of event time")
	cmd.Flags().StringVar(&out, "out", "", "file to write (default: standard output)")
	return cmd
}

// generateJSON writes the events of cfg to w as JSON lines, counting them
// in n.
func generateJSON(ctx context.Context, w io.Writer, cfg nexmark.Config, n *atomic.Int64) error {
	g, err := nexmark.NewGenerator(cfg, 0, 1)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	batch := make([]nexmark.Event, 256)
	var line []byte
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		k := g.NextBatch(batch)
		if k == 0 {
			break
		}
		for i := range batch[:k] {
			line = append(nexmark.AppendJSON(line[:0], &batch[i]), '\n')
			if _, err := bw.Write(line); err != nil {
				return err
			}
		}
		n.Add(int64(k))
	}
	return bw.Flush()
}
