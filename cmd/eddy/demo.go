package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/internal/demo"
)

func newDemoCmd() *cobra.Command {
	o := demo.Options{}
	var (
		rest restFlags
		st   stateFlags
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the hot-items demo job on the built-in Nexmark generator",
		Long: `Run the hot-items demo: bids from the built-in Nexmark generator are counted
per auction in 10-second windows sliding every 2 seconds of event time, and
the auctions with the most bids in each window are printed. It needs no
outside services.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkPositive("events", o.Events); err != nil {
				return err
			}
			if err := checkParallelism(o.Parallelism); err != nil {
				return err
			}
			if err := checkPositive("top", o.TopN); err != nil {
				return err
			}
			if err := checkPositive("checkpoint-interval", o.CheckpointInterval); err != nil {
				return err
			}
			if err := st.check(cmd); err != nil {
				return err
			}
			rest.checkpointDir = o.CheckpointDir
			if err := rest.check(); err != nil {
				return err
			}
			o.State = st.open()
			start := time.Now()
			// The REST API can rescale the job: it stops with a savepoint
			// and runs again from it at the new parallelism.
			err := rest.run(cmd, "hot-items", o.Parallelism, func(p int, restore string) (*eddy.Environment, error) {
				at := o
				at.Parallelism = p
				if restore != "" {
					at.FromSavepoint, at.Fresh = restore, false
				}
				env := eddy.NewEnvironment(append(at.EnvOptions(), eddy.WithLogger(jobLogger("hot-items")))...)
				demo.Build(env, cmd.OutOrStdout(), at)
				return env, nil
			}, true)
			if err != nil {
				return err
			}
			wall := time.Since(start)
			fmt.Fprintf(cmd.ErrOrStderr(), "processed %d events in %v (%.0f events/s)\n", o.Events, wall.Round(time.Millisecond), float64(o.Events)/wall.Seconds())
			return nil
		},
	}
	cmd.Flags().Int64Var(&o.Events, "events", 2_000_000, "number of Nexmark events to generate")
	cmd.Flags().IntVar(&o.Parallelism, "parallelism", 2, "parallel subtasks per operator (1 to 32768)")
	cmd.Flags().IntVar(&o.TopN, "top", 3, "auctions to report per window")
	cmd.Flags().StringVar(&o.FromSavepoint, "from-savepoint", "", "restore the job from this savepoint (the parallelism may differ)")
	cmd.Flags().StringVar(&o.CheckpointDir, "checkpoint-dir", "", "take checkpoints in this directory; a run on a directory with checkpoints resumes from the latest")
	cmd.Flags().DurationVar(&o.CheckpointInterval, "checkpoint-interval", 10*time.Second, "time between checkpoints")
	cmd.Flags().BoolVar(&o.Fresh, "fresh", false, "ignore (and delete) the checkpoints of an earlier run and start from the beginning")
	cmd.Flags().StringVar(&o.Output, "output", "", "write the results exactly once as JSON-lines part files into this directory instead of printing them")
	rest.register(cmd)
	st.register(cmd)
	return cmd
}
