package eddy

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// TwoPhaseCommitter is the interface of an exactly-once sink: records are
// written into transactions that are pre-committed when a checkpoint's
// barrier passes and committed when the checkpoint completes. See
// SinkTwoPhase.
type TwoPhaseCommitter[T, TX any] = ops.TwoPhaseCommitter[T, TX]

// SinkTwoPhase adds an exactly-once sink that runs the committer
// newCommitter returns for each subtask. With checkpoints, what the sink
// makes visible is exactly the output of the records the last completed
// checkpoint accounts for, once; without checkpoints it commits at the end
// of the input.
func SinkTwoPhase[T, TX any](s *Stream[T], name string, newCommitter func(subtask int) (TwoPhaseCommitter[T, TX], error)) *Sink {
	sk := sinkNode(s, name, func(ctx *runtime.Context) (runtime.Input[T], error) {
		c, err := newCommitter(ctx.Subtask)
		if err != nil {
			return nil, err
		}
		return ops.NewTwoPhaseSink[T, TX](ctx, c)
	})
	sk.node.UnionLists = []string{ops.PendingList, ops.CurrentList}
	return sk
}

// WriteFiles adds an exactly-once sink writing records as JSON lines into
// part files in dir. A part file is written under a hidden name
// (".part-….jsonl.inprogress") and renamed to "part-….jsonl" only when the
// checkpoint that covers it completes (or, without checkpoints, at the end of
// the input), so readers that skip hidden files never see uncommitted or
// duplicated output. Each subtask starts a new part file after every
// checkpoint.
func WriteFiles[T any](s *Stream[T], dir string) *Sink {
	var seq atomic.Int64
	return SinkTwoPhase(s, "Files", func(subtask int) (TwoPhaseCommitter[T, fileTx], error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("file sink: %w", err)
		}
		return &fileCommitter[T]{dir: dir, subtask: subtask, seq: &seq}, nil
	})
}

// fileTx is a part file in progress: its hidden name and its final name.
type fileTx struct {
	Temp  string `json:"temp"`
	Final string `json:"final"`
}

type fileCommitter[T any] struct {
	dir     string
	subtask int
	seq     *atomic.Int64
	f       *os.File
	w       *bufio.Writer
	enc     *json.Encoder
}

func (c *fileCommitter[T]) Begin() (fileTx, error) {
	name := fmt.Sprintf("part-%d-%d-%d.jsonl", c.subtask, time.Now().UnixNano(), c.seq.Add(1))
	tx := fileTx{Temp: "." + name + ".inprogress", Final: name}
	f, err := os.OpenFile(filepath.Join(c.dir, tx.Temp), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fileTx{}, fmt.Errorf("file sink: %w", err)
	}
	c.f, c.w = f, bufio.NewWriterSize(f, 1<<16)
	c.enc = json.NewEncoder(c.w)
	c.enc.SetEscapeHTML(false)
	return tx, nil
}

func (c *fileCommitter[T]) Write(tx *fileTx, v T) error {
	if err := c.enc.Encode(v); err != nil {
		return fmt.Errorf("file sink: encoding a %T into %s: %w", v, tx.Temp, err)
	}
	return nil
}

func (c *fileCommitter[T]) PreCommit(tx *fileTx) error {
	if c.f == nil {
		return nil
	}
	f := c.f
	c.f = nil
	if err := c.w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("file sink: writing %s: %w", tx.Temp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("file sink: syncing %s: %w", tx.Temp, err)
	}
	return f.Close()
}

func (c *fileCommitter[T]) Commit(tx fileTx) error {
	final := filepath.Join(c.dir, tx.Final)
	if err := os.Rename(filepath.Join(c.dir, tx.Temp), final); err != nil {
		if _, serr := os.Stat(final); serr == nil && errors.Is(err, fs.ErrNotExist) {
			return nil // committed before
		}
		return fmt.Errorf("file sink: committing %s: %w", tx.Final, err)
	}
	d, err := os.Open(c.dir)
	if err != nil {
		return fmt.Errorf("file sink: %w", err)
	}
	defer d.Close()
	return d.Sync()
}

func (c *fileCommitter[T]) Abort(tx fileTx) error {
	if c.f != nil {
		c.f.Close()
		c.f = nil
	}
	if err := os.Remove(filepath.Join(c.dir, tx.Temp)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("file sink: aborting %s: %w", tx.Temp, err)
	}
	return nil
}

// Recover removes the hidden part files of transactions the checkpoint does
// not list as pending: they were begun after it and their records will be
// written again.
func (c *fileCommitter[T]) Recover(pending, _ []fileTx) error {
	keep := map[string]bool{}
	for _, tx := range pending {
		keep[tx.Temp] = true
	}
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return fmt.Errorf("file sink: %w", err)
	}
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ".part-") && strings.HasSuffix(n, ".inprogress") && !keep[n] {
			if err := os.Remove(filepath.Join(c.dir, n)); err != nil {
				return fmt.Errorf("file sink: removing the uncommitted %s: %w", n, err)
			}
		}
	}
	return nil
}
