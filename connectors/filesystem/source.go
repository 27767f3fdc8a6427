// Package filesystem is eddy's file connector: a source that reads files
// line by line (JSON lines, CSV) with exactly-once positions, optionally
// watching a directory for new files, and an exactly-once sink of part
// files. It registers as "filesystem" with Flink's option names.
package filesystem

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/eddystream/eddy/connector"
)

// SourceOptions configures a file source.
type SourceOptions struct {
	// Paths are files, directories (every file below them whose name does
	// not start with '.' or '_') or glob patterns (whose wildcards do not
	// match such names either, as in a shell). A "file://" prefix is
	// allowed.
	Paths []string
	// MonitorInterval, if positive, makes the source unbounded: every
	// interval it looks for files that appeared under Paths and reads them
	// too. Otherwise the source reads the files there are when the job
	// first starts, and ends. Files must be complete when they appear
	// (write them elsewhere, or under a hidden name, and rename them into
	// place): a file is read once, to the end it has then.
	MonitorInterval time.Duration
	// SkipFirstLine skips the first line of every file (a CSV header).
	SkipFirstLine bool
}

// NewSource returns a source reading every line of the files of opts as a
// record, decoded by a decoder newDecoder makes for each reader. Each file is
// a split, whose position (byte offset and line number) is checkpointed. A
// line that does not decode is a bad record located at "file:line". Blank
// lines are skipped.
func NewSource[T any](opts SourceOptions, newDecoder func() connector.Decoder[T]) connector.Source[T] {
	return &source[T]{opts: opts, newDecoder: newDecoder}
}

type source[T any] struct {
	opts       SourceOptions
	newDecoder func() connector.Decoder[T]
}

// split state: byte offset of the next line, lines read so far.
func encodeState(offset, line int64) []byte {
	b := binary.AppendVarint(nil, offset)
	return binary.AppendVarint(b, line)
}

func decodeState(b []byte) (offset, line int64, err error) {
	offset, n := binary.Varint(b)
	if n <= 0 {
		return 0, 0, errors.New("file split state is corrupt")
	}
	line, m := binary.Varint(b[n:])
	if m <= 0 {
		return 0, 0, errors.New("file split state is corrupt")
	}
	return offset, line, nil
}

