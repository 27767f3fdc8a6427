package iceberg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	icebergo "github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// compactionOptions configure the compaction of small data files the
// committer runs while the job does. The names are those of Flink's Iceberg
// sink (compaction-enabled) and of its rewrite-data-files maintenance task
// (flink-maintenance.rewrite.*).
var compactionOptions = []connector.Option{
	{Key: "compaction-enabled", Type: connector.Bool, Default: "false",
		Description: "Whether the committer compacts small data files while the job runs, in the background, without holding up commits: after a commit, when a partition has at least 'flink-maintenance.rewrite.min-input-files' data files smaller than 'flink-maintenance.rewrite.min-file-size-bytes', their live rows (deletes applied) are rewritten into larger files and committed, after a later commit, as a replace snapshot that drops the old files and their delete files. With a primary key, the updates and deletions of rows that moved, including those committed while the rewrite ran, are applied at their new place."},
	{Key: "flink-maintenance.rewrite.min-input-files", Type: connector.Int, Default: "5",
		Description: "The number of small data files of a partition at which they are compacted.",
		Check:       connector.Positive},
	{Key: "flink-maintenance.rewrite.min-file-size-bytes", Type: connector.MemorySize,
		Description: "Data files smaller than this are small, and compacted; by default 75% of 'write.target-file-size-bytes'."},
	{Key: "flink-maintenance.rewrite.delete-ratio-threshold", Type: connector.Float, Default: "0.3",
		Description: "A data file of which at least this fraction of rows is deleted is rewritten too, whatever its size, which drops the delete files that name it; '0' rewrites no file for its deletes.",
		Check: func(v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 1 {
				return fmt.Errorf("want a fraction between 0 and 1")
			}
			return nil
		}},
	{Key: "flink-maintenance.rewrite.max-bytes", Type: connector.MemorySize, FallbackKeys: []string{"flink-maintenance.rewrite.max-rewrite-bytes"},
		Description: "At most this many bytes of small files are rewritten by one compaction, into one file per partition, which bounds the time and memory a compaction takes; the rest wait for the next compactions. By default 'write.target-file-size-bytes'."},
	{Key: "flink-maintenance.rewrite.schedule.commit-count", Type: connector.Int, Default: "10",
		Description: "A compaction starts after this many commits of the table since the last one started (or the job did); whichever of the 'schedule.*' conditions holds first starts it.",
		Check:       connector.Positive},
	{Key: "flink-maintenance.rewrite.schedule.data-file-count", Type: connector.Int, Default: "1000",
		Description: "A compaction starts once the commits since the last one started have added this many data files.",
		Check:       connector.Positive},
	{Key: "flink-maintenance.rewrite.schedule.data-file-size", Type: connector.MemorySize, Default: "100 gb",
		Description: "A compaction starts once the commits since the last one started have added files (data and delete files) of this many bytes."},
	{Key: "flink-maintenance.rewrite.schedule.interval-second", Type: connector.Int, Default: "600",
		Description: "A compaction starts at the first commit this many seconds after the last one started.",
		Check:       connector.Positive},
}

// compactionConfig is the compaction part of the sink's configuration.
type compactionConfig struct {
	enabled         bool
	minInputFiles   int
	minFileSize     int64
	maxRewriteBytes int64
	targetFileSize  int64
	deleteRatio     float64
	// schedule says when a compaction starts.
	schedule compactionSchedule
}

// compactionSchedule is when a compaction starts: at the first commit
// after which, since the last compaction started, any of these holds.
type compactionSchedule struct {
	commits   int64
	dataFiles int64
	dataBytes int64
	interval  time.Duration
}

