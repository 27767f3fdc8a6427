package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

func newSQLCmd() *cobra.Command {
	var (
		file, initFile, historyFile string
		parallelism                 int
		refresh                     time.Duration
	)
	cmd := &cobra.Command{
		Use:   "sql",
		Short: "The interactive SQL client: run statements and watch the results of queries",
		Long: `The SQL client, as Flink's: statements end with ";" and may span lines. DDL, SET,
SHOW, DESCRIBE and EXPLAIN run at once; INSERT INTO starts a job in the background
(SHOW JOBS lists the jobs, STOP JOB 'id' stops one); a query runs as a job whose
result shows as SET 'sql-client.execution.result-mode' says: 'table', a table kept
up to date in place; 'changelog', the changes as they come, with their kind (+I,
-U, +U, -D); 'tableau', rows printed as they come (the default when the output is
not a terminal). q or Ctrl-C stops a query; bounded queries end by themselves.

With -f the statements of a file run one after the other, each printed before its
results, and the first that fails stops the client with an error pointing at it.
-i runs a file of DDL and SET statements first. HISTORY lists the statements run
(kept in --history-file across sessions), !n runs statement n again. HELP lists
the commands.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkParallelism(parallelism); err != nil {
				return err
			}
			if err := checkPositive("refresh-interval", refresh); err != nil {
				return err
			}
			// The client handles Ctrl-C itself: it stops the query shown,
			// or drops the statement being typed.
			intr := make(chan os.Signal, 1)
			signal.Notify(intr, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(intr)
			ctx, cancel := context.WithCancel(context.WithoutCancel(cmd.Context()))
			defer cancel()
			c, err := newSQLClient(ctx, sqlClientConfig{
				in:          cmd.InOrStdin(),
				out:         cmd.OutOrStdout(),
				signals:     intr,
				parallelism: parallelism,
				refresh:     refresh,
				historyFile: historyFile,
				history:     cmd.Flags().Changed("history-file"),
				script:      file,
			})
			if err != nil {
				return err
			}
			defer c.close()
			if initFile != "" {
				if err := c.runInit(initFile); err != nil {
					return err
				}
			}
			if file != "" {
				return c.runFile(file)
			}
			return c.repl()
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "file", "f", "", "run the statements of this SQL file instead of reading them interactively")
	f.StringVarP(&initFile, "init", "i", "", "run the DDL and SET statements of this SQL file first, silently")
	f.StringVar(&historyFile, "history-file", defaultHistoryPath(), "keep the statements typed at the terminal in this file (\"\" keeps none)")
	f.IntVar(&parallelism, "parallelism", 1, "parallel subtasks per operator of the session's jobs, unless SET 'parallelism.default' says otherwise")
	f.DurationVar(&refresh, "refresh-interval", 500*time.Millisecond, "time between redraws of a result shown in table or changelog mode")
	return cmd
}

// errQuit ends the client: QUIT, EXIT, Ctrl-D or a termination signal.
var errQuit = errors.New("quit")
