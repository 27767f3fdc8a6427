package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/eddystream/eddy/nexmark/queries"
)

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// startProgress shows, on a terminal w, a line with the events generated
// so far out of total, updated four times a second, and returns the
// function that stops it and clears the line. It shows nothing when w is
// not a terminal.
func startProgress(w io.Writer, label string, total int64) (stop func()) {
	return startProgressOf(w, label, total, queries.GeneratedEvents)
}

// startProgressOf is startProgress for the counter count.
func startProgressOf(w io.Writer, label string, total int64, count func() int64) (stop func()) {
	if !isTerminal(w) || total <= 0 {
		return func() {}
	}
	base := count()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		start := time.Now()
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-t.C:
				n := count() - base
				fmt.Fprintf(w, "\r\033[K%s  %d / %d events  %3.0f%%  %s", label, n, total,
					100*float64(n)/float64(total), time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}
