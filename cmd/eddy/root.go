package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newRootCmd() *cobra.Command {
	var logFormat string
	root := &cobra.Command{
		Use:           "eddy",
		Short:         "eddy is a stream processing engine: event time, keyed state and windows in one binary",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			applyGCDefaults(os.Getenv)
			// On a terminal, standard error shows status lines below
			// the logs (progress.go).
			wrapStderr(cmd.SetErr, cmd.ErrOrStderr())
			return setupLogging(cmd, logFormat)
		},
	}
	registerLogFlag(root, &logFormat)
	root.AddCommand(newDemoCmd(), newSavepointCmd(), newVersionCmd())
	root.AddCommand(newNexmarkCmd(), newRunCmd(), newSQLCmd(), newPipelineCmd())
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of eddy",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := "(devel)"
			if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
				v = bi.Main.Version
			}
			fmt.Fprintln(cmd.OutOrStdout(), "eddy", v)
			return nil
		},
	}
}
