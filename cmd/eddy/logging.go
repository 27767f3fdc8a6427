package main

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"
)

// logFormatHelp describes --log-format.
const logFormatHelp = "log format: text or json (default: text when stderr is a terminal, json otherwise)"

// registerLogFlag adds --log-format to the root command, for every command.
func registerLogFlag(root *cobra.Command, format *string) {
	root.PersistentFlags().StringVar(format, "log-format", "", logFormatHelp)
}

// setupLogging makes the logger of --log-format, writing to the command's
// stderr, the default logger (slog.Default).
func setupLogging(cmd *cobra.Command, format string) error {
	h, err := newLogHandler(cmd.ErrOrStderr(), format)
	if err != nil {
		return err
	}
	slog.SetDefault(slog.New(h))
	return nil
}

// newLogHandler returns the handler of format writing to w; an empty
// format is text on a terminal and JSON otherwise.
func newLogHandler(w io.Writer, format string) (slog.Handler, error) {
	if format == "" {
		format = "json"
		if isTerminal(w) {
			format = "text"
		}
	}
	switch format {
	case "text":
		return slog.NewTextHandler(w, nil), nil
	case "json":
		return slog.NewJSONHandler(w, nil), nil
	default:
		return nil, fmt.Errorf("--log-format %q is not a log format: use text or json", format)
	}
}

// jobLogger is the default logger with the job's name as an attribute.
func jobLogger(name string) *slog.Logger { return slog.Default().With("job", name) }