func newCompactionConfig(o connector.Options, targetFileSize int64) compactionConfig {
	c := compactionConfig{
		enabled:         o.Bool("compaction-enabled"),
		minInputFiles:   int(o.Int("flink-maintenance.rewrite.min-input-files")),
		minFileSize:     targetFileSize / 4 * 3,
		maxRewriteBytes: targetFileSize,
		targetFileSize:  targetFileSize,
		deleteRatio:     o.Float("flink-maintenance.rewrite.delete-ratio-threshold"),
		schedule: compactionSchedule{
			commits:   o.Int("flink-maintenance.rewrite.schedule.commit-count"),
			dataFiles: o.Int("flink-maintenance.rewrite.schedule.data-file-count"),
			dataBytes: o.MemorySize("flink-maintenance.rewrite.schedule.data-file-size"),
			interval:  time.Duration(o.Int("flink-maintenance.rewrite.schedule.interval-second")) * time.Second,
		},
	}
	if o.IsSet("flink-maintenance.rewrite.max-bytes") {
		c.maxRewriteBytes = o.MemorySize("flink-maintenance.rewrite.max-bytes")
	}
	if o.IsSet("flink-maintenance.rewrite.min-file-size-bytes") {
		c.minFileSize = o.MemorySize("flink-maintenance.rewrite.min-file-size-bytes")
	}
	return c
}

// Names and summary properties of compaction.
const (
	// compactPrefix begins the names of the files compaction writes.
	compactPrefix = filePrefix + "-compact"
	// movedRowsKey is the Parquet footer key under which a compacted file
	// records where the rows of the sink's data files it holds came from
	// (a JSON list of movedEntry).
	movedRowsKey = "eddy.moved-rows"
	// summaryCompaction marks the snapshots of compactions.
	summaryCompaction = "eddy.compaction"
)

// movedEntry records that the live rows of a data file the writers wrote
// (From) are now in the compacted file To, in their order, from position
// Offset on. The writers' key index keeps pointing at From; the committer
// moves the position deletes the writers write for From to To.
type movedEntry struct {
	From   string `json:"from"`
	To     string `json:"-"`
	Offset int64  `json:"offset"`
	// Runs are the positions of From whose rows are in To, as [start, end)
	// runs in increasing order.
	Runs [][2]int64 `json:"runs"`
	// cum[i] is the number of positions in Runs[:i].
	cum []int64
}

// add records that position pos of From is the next row in To.
func (e *movedEntry) add(pos int64) {
	if n := len(e.Runs); n > 0 && e.Runs[n-1][1] == pos {
		e.Runs[n-1][1]++
		return
	}
	e.Runs = append(e.Runs, [2]int64{pos, pos + 1})
}

// index computes cum, which locate needs.
func (e *movedEntry) index() {
	e.cum = make([]int64, len(e.Runs))
	var n int64
	for i, r := range e.Runs {
		e.cum[i] = n
		n += r[1] - r[0]
	}
}

// locate returns the position in To of the row at pos of From, and false
// when that row is not in To (it was deleted before the compaction).
func (e *movedEntry) locate(pos int64) (int64, bool) {
	if e.cum == nil {
		e.index()
	}
	i := sort.Search(len(e.Runs), func(i int) bool { return e.Runs[i][1] > pos })
	if i == len(e.Runs) || pos < e.Runs[i][0] {
		return 0, false
	}
	return e.Offset + e.cum[i] + pos - e.Runs[i][0], true
}

// compactor compacts the small data files of the sink's table while the
// committer commits checkpoints, and moves the position deletes the
// writers write for rows that compaction moved. Its methods run on the
// committer's goroutine; the rewrite of a compaction runs in the
// background (see compact_background.go).
type compactor struct {
	cfg compactionConfig
	// rt is the row type of the table's rows, for files whose columns
	// carry no field ids; nil when there is none (the pipeline sink's
	// tables, whose schemas evolve): such files are not compacted.
	rt    *types.RowType
	where string
	log   *slog.Logger
	// moved maps the data files the writers wrote and compaction removed
	// to where their live rows are; nil until read from the footers of the
	// table's compacted files.
	moved map[string]*movedEntry
	// refs caches how many rows of each data file each Parquet
	// position-delete file of the table deletes, so that a delete file is
	// read once to choose files, and again only when it deletes rows of
	// files a compaction rewrites. The background rewrite uses it while it
	// runs, the committer only when none runs.
	refs map[string]map[string]int64
	// bg is the compaction running in the background, nil when none is.
	bg *backgroundRun
	// pending is what the table's commits added since the last compaction
	// started (or the compactor was made), which schedules the next one.
	pending pendingCommits
}

