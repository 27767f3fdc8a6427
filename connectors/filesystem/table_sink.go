package filesystem

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// PartitionCommit configures when a partitioned table's sink commits a
// partition (writes its success file), as Flink's sink.partition-commit
// options do.
type PartitionCommit struct {
	// SuccessFile, if set, is the name of the empty file written into a
	// partition's directory when it is committed ("_SUCCESS").
	SuccessFile string
	// PartitionTime selects the partition-time trigger: a partition
	// commits once the watermark passes the time its values give (see
	// TimestampPattern) plus Delay. Otherwise the process-time trigger: once
	// the clock passes the partition's creation plus Delay. Either way only
	// after the checkpoint that commits its files completes, and every
	// partition at the end of the input.
	PartitionTime bool
	Delay         time.Duration
	// TimestampPattern makes a partition's time from its values: "$dt
	// $hr:00:00"; empty means the first partition column's value. The text
	// is read as yyyy-MM-dd[ HH:mm:ss[.fff]].
	TimestampPattern string
}

// tableTx is the transaction of a table's sink subtask: the part files it
// wrote since the last checkpoint, relative to the table's directory, and
// the partitions they are in with the time each was created.
type tableTx struct {
	Files []PartFile       `json:"files"`
	Parts map[string]int64 `json:"parts,omitempty"`
}

// tableSink is the exactly-once sink of a table's rows.
type tableSink struct {
	connector.TransactionalSink[connector.TableRecord]
	mode changelog.Mode
}

// ChangelogMode says which changes the table's format can write.
func (s tableSink) ChangelogMode() changelog.Mode { return s.mode }

var patternVar = regexp.MustCompile(`\$[A-Za-z_][A-Za-z0-9_]*`)

// newTableSink returns the sink of a table's rows into part files below
// dir, in partition directories for a partitioned table.
func newTableSink(dir, suffix string, layout *tableLayout, pc PartitionCommit, mode changelog.Mode, newEncoder func() connector.Encoder[connector.TableRecord]) tableSink {
	var seq atomic.Int64
	ts := connector.TwoPhase(func(ctx connector.WriterContext) (connector.TwoPhaseCommitter[connector.TableRecord, tableTx], error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("filesystem table sink: %w", err)
		}
		return newTableCommitter(dir, suffix, layout, pc, ctx, &seq, newEncoder()), nil
	})
	return tableSink{ts, mode}
}

// newTableCommitter returns the committer of one subtask of a table's sink;
// seq numbers the part files of every subtask.
func newTableCommitter(dir, suffix string, layout *tableLayout, pc PartitionCommit, ctx connector.WriterContext, seq *atomic.Int64, enc connector.Encoder[connector.TableRecord]) *tableCommitter {
	c := &tableCommitter{dir: dir, suffix: suffix, layout: layout, pc: pc, ctx: ctx, seq: seq, enc: enc,
		open: map[string]*openPart{}, waiting: map[string]int64{}, watermark: math.MinInt64}
	if layout.partitioned() {
		// The data columns of a row, copied as the row of a key is when
		// they are not the schema's first (dataPrefix), are encoded at
		// once and then not read again: each is written over the one
		// before.
		c.data, c.scratch = types.NewKeyEncoder(layout.schema, layout.dataCols...), types.NewScratchArena()
		c.dirs = newPartitionDirs(layout)
		if firstColumns(layout.dataCols) {
			c.dataPrefix = len(layout.dataCols)
		}
	}
	return c
}

// firstColumns reports whether cols are 0, 1, … len(cols)-1.
func firstColumns(cols []int) bool {
	for i, c := range cols {
		if c != i {
			return false
		}
	}
	return true
}

type openPart struct {
	f    *os.File
	w    *bufio.Writer
	temp string // relative to the table's directory
}

type tableCommitter struct {
	dir, suffix string
	layout      *tableLayout
	pc          PartitionCommit
	ctx         connector.WriterContext
	seq         *atomic.Int64
	enc         connector.Encoder[connector.TableRecord]
	data        *types.KeyEncoder // of the data columns
	// dataPrefix is the number of data columns when they are the
	// schema's first (the partition columns come last), else 0: the
	// encoder then reads them in the row as it is (types.Row.Prefix).
	dataPrefix int
	scratch    *types.Arena
	dirs       *partitionDirs
	open       map[string]*openPart
	// last is the open part file of the partition lastPart, the last
	// written to (nil when none is open).
	last     *openPart
	lastPart string
	// waiting holds the partitions whose files are committed and which
	// wait for their trigger, with their creation times.
	waiting   map[string]int64
	watermark int64
	line      []byte
}

