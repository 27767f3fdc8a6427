// Command eddy runs stream processing jobs: the demo, the Nexmark benchmark,
// and (in later versions) SQL scripts.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCmd().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "eddy:", err)
		os.Exit(1)
	}
}