// deleteRefs returns how many rows of which data files the Parquet
// position-delete file d deletes, reading it the first time.
func (c *compactor) deleteRefs(ctx context.Context, fsys icebergio.IO, d icebergo.DataFile) (map[string]int64, error) {
	if ref := d.ReferencedDataFile(); ref != nil && *ref != "" {
		return map[string]int64{*ref: d.Count()}, nil
	}
	if refs, ok := c.refs[d.FilePath()]; ok {
		return refs, nil
	}
	rows, err := readPositionDeletes(ctx, fsys, d.FilePath())
	if err != nil {
		return nil, err
	}
	refs := map[string]int64{}
	for _, r := range rows {
		refs[r.path]++
	}
	if c.refs == nil || len(c.refs) >= maxCachedPaths {
		c.refs = map[string]map[string]int64{}
	}
	c.refs[d.FilePath()] = refs
	return refs, nil
}

// snapshotFiles returns the live data and delete files of tbl's current
// snapshot.
func snapshotFiles(tbl *table.Table, fsys icebergio.IO) (data, deletes []icebergo.DataFile, err error) {
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return nil, nil, nil
	}
	mfs, err := snap.Manifests(fsys)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the manifest list of snapshot %d: %w", snap.SnapshotID, err)
	}
	for _, mf := range mfs {
		entries, err := mf.FetchEntries(fsys, true)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the manifest %s: %w", mf.FilePath(), err)
		}
		for _, e := range entries {
			if mf.ManifestContent() == icebergo.ManifestContentDeletes {
				deletes = append(deletes, e.DataFile())
			} else {
				data = append(data, e.DataFile())
			}
		}
	}
	return data, deletes, nil
}

// isCompacted reports whether the data file p was written by compaction.
func isCompacted(p string) bool { return strings.HasPrefix(path.Base(p), compactPrefix+"-") }

// load reads where the rows of compacted files came from, from the
// footers of the compacted files of tbl's current snapshot, unless it did
// already.
func (c *compactor) load(tbl *table.Table, fsys icebergio.IO) error {
	if c.moved != nil {
		return nil
	}
	data, _, err := snapshotFiles(tbl, fsys)
	if err != nil {
		return err
	}
	moved := map[string]*movedEntry{}
	for _, df := range data {
		if !isCompacted(df.FilePath()) {
			continue
		}
		entries, err := readMovedRows(fsys, df.FilePath())
		if err != nil {
			return err
		}
		for _, e := range entries {
			moved[e.From] = e
		}
	}
	c.moved = moved
	return nil
}

// readMovedRows reads the movedEntry list of the compacted file p.
func readMovedRows(fsys icebergio.IO, p string) ([]*movedEntry, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, fmt.Errorf("opening the compacted file %s: %w", p, err)
	}
	defer f.Close()
	rdr, err := file.NewParquetReader(f)
	if err != nil {
		return nil, fmt.Errorf("reading the footer of the compacted file %s: %w", p, err)
	}
	defer rdr.Close()
	v := rdr.MetaData().KeyValueMetadata().FindValue(movedRowsKey)
	if v == nil {
		return nil, nil
	}
	var entries []*movedEntry
	if err := json.Unmarshal([]byte(*v), &entries); err != nil {
		return nil, fmt.Errorf("the footer of the compacted file %s: %s is corrupt: %w", p, movedRowsKey, err)
	}
	for _, e := range entries {
		e.To = p
		e.index()
	}
	return entries, nil
}

