package eddy

import (
	"fmt"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connectors/filesystem"
	"github.com/eddystream/eddy/formats"
)

// SinkTwoPhase adds an exactly-once sink that runs the committer
// newCommitter returns for each subtask (see connector.TwoPhaseCommitter).
// With checkpoints, what the sink makes visible is exactly the output of the
// records the last completed checkpoint accounts for, once; without
// checkpoints it commits at the end of the input.
func SinkTwoPhase[T, TX any](s *Stream[T], name string, newCommitter func(subtask int) (connector.TwoPhaseCommitter[T, TX], error)) *Sink {
	return WriteTo(s, name, connector.TwoPhase(func(ctx connector.WriterContext) (connector.TwoPhaseCommitter[T, TX], error) {
		return newCommitter(ctx.Subtask())
	}))
}

// WriteFiles adds an exactly-once sink writing records as JSON lines into
// part files in dir. A part file is written under a hidden name
// (".part-….jsonl.inprogress") and renamed to "part-….jsonl" only when the
// checkpoint that covers it completes (or, without checkpoints, at the end of
// the input), so readers that skip hidden files never see uncommitted or
// duplicated output. Each subtask starts a new part file after every
// checkpoint.
func WriteFiles[T any](s *Stream[T], dir string) *Sink {
	if dir == "" {
		s.env.fail(fmt.Errorf("eddy: WriteFiles: no directory given"))
	}
	return WriteTo(s, "Files", filesystem.NewSink(filesystem.SinkOptions{Dir: dir, Suffix: ".jsonl"}, formats.JSONEncoder[T]))
}
