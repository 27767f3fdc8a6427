package main

import (
	"io"

	"github.com/eddystream/eddy/nexmark/queries"
)

// startProgress shows, on a terminal w, a line with the events generated
// so far out of total, updated four times a second, and returns the
// function that stops it and clears the line. It shows nothing when w is
// not a terminal.
func startProgress(w io.Writer, label string, total int64) (stop func()) {
	return startProgressOf(w, label, total, queries.GeneratedEvents)
}

// startProgressOf is startProgress for the counter count.
func startProgressOf(w io.Writer, label string, total int64, count func() int64) (stop func()) {
	return startCountProgress(w, label, "events", total, count)
}