// readPositionDeletes reads the (file_path, pos) rows of a Parquet
// position-delete file.
func readPositionDeletes(ctx context.Context, fsys icebergio.IO, p string) ([]positionDelete, error) {
	var out []positionDelete
	err := scanPositionDeletes(ctx, fsys, p, nil, func(rec arrow.RecordBatch) error {
		paths, ok1 := rec.Column(0).(interface{ Value(int) string })
		poss, ok2 := rec.Column(1).(*array.Int64)
		if !ok1 || !ok2 {
			return fmt.Errorf("the position-delete file %s has columns %s and %s, not file_path string and pos long", p, rec.Column(0).DataType(), rec.Column(1).DataType())
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			out = append(out, positionDelete{path: paths.Value(i), pos: poss.Value(i)})
		}
		return nil
	})
	return out, err
}

// scanPositionDeletes calls each with the record batches of the Parquet
// position-delete file p: its columns cols (nil: all).
func scanPositionDeletes(ctx context.Context, fsys icebergio.IO, p string, cols []int, each func(arrow.RecordBatch) error) error {
	f, err := fsys.Open(p)
	if err != nil {
		return fmt.Errorf("opening the position-delete file %s: %w", p, err)
	}
	defer f.Close()
	rdr, err := file.NewParquetReader(f)
	if err != nil {
		return fmt.Errorf("reading the position-delete file %s: %w", p, err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: batchRows}, arrowAllocator)
	if err != nil {
		return fmt.Errorf("reading the position-delete file %s: %w", p, err)
	}
	rr, err := fr.GetRecordReader(ctx, cols, nil)
	if err != nil {
		return fmt.Errorf("reading the position-delete file %s: %w", p, err)
	}
	defer rr.Release()
	for rr.Next() {
		if err := each(rr.RecordBatch()); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("reading the position-delete file %s: %w", p, err)
	}
	return nil
}

