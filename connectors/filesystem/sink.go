package filesystem

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/eddystream/eddy/connector"
)

// SinkOptions configures a file sink.
type SinkOptions struct {
	// Dir is the directory the part files go in; it is created if missing.
	Dir string
	// Suffix ends the names of part files, e.g. ".jsonl".
	Suffix string
}

// NewSink returns an exactly-once sink writing each record as a line made
// by a per-subtask encoder into part files in opts.Dir. A part file is
// written under a hidden name (".part-…<suffix>.inprogress") and renamed
// to "part-…<suffix>" only when the checkpoint that covers it completes (or,
// without checkpoints, at the end of the input), so readers that skip hidden
// files never see uncommitted or duplicated output. Each subtask starts a
// new part file after every checkpoint.
func NewSink[T any](opts SinkOptions, newEncoder func() connector.Encoder[T]) connector.TransactionalSink[T] {
	var seq atomic.Int64
	return connector.TwoPhase(func(ctx connector.WriterContext) (connector.TwoPhaseCommitter[T, PartFile], error) {
		if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("file sink: %w", err)
		}
		return &committer[T]{dir: opts.Dir, suffix: opts.Suffix, subtask: ctx.Subtask(), ctx: ctx, seq: &seq, enc: newEncoder()}, nil
	})
}

// PartFile is a part file in progress: its hidden name and its final name,
// both relative to the sink's directory. It is the transaction of the file
// sink.
type PartFile struct {
	Temp  string `json:"temp"`
	Final string `json:"final"`
}

type committer[T any] struct {
	dir     string
	suffix  string
	subtask int
	ctx     connector.WriterContext // counts the bytes written
	seq     *atomic.Int64
	enc     connector.Encoder[T]
	f       *os.File
	w       *bufio.Writer
	line    []byte
}

func (c *committer[T]) Begin() (PartFile, error) {
	name := fmt.Sprintf("part-%d-%d-%d%s", c.subtask, time.Now().UnixNano(), c.seq.Add(1), c.suffix)
	tx := PartFile{Temp: "." + name + ".inprogress", Final: name}
	f, err := os.OpenFile(filepath.Join(c.dir, tx.Temp), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return PartFile{}, fmt.Errorf("file sink: %w", err)
	}
	c.f, c.w = f, bufio.NewWriterSize(f, 1<<16)
	return tx, nil
}

func (c *committer[T]) Write(tx *PartFile, v T) error {
	var err error
	c.line, err = c.enc.Encode(c.line[:0], v)
	if err != nil {
		return fmt.Errorf("file sink: encoding a record for %s: %w", tx.Temp, err)
	}
	c.line = append(c.line, '\n')
	connector.CountBytesOut(c.ctx, len(c.line))
	_, err = c.w.Write(c.line)
	return err
}

// RetainsNoRecords implements connector.NonRetainingWriter: Write encodes
// the record into the part file's buffer before it returns.
func (c *committer[T]) RetainsNoRecords() bool { return true }

func (c *committer[T]) PreCommit(tx *PartFile) error {
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

func (c *committer[T]) Commit(tx PartFile) error {
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

func (c *committer[T]) Abort(tx PartFile) error {
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
func (c *committer[T]) Recover(pending, _ []PartFile) error {
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

// NewFileWriter returns an at-least-once sink that writes each record as a
// line made by the encoder into the one file at path, which it creates or
// truncates. It must run as one subtask. After a failure and restart,
// records written since the last checkpoint are written again.
func NewFileWriter[T any](path string, newEncoder func() connector.Encoder[T]) connector.Sink[T] {
	return fileWriterSink[T]{path, newEncoder}
}

type fileWriterSink[T any] struct {
	path       string
	newEncoder func() connector.Encoder[T]
}

func (s fileWriterSink[T]) NewWriter(ctx connector.WriterContext) (connector.Writer[T], error) {
	if ctx.Parallelism() != 1 {
		return nil, fmt.Errorf("file sink %q writes one file and must run with parallelism 1, not %d", s.path, ctx.Parallelism())
	}
	f, err := os.Create(s.path)
	if err != nil {
		return nil, fmt.Errorf("file sink: %w", err)
	}
	return &fileWriter[T]{path: s.path, ctx: ctx, f: f, w: bufio.NewWriterSize(f, 1<<16), enc: s.newEncoder()}, nil
}

type fileWriter[T any] struct {
	path string
	ctx  connector.WriterContext // counts the bytes written
	f    *os.File
	w    *bufio.Writer
	enc  connector.Encoder[T]
	line []byte
}

func (w *fileWriter[T]) Write(records []T, _ []int64) error {
	for _, v := range records {
		var err error
		w.line, err = w.enc.Encode(w.line[:0], v)
		if err != nil {
			return fmt.Errorf("file sink: encoding a record for %s: %w", w.path, err)
		}
		w.line = append(w.line, '\n')
		connector.CountBytesOut(w.ctx, len(w.line))
		if _, err := w.w.Write(w.line); err != nil {
			return fmt.Errorf("file sink: writing %s: %w", w.path, err)
		}
	}
	return nil
}

func (w *fileWriter[T]) Flush() error {
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("file sink: writing %s: %w", w.path, err)
	}
	return nil
}

func (w *fileWriter[T]) Close() error {
	if w.f == nil {
		return nil
	}
	ferr := w.w.Flush()
	cerr := w.f.Close()
	w.f = nil
	if ferr != nil {
		return fmt.Errorf("file sink: writing %s: %w", w.path, ferr)
	}
	if cerr != nil {
		return fmt.Errorf("file sink: closing %s: %w", w.path, cerr)
	}
	return nil
}
