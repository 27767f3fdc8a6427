package eddy

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// BadRecordPolicy says what a source does with a record it cannot parse.
type BadRecordPolicy uint8

const (
	// FailOnBadRecord fails the job with an error naming the record's
	// location. It is the default.
	FailOnBadRecord BadRecordPolicy = iota
	// DeadLetterBadRecords counts the record and sends it to the source's
	// dead-letter side output (see DeadLetters), and carries on.
	DeadLetterBadRecords
)

// DeadLetter is a malformed input record a source set aside.
type DeadLetter = ops.DeadLetter

// DeadLetters returns the dead-letter side output of a source: the records
// it could not parse, with where they were and what was wrong. The source
// must use DeadLetterBadRecords.
func DeadLetters[T any](s *Stream[T]) *Stream[DeadLetter] {
	if s.node.OutTypes[ops.DeadLetterTag] == nil {
		s.node.OutTypes[ops.DeadLetterTag] = runtime.NewOutType[DeadLetter]()
	}
	return &Stream[DeadLetter]{env: s.env, node: s.node, tag: ops.DeadLetterTag}
}

// FileOptions configures the file sources.
type FileOptions[T any] struct {
	// Watermarks timestamps the records; the zero value gives none.
	Watermarks WatermarkStrategy[T]
	// OnBadRecord says what to do with a line that does not parse.
	OnBadRecord BadRecordPolicy
}

// expandPaths resolves glob patterns; each pattern must match a file.
func expandPaths(patterns []string) ([]string, error) {
	var files []string
	for _, p := range patterns {
		m, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("bad file pattern %q: %w", p, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("no file matches %q", p)
		}
		sort.Strings(m)
		files = append(files, m...)
	}
	return files, nil
}

// fileSource adds a source reading files with one split per file; decode
// turns one line into a record.
func fileSource[T any](env *Environment, name string, patterns []string, opts FileOptions[T], header bool, newDecoder func() lineDecoder[T]) *Stream[T] {
	files, err := expandPaths(patterns)
	if err != nil {
		env.fail(fmt.Errorf("eddy: %s source: %w", name, err))
	}
	src := &fileSplits[T]{files: files, policy: opts.OnBadRecord, header: header, newDecoder: newDecoder}
	s := FromSource[T](env, name, src, opts.Watermarks)
	src.source = s.node
	return s
}

// fileSplits is a SplitSource of files. A split is (file number, byte
// offset of the next line, number of lines read) and the file's path.
type fileSplits[T any] struct {
	files      []string
	policy     BadRecordPolicy
	header     bool
	newDecoder func() lineDecoder[T]
	source     *runtime.Node
}

func (f *fileSplits[T]) Splits(int) ([][]byte, error) {
	var out [][]byte
	for i, p := range f.files {
		out = append(out, ops.EncodeSplit(p, int64(i), 0, 0))
	}
	return out, nil
}

func (f *fileSplits[T]) NewReader(_ *runtime.Context, splits [][]byte) (CheckpointedReader[T], error) {
	r := &fileReader[T]{policy: f.policy, decode: f.newDecoder(), source: f.source.Name, header: f.header}
	for _, b := range splits {
		v, path, err := ops.DecodeSplit(b, 3)
		if err != nil {
			return nil, fmt.Errorf("file source: %w", err)
		}
		r.files = append(r.files, fileSplit{index: int(v[0]), path: path, offset: v[1], line: v[2]})
	}
	return r, nil
}

// lineDecoder parses one line of a file.
type lineDecoder[T any] func(line []byte) (T, error)

type fileSplit struct {
	index  int
	path   string
	offset int64 // of the next line
	line   int64 // lines read so far
}

// fileReader reads its files one after the other, a line at a time.
type fileReader[T any] struct {
	files  []fileSplit
	cur    int
	f      *os.File
	r      *bufio.Reader
	buf    []byte
	policy BadRecordPolicy
	decode lineDecoder[T]
	source string
	header bool
}