// translate returns deletes with the position deletes of rows that
// compaction moved moved to the rows' new places: new delete files,
// written under tf, in place of those that name moved rows. done is to be
// called with the outcome of the commit of the returned files: after a
// success it removes the replaced files (a commit that succeeded is never
// made again, so nothing reads them); after a commit that certainly did
// not go through, the new ones.
func (c *compactor) translate(ctx context.Context, tbl *table.Table, tf *tableFiles, deletes []fileMeta) (out []fileMeta, done func(committed bool, err error), err error) {
	nothing := func(bool, error) {}
	if err := c.load(tbl, tf.fs); err != nil {
		return nil, nothing, err
	}
	if len(c.moved) == 0 || len(deletes) == 0 {
		return deletes, nothing, nil
	}
	spec, sc := tbl.Spec(), tbl.Schema()
	var replaced, written []string
	var dvs *deletionVectorWriter
	fail := func(err error) ([]fileMeta, func(bool, error), error) {
		if dvs != nil {
			dvs.Abort()
		}
		_ = removeFiles(tf.fs, written)
		return nil, nothing, err
	}
	for _, d := range deletes {
		if d.Path == "" || d.Content != contentPositionDeletes {
			out = append(out, d)
			continue
		}
		if d.isDeletionVector() {
			e := c.moved[d.ReferencedDataFile]
			if e == nil {
				out = append(out, d)
				continue
			}
			df, err := d.dataFile(spec, sc)
			if err != nil {
				return fail(err)
			}
			bm, err := dv.ReadDV(tf.fs, df)
			if err != nil {
				return fail(fmt.Errorf("reading the deletion vector of %s in %s: %w", d.ReferencedDataFile, d.Path, err))
			}
			if dvs == nil {
				dvs = tf.newDeletionVectorWriter(filePrefix + "-dv")
			}
			for pos := range bm.Positions() {
				if q, ok := e.locate(int64(pos)); ok {
					dvs.Delete(e.To, q, partitionKey(d.Partition))
				}
			}
			replaced = append(replaced, d.Path)
			continue
		}
		if ref := d.ReferencedDataFile; ref != "" && c.moved[ref] == nil {
			out = append(out, d)
			continue
		}
		rows, err := readPositionDeletes(ctx, tf.fs, d.Path)
		if err != nil {
			return fail(err)
		}
		if !slices.ContainsFunc(rows, func(r positionDelete) bool { return c.moved[r.path] != nil }) {
			out = append(out, d)
			continue
		}
		w := tf.newPositionDeleteWriter(filePrefix + "-deletes")
		w.SetPartition(partitionKey(d.Partition))
		for _, r := range rows {
			if e := c.moved[r.path]; e != nil {
				if q, ok := e.locate(r.pos); ok {
					w.Delete(e.To, q)
				}
				continue
			}
			w.Delete(r.path, r.pos)
		}
		ms, err := w.Close()
		if err != nil {
			return fail(err)
		}
		for _, m := range ms {
			written = append(written, m.Path)
		}
		out = append(out, ms...)
		replaced = append(replaced, d.Path)
	}
	if dvs != nil && dvs.Len() > 0 {
		ms, err := dvs.Close()
		if err != nil {
			return fail(err)
		}
		if len(ms) > 0 {
			written = append(written, ms[0].Path)
		}
		out = append(out, ms...)
	}
	return out, func(committed bool, err error) {
		switch {
		case committed:
			// A Puffin file holds the deletion vectors of several data
			// files: it stays while one of them is committed as it is.
			kept := map[string]bool{}
			for _, m := range out {
				kept[m.Path] = true
			}
			_ = removeFiles(tf.fs, slices.DeleteFunc(replaced, func(p string) bool { return kept[p] }))
		case err == nil || errors.Is(err, table.ErrCommitFailed):
			_ = removeFiles(tf.fs, written)
		}
	}, nil
}

// deletedPositions returns the sorted positions of p that dels delete.
func deletedPositions(dels map[string][]int64, p string) []int64 {
	d := dels[p]
	slices.Sort(d)
	return slices.Compact(d)
}

