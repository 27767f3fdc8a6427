package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/internal/demo"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/nexmark/queries"
)

// jobNames lists what `eddy run` can run.
func jobNames() []string {
	names := []string{"hot-items"}
	for _, q := range queries.All {
		if q.Name != "q10" && q.Name != "q13" {
			names = append(names, "nexmark-"+q.Name)
		}
	}
	return names
}

func newRunCmd() *cobra.Command {
	var (
		parallelism int
		events      int64
		tps         int64
		chkDir      string
		interval    time.Duration
		fresh       bool
		savepoint   string
		output      string
		rest        restFlags
		st          stateFlags
	)
	cmd := &cobra.Command{
		Use:   "run JOB|FILE.sql",
		Short: "Run a SQL script or a built-in job, with checkpoints, resume and savepoints",
		Long: `Run a SQL script (a file ending in .sql, in Flink's dialect: CREATE TABLE, CREATE
VIEW, SET, INSERT INTO, statement sets; its INSERTs run as one job), or a
built-in job: hot-items, or a Nexmark query as nexmark-q0 … nexmark-q22
(q10 and q13 need files; use eddy nexmark for them). With --checkpoint-dir the job
takes checkpoints, restarts from them after a failure, and when started again on
the same directory resumes from the latest one and says so (--fresh starts over).
With --output its results go exactly once to part files in a directory. With
--state pebble keyed state lives in an embedded LSM under --state-dir, and
checkpoints upload only the files earlier ones do not hold.

Jobs: ` + strings.Join(jobNames(), ", "),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkParallelism(parallelism); err != nil {
				return err
			}
			if err := checkPositive("events", events); err != nil {
				return err
			}
			if err := checkPositive("tps", tps); err != nil {
				return err
			}
			if err := checkPositive("checkpoint-interval", interval); err != nil {
				return err
			}
			if err := st.check(cmd); err != nil {
				return err
			}
			if err := rest.check(); err != nil {
				return err
			}
			rest.checkpointDir = chkDir
			if err := rest.listen(cmd); err != nil {
				return err
			}
			backend := st.open()
			name := args[0]
			// optsAt are the job's options at a parallelism, restoring a
			// savepoint (a rescale's) instead of starting as the flags say.
			optsAt := func(p int, restore string) []eddy.Option {
				opts := []eddy.Option{eddy.WithParallelism(p), eddy.WithStateBackend(backend), eddy.WithLogger(jobLogger(name))}
				if chkDir != "" {
					opts = append(opts, eddy.WithCheckpointDir(chkDir), eddy.WithCheckpointing(interval))
				}
				if restore != "" {
					return append(opts, eddy.WithRestoreFrom(restore))
				}
				if fresh {
					opts = append(opts, eddy.WithFreshStart())
				}
				if savepoint != "" {
					opts = append(opts, eddy.WithRestoreFrom(savepoint))
				}
				return opts
			}
			if strings.HasSuffix(name, ".sql") {
				return runSQL(cmd, name, parallelism, optsAt, &rest)
			}
			if name == "hot-items" {
				o := demo.Options{Events: events, TopN: 3, Output: output}
				return rest.run(cmd, name, parallelism, func(p int, restore string) (*eddy.Environment, error) {
					env := eddy.NewEnvironment(optsAt(p, restore)...)
					demo.Build(env, cmd.OutOrStdout(), o)
					return env, nil
				}, true)
			}
			q, ok := queries.Lookup(strings.TrimPrefix(name, "nexmark-"))
			if !ok || !strings.HasPrefix(name, "nexmark-") || q.Name == "q10" || q.Name == "q13" {
				return fmt.Errorf("unknown job %q; the jobs are %s", name, strings.Join(jobNames(), ", "))
			}
			cfg := nexmark.DefaultConfig()
			cfg.MaxEvents = events
			cfg.FirstEventRate = tps
			sink := queries.Options{Sink: queries.Blackhole}
			if output != "" {
				sink = queries.Options{Sink: queries.Files, Path: output}
			}
			return rest.run(cmd, name, parallelism, func(p int, restore string) (*eddy.Environment, error) {
				env := eddy.NewEnvironment(optsAt(p, restore)...)
				_, err := q.Build(env, cfg, sink)
				return env, err
			}, true)
		},
	}
	f := cmd.Flags()
	f.IntVar(&parallelism, "parallelism", 2, "parallel subtasks per operator (1 to 32768)")
	f.Int64Var(&events, "events", 10_000_000, "Nexmark events to generate")
	f.Int64Var(&tps, "tps", 10_000_000, "Nexmark events per second of event time")
	f.StringVar(&chkDir, "checkpoint-dir", "", "take checkpoints in this directory; a run on a directory with checkpoints resumes from the latest")
	f.DurationVar(&interval, "checkpoint-interval", 10*time.Second, "time between checkpoints")
	f.BoolVar(&fresh, "fresh", false, "ignore (and delete) the checkpoints of an earlier run and start from the beginning")
	f.StringVar(&savepoint, "from-savepoint", "", "restore the job from this savepoint (the parallelism may differ)")
	f.StringVar(&output, "output", "", "write the results exactly once as JSON-lines part files into this directory")
	rest.register(cmd)
	st.register(cmd)
	return cmd
}