func (c *tableCommitter) Begin() (tableTx, error) { return tableTx{}, nil }

func (c *tableCommitter) Write(tx *tableTx, v connector.TableRecord) error {
	part := ""
	row := v
	if c.dirs != nil {
		part = c.dirs.Dir(v.Row)
		row.Row = c.dataColumns(v.Row)
	}
	op := c.last
	if op == nil || part != c.lastPart {
		var err error
		if op, err = c.partFile(tx, part); err != nil {
			return err
		}
		c.last, c.lastPart = op, part
	}
	var err error
	c.line, err = c.enc.Encode(c.line[:0], row)
	if err != nil {
		return fmt.Errorf("filesystem table sink: encoding a row for %s: %w", op.temp, err)
	}
	c.line = append(c.line, '\n')
	connector.CountBytesOut(c.ctx, len(c.line))
	_, err = op.w.Write(c.line)
	return err
}

// partFile returns the open part file of partition part, opening one if
// the transaction has none.
func (c *tableCommitter) partFile(tx *tableTx, part string) (*openPart, error) {
	if op, ok := c.open[part]; ok {
		return op, nil
	}
	name := fmt.Sprintf("part-%d-%d-%d%s", c.ctx.Subtask(), time.Now().UnixNano(), c.seq.Add(1), c.suffix)
	pf := PartFile{Temp: filepath.Join(part, "."+name+".inprogress"), Final: filepath.Join(part, name)}
	if err := os.MkdirAll(filepath.Join(c.dir, part), 0o755); err != nil {
		return nil, fmt.Errorf("filesystem table sink: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(c.dir, pf.Temp), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("filesystem table sink: %w", err)
	}
	op := &openPart{f: f, w: bufio.NewWriterSize(f, 1<<16), temp: pf.Temp}
	c.open[part] = op
	tx.Files = append(tx.Files, pf)
	if part != "" {
		if tx.Parts == nil {
			tx.Parts = map[string]int64{}
		}
		if _, ok := tx.Parts[part]; !ok {
			tx.Parts[part] = c.ctx.ProcessingTime()
		}
	}
	return op, nil
}

// RetainsNoRecords implements connector.NonRetainingWriter: Write copies
// the partition values it compares the next row with, and encodes the row
// into the part file's buffer, before it returns.
func (c *tableCommitter) RetainsNoRecords() bool { return true }

func (c *tableCommitter) PreCommit(*tableTx) error {
	c.last = nil
	var first error
	for part, op := range c.open {
		delete(c.open, part)
		err := op.w.Flush()
		if err == nil {
			err = op.f.Sync()
		}
		if cerr := op.f.Close(); err == nil {
			err = cerr
		}
		if err != nil && first == nil {
			first = fmt.Errorf("filesystem table sink: writing %s: %w", op.temp, err)
		}
	}
	return first
}

func (c *tableCommitter) Commit(tx tableTx) error {
	dirs := map[string]bool{}
	for _, pf := range tx.Files {
		final := filepath.Join(c.dir, pf.Final)
		if err := os.Rename(filepath.Join(c.dir, pf.Temp), final); err != nil {
			if _, serr := os.Stat(final); serr == nil && errors.Is(err, fs.ErrNotExist) {
				continue // committed before
			}
			return fmt.Errorf("filesystem table sink: committing %s: %w", pf.Final, err)
		}
		dirs[filepath.Dir(final)] = true
	}
	for d := range dirs {
		if err := syncDir(d); err != nil {
			return fmt.Errorf("filesystem table sink: %w", err)
		}
	}
	if c.pc.SuccessFile != "" {
		for part, created := range tx.Parts {
			if t, ok := c.waiting[part]; !ok || created < t {
				c.waiting[part] = created
			}
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func (c *tableCommitter) Abort(tx tableTx) error {
	c.last = nil
	for part, op := range c.open {
		op.f.Close()
		delete(c.open, part)
	}
	for _, pf := range tx.Files {
		if err := os.Remove(filepath.Join(c.dir, pf.Temp)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("filesystem table sink: aborting %s: %w", pf.Temp, err)
		}
	}
	return nil
}

// Recover removes the hidden part files that the checkpoint does not list
// as pending, and takes up the partitions that hold committed files but no
// success file: their commit was still waiting for its trigger.
func (c *tableCommitter) Recover(pending, _ []tableTx) error {
	keep := map[string]bool{}
	for _, tx := range pending {
		for _, pf := range tx.Files {
			keep[filepath.Clean(pf.Temp)] = true
		}
	}
	hasData := map[string]bool{}
	hasSuccess := map[string]bool{}
	err := filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(c.dir, p)
		if err != nil {
			return err
		}
		n, part := d.Name(), filepath.Dir(rel)
		switch {
		case strings.HasPrefix(n, ".part-") && strings.HasSuffix(n, ".inprogress"):
			if !keep[rel] {
				if err := os.Remove(p); err != nil {
					return fmt.Errorf("removing the uncommitted %s: %w", rel, err)
				}
			}
		case n == c.pc.SuccessFile:
			hasSuccess[part] = true
		case strings.HasPrefix(n, "part-"):
			hasData[part] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("filesystem table sink: %w", err)
	}
	if c.pc.SuccessFile != "" && c.layout.partitioned() {
		now := c.ctx.ProcessingTime()
		for part := range hasData {
			if !hasSuccess[part] && part != "." {
				c.waiting[part] = now
			}
		}
	}
	return nil
}

// ProcessWatermark keeps the watermark for the partition-time trigger.
func (c *tableCommitter) ProcessWatermark(wm int64) error {
	c.watermark = wm
	return nil
}

// NotifyCheckpointComplete commits the partitions whose trigger fired.
func (c *tableCommitter) NotifyCheckpointComplete(int64) error {
	now := c.ctx.ProcessingTime()
	for part, created := range c.waiting {
		if c.watermark != math.MaxInt64 {
			if c.pc.PartitionTime {
				t, err := c.partitionTime(part)
				if err != nil {
					return err
				}
				if c.watermark < t+c.pc.Delay.Milliseconds() {
					continue
				}
			} else if now < created+c.pc.Delay.Milliseconds() {
				continue
			}
		}
		f, err := os.Create(filepath.Join(c.dir, part, c.pc.SuccessFile))
		if err != nil {
			return fmt.Errorf("filesystem table sink: committing partition %s: %w", part, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("filesystem table sink: committing partition %s: %w", part, err)
		}
		delete(c.waiting, part)
	}
	return nil
}

// partitionTime extracts the time of a partition from its directory.
func (c *tableCommitter) partitionTime(part string) (int64, error) {
	vals := map[string]string{}
	var first string
	for i, seg := range strings.Split(filepath.ToSlash(part), "/") {
		k, v, _ := strings.Cut(seg, "=")
		if u, err := url.PathUnescape(v); err == nil {
			v = u
		}
		vals[k] = v
		if i == 0 {
			first = v
		}
	}
	s := first
	if c.pc.TimestampPattern != "" {
		s = patternVar.ReplaceAllStringFunc(c.pc.TimestampPattern, func(m string) string { return vals[m[1:]] })
	}
	return parsePartitionTime(s, part)
}

func parsePartitionTime(s, part string) (int64, error) {
	if ts, err := types.ParseTimestamp(s, 3); err == nil {
		return ts.Millis, nil
	}
	if d, err := types.ParseDate(s); err == nil {
		return int64(d) * types.MillisPerDay, nil
	}
	return 0, fmt.Errorf("filesystem table sink: the time of partition %s is %q, which is not a timestamp (yyyy-MM-dd[ HH:mm:ss]); set 'partition.time-extractor.timestamp-pattern' to make one from the partition's values, e.g. '$dt $hr:00:00'", part, s)
}

// dataColumns returns the data columns of row r: in r's own memory when
// they come first and the encoding allows (types.Row.Prefix), else
// projected into the committer's scratch arena.
func (c *tableCommitter) dataColumns(r types.Row) types.Row {
	if c.dataPrefix > 0 {
		if p, ok := r.Prefix(c.dataPrefix); ok {
			return p
		}
	}
	return c.data.Project(c.scratch, r)
}