// prepare rewrites small data files of tbl's current snapshot (the base),
// if a partition has enough of them, into new files, and returns the
// compaction to commit (nil when there is nothing to compact). moved is
// where the rows of the sink's data files that earlier compactions moved
// are, as of the base. It runs in the background: it writes files, but
// changes nothing the committer reads.
func (c *compactor) prepare(ctx context.Context, tbl *table.Table, moved map[string]*movedEntry) (_ *compaction, err error) {
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return nil, nil
	}
	tf, err := newTableFiles(ctx, tbl)
	if err != nil {
		return nil, err
	}
	data, deletes, err := snapshotFiles(tbl, tf.fs)
	if err != nil {
		return nil, err
	}
	spec := tbl.Spec()
	live := make(map[string]bool, len(data))
	for _, df := range data {
		live[df.FilePath()] = true
	}
	// How many rows of each data file are deleted, and which data files
	// each delete file deletes rows of.
	deleted := map[string]int64{}
	refsOf := make([]map[string]int64, len(deletes))
	baseDeletes := make(map[string]bool, len(deletes))
	for i, d := range deletes {
		if d.ContentType() == icebergo.EntryContentEqDeletes {
			return nil, fmt.Errorf("the table has equality-delete files (%s), which compaction does not apply: compact it with an engine's rewrite_data_files", d.FilePath())
		}
		baseDeletes[deleteKey(d)] = true
		if refsOf[i], err = c.deleteRefs(ctx, tf.fs, d); err != nil {
			return nil, err
		}
		for p, n := range refsOf[i] {
			deleted[p] += n
		}
	}
	groups := c.choose(data, deleted, spec.ID())
	if len(groups) == 0 {
		return nil, nil
	}
	p := &compaction{fs: tf.fs, baseSeq: snap.SequenceNumber, baseDeletes: baseDeletes, specID: spec.ID(),
		isChosen: map[string]bool{}, rows: map[string]*movedEntry{}, partOf: map[string]map[int]any{}}
	p.chosen = slices.Concat(groups...)
	for _, df := range p.chosen {
		p.isChosen[df.FilePath()] = true
	}
	defer func() {
		if err != nil {
			p.remove()
		}
	}()
	// The deleted rows of the chosen files.
	dels := map[string][]int64{}
	for i, d := range deletes {
		names := false
		for r := range refsOf[i] {
			names = names || p.isChosen[r]
		}
		if !names {
			continue
		}
		if table.IsDeletionVector(d) {
			bm, err := dv.ReadDV(tf.fs, d)
			if err != nil {
				return nil, fmt.Errorf("reading the deletion vector of %s: %w", d.FilePath(), err)
			}
			ref := *d.ReferencedDataFile()
			for pos := range bm.Positions() {
				dels[ref] = append(dels[ref], int64(pos))
			}
			continue
		}
		rows, err := readPositionDeletes(ctx, tf.fs, d.FilePath())
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if p.isChosen[r.path] {
				dels[r.path] = append(dels[r.path], r.pos)
			}
		}
	}
	// Where the rows of earlier compactions are, by compacted file.
	byTo := map[string][]*movedEntry{}
	for _, e := range moved {
		if p.isChosen[e.To] {
			byTo[e.To] = append(byTo[e.To], e)
			p.superseded = append(p.superseded, e.From)
		}
	}
	for _, es := range byTo {
		slices.SortFunc(es, func(a, b *movedEntry) int { return int(a.Offset - b.Offset) })
	}
	// One new file per partition.
	for _, group := range groups {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var w *dataFileWriter
		if c.rt != nil {
			w, err = tf.newDataFileWriterAt(c.rt, tf.newFilePath(compactPrefix))
		} else {
			w, err = tf.newBatchFileWriterAt(tf.newFilePath(compactPrefix))
		}
		if err != nil {
			return nil, err
		}
		entries, direct, err := c.rewrite(ctx, tf, w, group, dels, byTo)
		if err == nil && w.Rows() > 0 {
			var js []byte
			if js, err = json.Marshal(entries); err == nil {
				err = w.SetKeyValue(movedRowsKey, string(js))
			}
		}
		var m fileMeta
		if err == nil {
			m, err = w.Close()
		}
		if err != nil {
			_ = w.Abort()
			return nil, err
		}
		if m.Path == "" {
			continue
		}
		p.outs = append(p.outs, compactOutput{path: m.Path, rows: m.RecordCount, entries: entries})
		for _, e := range entries {
			e.To = m.Path
			e.index()
		}
		for _, e := range direct {
			e.To = m.Path
			e.index()
			p.rows[e.From] = e
		}
		df, err := m.dataFileIn(spec, tbl.Schema(), group[0].Partition())
		if err != nil {
			return nil, err
		}
		p.added = append(p.added, df)
		p.partOf[m.Path] = group[0].Partition()
	}
	// A chosen file without live rows has an entry locating none.
	for _, df := range p.chosen {
		if p.rows[df.FilePath()] == nil {
			e := &movedEntry{From: df.FilePath()}
			e.index()
			p.rows[df.FilePath()] = e
		}
	}
	return p, nil
}

