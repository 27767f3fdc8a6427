package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/pipeline"
)

func newPipelineCmd() *cobra.Command {
	var (
		parallelism int
		chkDir      string
		interval    time.Duration
		fresh       bool
		savepoint   string
		rest        restFlags
		st          stateFlags
	)
	cmd := &cobra.Command{
		Use:   "pipeline FILE.yaml",
		Short: "Run a Flink CDC YAML pipeline: whole-database sync that follows schema changes",
		Long: `Run a pipeline defined in Flink CDC 3's YAML format: a source block (type: mysql
with 'tables' as database.table patterns, or type: postgres), a sink block (type:
postgres or mysql with a JDBC 'url', iceberg, kafka, or values/print), optional
route and transform rules, and a pipeline block (name, parallelism, schema.change.behavior). Every table the
source matches is created in the sink and kept in step with its rows and its
schema. With --checkpoint-dir the pipeline takes checkpoints, writes the sink's
changes in transactions when they complete, restarts from them after a failure,
and resumes from the latest when started again on the same directory.

Example:
  eddy pipeline --checkpoint-dir /var/lib/eddy/orders mysql-to-postgres.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			def, err := pipeline.ParseFile(args[0])
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("parallelism") {
				parallelism = def.Parallelism
			}
			if err := checkParallelism(parallelism); err != nil {
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
			// A rescale builds the pipeline again at its parallelism,
			// restoring the savepoint it stopped with (restore).
			return rest.run(cmd, def.Name, parallelism, func(p int, restore string) (*eddy.Environment, error) {
				opts := []eddy.Option{eddy.WithParallelism(p), eddy.WithStateBackend(backend), eddy.WithLogger(jobLogger(def.Name))}
				if chkDir != "" {
					opts = append(opts, eddy.WithCheckpointDir(chkDir), eddy.WithCheckpointing(interval))
				}
				if restore != "" {
					opts = append(opts, eddy.WithRestoreFrom(restore))
				} else {
					if fresh {
						opts = append(opts, eddy.WithFreshStart())
					}
					if savepoint != "" {
						opts = append(opts, eddy.WithRestoreFrom(savepoint))
					}
				}
				env := eddy.NewEnvironment(opts...)
				return env, pipeline.Build(env, def)
			}, true)
		},
	}
	f := cmd.Flags()
	f.IntVar(&parallelism, "parallelism", 1, "parallel subtasks per operator (1 to 32768); 'pipeline.parallelism' of the file when not given")
	f.StringVar(&chkDir, "checkpoint-dir", "", "take checkpoints in this directory; a run on a directory with checkpoints resumes from the latest")
	f.DurationVar(&interval, "checkpoint-interval", 10*time.Second, "time between checkpoints (the sink commits at each)")
	f.BoolVar(&fresh, "fresh", false, "ignore (and delete) the checkpoints of an earlier run and start from the beginning")
	f.StringVar(&savepoint, "from-savepoint", "", "restore the pipeline from this savepoint (the parallelism may differ)")
	rest.register(cmd)
	st.register(cmd)
	return cmd
}
