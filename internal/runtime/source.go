package runtime

// SourceDriver runs the source of one subtask. The subtask calls Step in a
// loop on its goroutine.
type SourceDriver interface {
	// Step emits at most about one batch of records downstream and reports
	// what happened. When the source has ended, Step emits the final
	// watermark and end of input downstream and returns Done. A Step that
	// finds no data available should wait no longer than a few milliseconds
	// before returning with N == 0.
	Step() (StepResult, error)
	// Close releases the source's resources.
	Close() error
}

// StepResult is what one Step did.
type StepResult struct {
	// N is the number of records emitted.
	N int
	// Done means the source has ended.
	Done bool
	// Idle means that all the source's splits are idle.
	Idle bool
}
