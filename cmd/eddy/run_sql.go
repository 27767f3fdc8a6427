package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/eddystream/eddy"
	_ "github.com/eddystream/eddy/connectors/all" // the built-in connectors and formats
	"github.com/eddystream/eddy/sql"
)

// runSQL runs the SQL script in file as a job: its DDL builds the catalog,
// its INSERTs (and queries, which print their changes) run as one job.
// The settings parallelism.default, execution.checkpointing.interval and
// pipeline.name apply when the matching flag is not given, as does
// execution.checkpointing.min-pause.
func runSQL(cmd *cobra.Command, file string, parallelism int, optsAt func(p int, restore string) []eddy.Option, rest *restFlags) error {
	src, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read %s: %w", file, err)
	}
	s := sql.NewSession(sql.WithParallelism(parallelism))
	results, err := s.Execute(string(src))
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	printed := false
	for _, r := range results {
		if r.Text != "" {
			fmt.Fprint(cmd.OutOrStdout(), r.Text)
			printed = true
		}
	}
	if inserts, queries := s.Pending(); inserts == 0 && queries == 0 {
		if printed {
			// A script of EXPLAIN, SHOW, DESCRIBE or SET statements has
			// printed what it asked for; there is no job to run.
			return nil
		}
		return fmt.Errorf("%s: the script has no INSERT INTO or query to run (and nothing to show: add an INSERT INTO ... SELECT, a SELECT, or EXPLAIN)", file)
	}
	set := s.Settings()
	name := strings.TrimSuffix(filepath.Base(file), ".sql")
	if v, ok := set["pipeline.name"]; ok {
		name = v
	}
	var extra []eddy.Option
	if v, ok := set["parallelism.default"]; ok && !cmd.Flags().Changed("parallelism") {
		p, err := strconv.Atoi(v)
		if err != nil || p <= 0 {
			return fmt.Errorf("%s: SET 'parallelism.default' = '%s': want a positive integer", file, v)
		}
		extra = append(extra, eddy.WithParallelism(p))
		parallelism = p
	}
	ckpt, err := checkpointSettings(set, !cmd.Flags().Changed("checkpoint-interval"))
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	extra = append(extra, ckpt...)
	first := true
	return rest.run(cmd, name, parallelism, func(p int, restore string) (*eddy.Environment, error) {
		opts := append(optsAt(p, restore), extra...)
		if !first {
			// A rescale: the session is built again, at the new parallelism.
			s = sql.NewSession(sql.WithParallelism(p))
			if _, err := s.Execute(string(src)); err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			opts = append(opts, eddy.WithParallelism(p))
		}
		first = false
		env := eddy.NewEnvironment(append(opts, eddy.WithLogger(jobLogger(name)))...)
		if err := s.Build(env); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		return env, nil
	}, true)
}