// choose returns the data files to compact, by partition, oldest first in
// each, or none. Candidates are the data files eddy wrote, for the spec
// specID: those smaller than the minimum file size, and those whose
// deleted rows (deleted, by path) reach the delete ratio. A partition is
// compacted when it has at least the minimum number of small files, or a
// file with too many deleted rows. Files that compaction wrote join only
// while they are no larger than the files chosen before them, smallest
// first, so that a row is rewritten a few times rather than at every
// compaction; at most the maximum rewrite bytes are chosen in all (but
// always the files of one partition that is due).
func (c *compactor) choose(data []icebergo.DataFile, deleted map[string]int64, specID int) [][]icebergo.DataFile {
	type group struct{ fresh, compacted, heavy []icebergo.DataFile }
	groups := map[string]*group{}
	var order []string
	for _, df := range data {
		p := df.FilePath()
		if int(df.SpecID()) != specID || df.FileFormat() != icebergo.ParquetFile || !strings.HasPrefix(path.Base(p), filePrefix+"-") {
			continue
		}
		heavy := df.Count() > 0 && c.cfg.deleteRatio > 0 && float64(deleted[p]) >= c.cfg.deleteRatio*float64(df.Count())
		small := df.FileSizeBytes() < c.cfg.minFileSize
		if !heavy && !small {
			continue
		}
		k := fmt.Sprint(df.Partition())
		g := groups[k]
		if g == nil {
			g = &group{}
			groups[k] = g
			order = append(order, k)
		}
		switch {
		case heavy:
			g.heavy = append(g.heavy, df)
		case isCompacted(p):
			g.compacted = append(g.compacted, df)
		default:
			g.fresh = append(g.fresh, df)
		}
	}
	var out [][]icebergo.DataFile
	var total int64
	for _, k := range order {
		g := groups[k]
		var chosen []icebergo.DataFile
		var size int64
		for _, df := range g.fresh {
			if size >= c.cfg.maxRewriteBytes && len(chosen) > 0 {
				break
			}
			chosen = append(chosen, df)
			size += df.FileSizeBytes()
		}
		slices.SortFunc(g.compacted, func(a, b icebergo.DataFile) int { return int(a.FileSizeBytes() - b.FileSizeBytes()) })
		for _, df := range g.compacted {
			if (df.FileSizeBytes() > size && len(chosen) > 0) || size+df.FileSizeBytes() > c.cfg.maxRewriteBytes {
				break
			}
			chosen = append(chosen, df)
			size += df.FileSizeBytes()
		}
		if len(chosen) < c.cfg.minInputFiles {
			chosen, size = nil, 0
		}
		for _, df := range g.heavy {
			if size+df.FileSizeBytes() > c.cfg.maxRewriteBytes && len(chosen) > 0 {
				break
			}
			chosen = append(chosen, df)
			size += df.FileSizeBytes()
		}
		if len(chosen) == 0 {
			continue
		}
		if len(out) > 0 && total+size > c.cfg.maxRewriteBytes {
			break
		}
		out = append(out, chosen)
		total += size
	}
	return out
}

// rewrite appends the live rows of the files chosen to w, in order, and
// returns where they came from: an entry per data file the writers wrote
// that has live rows in w, for the files compaction wrote composed from
// their entries (byTo); and an entry per chosen file (direct), locating
// its live rows in w.
func (c *compactor) rewrite(ctx context.Context, tf *tableFiles, w *dataFileWriter, chosen []icebergo.DataFile, dels map[string][]int64, byTo map[string][]*movedEntry) (entries, direct []*movedEntry, err error) {
	var rr *rowReader
	if c.rt != nil {
		if rr, err = newRowReader(c.rt, types.NewScratchArena(), c.where); err != nil {
			return nil, nil, err
		}
	}
	for _, df := range chosen {
		p := df.FilePath()
		dead := deletedPositions(dels, p)
		start := w.Rows()
		if err := copyLiveRows(ctx, tf, w, p, dead, rr); err != nil {
			return nil, nil, err
		}
		// liveBefore returns the number of live rows of p before pos.
		liveBefore := func(pos int64) int64 {
			i, _ := slices.BinarySearch(dead, pos)
			return pos - int64(i)
		}
		isDead := func(pos int64) bool { _, ok := slices.BinarySearch(dead, pos); return ok }
		de := &movedEntry{From: p, Offset: start}
		for pos := int64(0); pos < df.Count(); pos++ {
			if !isDead(pos) {
				de.add(pos)
			}
		}
		direct = append(direct, de)
		if prior := byTo[p]; len(prior) > 0 || isCompacted(p) {
			for _, e := range prior {
				ne := &movedEntry{From: e.From, Offset: -1}
				k := e.Offset
				for _, r := range e.Runs {
					for s := r[0]; s < r[1]; s++ {
						if !isDead(k) {
							if ne.Offset < 0 {
								ne.Offset = start + liveBefore(k)
							}
							ne.add(s)
						}
						k++
					}
				}
				if ne.Offset >= 0 {
					entries = append(entries, ne)
				}
			}
			continue
		}
		if len(de.Runs) > 0 {
			entries = append(entries, &movedEntry{From: p, Offset: start, Runs: de.Runs})
		}
	}
	return entries, direct, nil
}

