// Package demo holds the job that `eddy demo` runs: hot items over the
// built-in Nexmark generator, with no outside services.
package demo

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/window"
)

// Options configures the demo job.
type Options struct {
	// Events is the number of Nexmark events to generate.
	Events int64
	// Parallelism is the number of subtasks per operator.
	Parallelism int
	// TopN is how many auctions each window reports.
	TopN int
	// CheckpointDir, if set, enables checkpoints every CheckpointInterval
	// there; a run on a directory with checkpoints resumes from them.
	CheckpointDir      string
	CheckpointInterval time.Duration
	// Fresh ignores the checkpoints of an earlier run.
	Fresh bool
	// Output, if set, is a directory the results go to through the
	// exactly-once file sink, instead of w.
	Output string
	// FromSavepoint, if set, restores the job from this savepoint.
	FromSavepoint string
	// State is where keyed state lives; the zero value means
	// eddy.HeapState().
	State eddy.StateBackend
	// Started, if set, is called with the environment once the job is
	// built, so that a caller can serve its REST API.
	Started func(env *eddy.Environment)
}

// HotItems counts the bids per auction in 10-second windows sliding every 2
// seconds of event time, and writes, for every window, the auctions with the
// most bids.
func HotItems(ctx context.Context, w io.Writer, o Options) error {
	env := eddy.NewEnvironment(o.EnvOptions()...)
	Build(env, w, o)
	if o.Started != nil {
		o.Started(env)
	}
	return env.Execute(ctx, "hot-items")
}

// EnvOptions are the environment's options of o: its parallelism,
// checkpoints, restore and state backend.
func (o Options) EnvOptions() []eddy.Option {
	opts := []eddy.Option{eddy.WithParallelism(o.Parallelism)}
	if o.CheckpointDir != "" {
		opts = append(opts, eddy.WithCheckpointDir(o.CheckpointDir), eddy.WithCheckpointing(o.CheckpointInterval))
	}
	if o.Fresh {
		opts = append(opts, eddy.WithFreshStart())
	}
	if o.FromSavepoint != "" {
		opts = append(opts, eddy.WithRestoreFrom(o.FromSavepoint))
	}
	if o.State.Name() != "" {
		opts = append(opts, eddy.WithStateBackend(o.State))
	}
	return opts
}

// Build adds the hot-items job of o (its Events, TopN and Output) to env,
// printing its results to w unless o.Output is set.
func Build(env *eddy.Environment, w io.Writer, o Options) {
	cfg := nexmark.DefaultConfig()
	cfg.MaxEvents = o.Events
	cfg.FirstEventRate = 100_000 // events per second of event time
	bids := nexmark.Bids(env, cfg)
	perAuction := eddy.KeyBy(bids, func(b nexmark.Bid) int64 { return b.Auction })
	counts := eddy.Aggregate(eddy.Window(perAuction, window.Sliding(10*time.Second, 2*time.Second)), agg.Count[nexmark.Bid]())
	// A sliding window's results carry its last millisecond, so the 2 s
	// tumbling window that contains it holds exactly that window's counts.
	top := eddy.ProcessWindow(eddy.WindowAll(counts, window.Tumbling(2*time.Second)),
		func(_ struct{}, _ window.Window, elems iter.Seq[eddy.Windowed[int64, int64]], emit func(string)) error {
			all := slices.Collect(elems)
			if len(all) == 0 {
				return nil
			}
			slices.SortFunc(all, func(a, b eddy.Windowed[int64, int64]) int {
				return cmp.Or(cmp.Compare(b.Value, a.Value), cmp.Compare(a.Key, b.Key))
			})
			var sb strings.Builder
			fmt.Fprintf(&sb, "%s  %d auctions;", all[0].Window, len(all))
			for _, r := range all[:min(o.TopN, len(all))] {
				fmt.Fprintf(&sb, " auction %d: %d bids", r.Key, r.Value)
				sb.WriteByte(';')
			}
			emit(strings.TrimSuffix(sb.String(), ";"))
			return nil
		})
	if o.Output != "" {
		eddy.WriteFiles(top, o.Output).Name("top auctions")
	} else {
		eddy.PrintTo(top, w).Name("top auctions")
	}
}