// list returns the files under the source's paths, sorted; with mustMatch,
// a path that matches nothing is an error.
func (s *source[T]) list(mustMatch bool) ([]string, error) {
	var files []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	for _, raw := range s.opts.Paths {
		p := strings.TrimPrefix(raw, "file://")
		matches, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("bad file pattern %q: %w", raw, err)
		}
		if len(matches) == 0 && mustMatch {
			return nil, fmt.Errorf("no file matches %q; check the path", raw)
		}
		for _, m := range matches {
			if hiddenByWildcard(p, m) {
				continue
			}
			info, err := os.Stat(m)
			if err != nil {
				return nil, err
			}
			if !info.IsDir() {
				add(m)
				continue
			}
			err = filepath.WalkDir(m, func(q string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if q != m && hidden(d.Name()) {
					if d.IsDir() {
						return filepath.SkipDir
					}
					return nil
				}
				if d.Type().IsRegular() {
					add(q)
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("listing %s: %w", m, err)
			}
		}
	}
	sort.Strings(files)
	return files, nil
}

// hidden reports whether a file or directory name is hidden from the
// source: it starts with '.' or '_' (in-progress files, markers such as
// _SUCCESS).
func hidden(name string) bool { return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") }

// hiddenByWildcard reports whether match, a match of the glob pattern,
// reaches a hidden name through a wildcard: as in a shell, "*.jsonl" does
// not match ".draft.jsonl", but ".draft.jsonl" or ".d*" does.
func hiddenByWildcard(pattern, match string) bool {
	pe := strings.Split(filepath.Clean(pattern), string(filepath.Separator))
	me := strings.Split(filepath.Clean(match), string(filepath.Separator))
	if len(pe) != len(me) {
		return false
	}
	for i := range pe {
		if hidden(me[i]) && strings.ContainsAny(pe[i], `*?[\`) && pe[i][:1] != me[i][:1] {
			return true
		}
	}
	return false
}

func (s *source[T]) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	if len(s.opts.Paths) == 0 {
		return nil, errors.New("file source: no path given")
	}
	if s.opts.MonitorInterval <= 0 {
		return connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) {
			files, err := s.list(true)
			if err != nil {
				return nil, fmt.Errorf("file source %q: %w", ctx.SourceName(), err)
			}
			out := make([]connector.Split, len(files))
			for i, f := range files {
				out[i] = connector.Split{ID: f, State: encodeState(0, 0)}
			}
			return out, nil
		})
	}
	e := &monitor[T]{src: s, ctx: ctx, seen: map[string]bool{}}
	if len(restored) > 0 {
		if err := e.restore(restored); err != nil {
			return nil, fmt.Errorf("file source %q: restoring the enumerator: %w", ctx.SourceName(), err)
		}
	}
	if err := e.scan(); err != nil {
		return nil, err
	}
	ctx.Every(s.opts.MonitorInterval, e.scan)
	return e, nil
}

// monitor is the enumerator of a source that watches for new files: it
// assigns every new file to the next reader in turn. Its state is the files
// it has seen and those not yet assigned.
type monitor[T any] struct {
	src     *source[T]
	ctx     connector.EnumeratorContext
	seen    map[string]bool
	pending []string
	readers []int
	next    int
}

func (m *monitor[T]) scan() error {
	files, err := m.src.list(false)
	if err != nil {
		return fmt.Errorf("file source %q: %w", m.ctx.SourceName(), err)
	}
	for _, f := range files {
		if !m.seen[f] {
			m.seen[f] = true
			m.pending = append(m.pending, f)
		}
	}
	m.assign()
	return nil
}

func (m *monitor[T]) assign() {
	if len(m.readers) == 0 {
		return
	}
	for _, f := range m.pending {
		r := m.readers[m.next%len(m.readers)]
		m.next++
		m.ctx.AssignSplits(r, connector.Split{ID: f, State: encodeState(0, 0)})
	}
	m.pending = nil
}

func (m *monitor[T]) AddReader(subtask int) error {
	m.readers = append(m.readers, subtask)
	sort.Ints(m.readers)
	m.assign()
	return nil
}

func (m *monitor[T]) HandleSplitRequest(int) error { return nil }

func (m *monitor[T]) HandleEvent(subtask int, _ []byte) error {
	return fmt.Errorf("file source %q: unexpected event from reader %d", m.ctx.SourceName(), subtask)
}

func (m *monitor[T]) SnapshotState(int64) ([]byte, error) {
	var b []byte
	seen := make([]string, 0, len(m.seen))
	for f := range m.seen {
		seen = append(seen, f)
	}
	sort.Strings(seen)
	for _, list := range [][]string{seen, m.pending} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, f := range list {
			b = binary.AppendUvarint(b, uint64(len(f)))
			b = append(b, f...)
		}
	}
	return b, nil
}

func (m *monitor[T]) restore(b []byte) error {
	for i := 0; i < 2; i++ {
		n, k := binary.Uvarint(b)
		if k <= 0 {
			return errors.New("state is corrupt")
		}
		b = b[k:]
		for j := uint64(0); j < n; j++ {
			l, k := binary.Uvarint(b)
			if k <= 0 || uint64(len(b)-k) < l {
				return errors.New("state is corrupt")
			}
			f := string(b[k : k+int(l)])
			b = b[k+int(l):]
			if i == 0 {
				m.seen[f] = true
			} else {
				m.pending = append(m.pending, f)
			}
		}
	}
	return nil
}

func (m *monitor[T]) Close() error { return nil }

func (s *source[T]) NewReader(ctx connector.ReaderContext) (connector.Reader[T], error) {
	return &reader[T]{src: s, ctx: ctx, name: ctx.SourceName(), decode: s.newDecoder()}, nil
}

// decodeLegacy converts a split of the first checkpoint format.
func decodeLegacy(b []byte) (connector.Split, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n != 3 {
		return connector.Split{}, errors.New("split state is corrupt or from another source")
	}
	b = b[k:]
	var v [3]int64
	for i := range v {
		x, m := binary.Varint(b)
		if m <= 0 {
			return connector.Split{}, errors.New("split state is truncated")
		}
		v[i], b = x, b[m:]
	}
	return connector.Split{ID: string(b), State: encodeState(v[1], v[2])}, nil
}

type fileSplit struct {
	path   string
	offset int64 // of the next line
	line   int64 // lines read so far
}

// reader reads its files one after the other, a line at a time.
type reader[T any] struct {
	src    *source[T]
	ctx    connector.ReaderContext // counts the bytes read
	name   string
	files  []fileSplit
	f      *os.File
	r      *bufio.Reader
	buf    []byte
	decode connector.Decoder[T]
	out    connector.SplitOutput[T]
	emit   func(T)
}

func (r *reader[T]) AddSplits(splits []connector.Split) error {
	for _, s := range splits {
		if s.ID == "" {
			// A split of eddy's first checkpoint format: a count of three,
			// (file number, offset, line) as varints, then the path.
			legacy, err := decodeLegacy(s.State)
			if err != nil {
				return fmt.Errorf("file source: %w", err)
			}
			s = legacy
		}
		off, line, err := decodeState(s.State)
		if err != nil {
			return fmt.Errorf("file source: split %s: %w", s.ID, err)
		}
		r.files = append(r.files, fileSplit{path: s.ID, offset: off, line: line})
	}
	return nil
}

func (r *reader[T]) Read(out connector.Output[T]) error {
	for out.Room() > 0 {
		if len(r.files) == 0 {
			return nil
		}
		sp := &r.files[0]
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
			so := out.Split(sp.path)
			r.out = so
			r.emit = so.Emit
		}
		line, n, err := r.readLine()
		if n > 0 {
			connector.CountBytesIn(r.ctx, n) // the line and its line ending
			sp.offset += int64(n)
			sp.line++
			if len(bytes.TrimSpace(line)) > 0 && !(r.src.opts.SkipFirstLine && sp.line == 1) {
				if derr := r.decode.Decode(line, r.emit); derr != nil {
					loc := fmt.Sprintf("%s:%d", sp.path, sp.line)
					bad := connector.DeadLetter{Source: r.name, Location: loc, Raw: string(line), Error: derr.Error()}
					if berr := out.BadRecord(bad); berr != nil {
						return berr
					}
				}
			}
		}
		if err == io.EOF {
			r.f.Close()
			r.f = nil
			r.out.Finish()
			r.files = r.files[1:]
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
func (r *reader[T]) readLine() ([]byte, int, error) {
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

func (r *reader[T]) SnapshotState(int64) ([]connector.Split, error) {
	out := make([]connector.Split, len(r.files))
	for i, sp := range r.files {
		out[i] = connector.Split{ID: sp.path, State: encodeState(sp.offset, sp.line)}
	}
	return out, nil
}

func (r *reader[T]) Close() error {
	if r.f != nil {
		return r.f.Close()
	}
	return nil
}