// copyArrow says whether copyLiveRows copies Arrow arrays when it can;
// tests turn it off to test the row-by-row copy.
var copyArrow = true

// copyLiveRows appends the rows of the data file p but those at the
// positions dead (sorted) to w: as Arrow arrays when the file's columns
// are those of the table's Arrow schema, else row by row through rr.
func copyLiveRows(ctx context.Context, tf *tableFiles, w *dataFileWriter, p string, dead []int64, rr *rowReader) error {
	fh, err := tf.fs.Open(p)
	if err != nil {
		return fmt.Errorf("opening the data file %s: %w", p, err)
	}
	defer fh.Close()
	rdr, err := file.NewParquetReader(fh)
	if err != nil {
		return fmt.Errorf("reading the data file %s: %w", p, err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: batchRows}, arrowAllocator)
	if err != nil {
		return fmt.Errorf("reading the data file %s: %w", p, err)
	}
	rec, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return fmt.Errorf("reading the data file %s: %w", p, err)
	}
	defer rec.Release()
	as := tf.arrowSchema
	same := func(b arrow.RecordBatch) bool {
		if !copyArrow || int(b.NumCols()) != as.NumFields() {
			return false
		}
		for i, f := range as.Fields() {
			if b.ColumnName(i) != f.Name || !arrow.TypeEqual(b.Column(i).DataType(), f.Type) {
				return false
			}
		}
		return true
	}
	var pos int64
	for rec.Next() {
		b := rec.RecordBatch()
		n := b.NumRows()
		if copyArrow && !same(b) {
			// A file of an older schema: its columns by field id.
			pb, ok, err := projectBatch(b, as)
			if err != nil {
				return fmt.Errorf("data file %s: %w", p, err)
			}
			if ok {
				err := appendLive(w, as, pb, dead, pos)
				pb.Release()
				if err != nil {
					return fmt.Errorf("copying the rows of the data file %s: %w", p, err)
				}
				pos += n
				continue
			}
		}
		if !same(b) {
			if rr == nil {
				return fmt.Errorf("data file %s: its columns carry no field ids, so they cannot be matched to the table's", p)
			}
			if err := rr.bind(b); err != nil {
				return err
			}
			for i := int64(0); i < n; i++ {
				if _, ok := slices.BinarySearch(dead, pos+i); ok {
					continue
				}
				row, err := rr.row(int(i))
				if err != nil {
					return fmt.Errorf("data file %s, row %d: %w", p, pos+i, err)
				}
				if _, err := w.Append(row); err != nil {
					return err
				}
			}
			pos += n
			continue
		}
		err := appendLive(w, as, b, dead, pos)
		pos += n
		if err != nil {
			return fmt.Errorf("copying the rows of the data file %s: %w", p, err)
		}
	}
	if err := rec.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("reading the data file %s: %w", p, err)
	}
	return nil
}
