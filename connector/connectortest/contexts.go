package connectortest

import (
	"log/slog"
	"time"
)

// WriterContext is a connector.WriterContext for a test that calls a
// writer or a committer itself: subtask 0 of 1 of the sink Name ("test"
// when empty), at the wall clock's processing time, logging to Logger
// (discarded when nil).
type WriterContext struct {
	Name   string
	Logger *slog.Logger
}

// SinkName returns Name, or "test".
func (c WriterContext) SinkName() string {
	if c.Name == "" {
		return "test"
	}
	return c.Name
}

// Subtask returns 0.
func (WriterContext) Subtask() int { return 0 }

// Parallelism returns 1.
func (WriterContext) Parallelism() int { return 1 }

// ProcessingTime returns the wall clock's time in milliseconds.
func (WriterContext) ProcessingTime() int64 { return time.Now().UnixMilli() }

// Log returns Logger, or a logger that discards.
func (c WriterContext) Log() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}