func (r *fileReader[T]) Read(out *SourceOutput[T]) error {
	for !out.Full() {
		if r.cur == len(r.files) {
			return io.EOF
		}
		sp := &r.files[r.cur]
		if r.f == nil {
			f, err := os.Open(sp.path)
			if err != nil {
				return fmt.Errorf("opening %s: %w", sp.path, err)
			}
			if sp.offset > 0 {
				if _, err := f.Seek(sp.offset, io.SeekStart); err != nil {
					f.Close()
					return fmt.Errorf("seeking %s to byte %d: %w", sp.path, sp.offset, err)
				}
			}
			r.f, r.r = f, bufio.NewReaderSize(f, 1<<16)
			out.AddSplit(sp.index)
		}
		line, n, err := r.readLine()
		if n > 0 {
			sp.offset += int64(n)
			sp.line++
			if len(bytes.TrimSpace(line)) > 0 && !(r.header && sp.line == 1) {
				v, derr := r.decode(line)
				if derr == errComment {
					continue
				}
				if derr != nil {
					loc := fmt.Sprintf("%s:%d", sp.path, sp.line)
					if r.policy == FailOnBadRecord {
						return fmt.Errorf("%s: %w (to skip bad lines and keep them aside, set OnBadRecord to DeadLetterBadRecords and read eddy.DeadLetters of the source)", loc, derr)
					}
					out.DeadLetter(DeadLetter{Source: r.source, Location: loc, Raw: string(line), Error: derr.Error()})
				} else {
					out.Emit(sp.index, v)
				}
			}
		}
		if err == io.EOF {
			r.f.Close()
			r.f = nil
			out.FinishSplit(sp.index)
			r.cur++
			continue
		}
		if err != nil {
			return fmt.Errorf("reading %s after line %d: %w", sp.path, sp.line, err)
		}
	}
	return nil
}

// readLine returns the next line without its line ending and the number of
// bytes it took in the file, or io.EOF at the end of the file (possibly with
// a last line that has no line ending).
func (r *fileReader[T]) readLine() ([]byte, int, error) {
	r.buf = r.buf[:0]
	for {
		chunk, err := r.r.ReadSlice('\n')
		r.buf = append(r.buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && err != io.EOF {
			return nil, 0, err
		}
		return bytes.TrimRight(r.buf, "\r\n"), len(r.buf), err
	}
}

func (r *fileReader[T]) SnapshotSplits() ([][]byte, error) {
	var out [][]byte
	for _, sp := range r.files[r.cur:] {
		out = append(out, ops.EncodeSplit(sp.path, int64(sp.index), sp.offset, sp.line))
	}
	return out, nil
}

func (r *fileReader[T]) Close() error {
	if r.f != nil {
		return r.f.Close()
	}
	return nil
}

// ReadJSONLines adds a bounded source reading JSON objects, one a line,
// from the files matching the patterns, each decoded into a T with
// encoding/json. Each file is a split: with parallelism p, subtask i reads
// files i, i+p, …. A line that does not decode fails the job with its file
// and line number, or goes to DeadLetters if opts.OnBadRecord says so.
func ReadJSONLines[T any](env *Environment, opts FileOptions[T], patterns ...string) *Stream[T] {
	return fileSource(env, "JSONLines", patterns, opts, false, func() lineDecoder[T] {
		return func(line []byte) (T, error) {
			var v T
			err := json.Unmarshal(line, &v)
			return v, err
		}
	})
}

// CSVOptions configures ReadCSV.
type CSVOptions[T any] struct {
	FileOptions[T]
	// Comma is the field separator; 0 means ','.
	Comma rune
	// Header skips the first line of every file.
	Header bool
	// Comment, if set, marks comment lines: lines that start with it are
	// skipped.
	Comment rune
}

// ReadCSV adds a bounded source reading comma-separated lines from the
// files matching the patterns; parse turns the fields of a line into a
// record. Quoted fields may not span lines. Bad lines are handled as in
// ReadJSONLines.
func ReadCSV[T any](env *Environment, parse func(fields []string) (T, error), opts CSVOptions[T], patterns ...string) *Stream[T] {
	comma := opts.Comma
	if comma == 0 {
		comma = ','
	}
	return fileSource(env, "CSV", patterns, opts.FileOptions, opts.Header, func() lineDecoder[T] {
		var rd bytes.Reader
		return func(line []byte) (T, error) {
			var zero T
			if opts.Comment != 0 && bytes.HasPrefix(bytes.TrimSpace(line), []byte(string(opts.Comment))) {
				return zero, errComment
			}
			rd.Reset(line)
			cr := csv.NewReader(&rd)
			cr.Comma = comma
			cr.FieldsPerRecord = -1
			fields, err := cr.Read()
			if err != nil {
				return zero, err
			}
			return parse(fields)
		}
	})
}

// errComment tells the file reader that a line is a comment.
var errComment = errors.New("comment line")
