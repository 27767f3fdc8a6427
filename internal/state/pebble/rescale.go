package pebble

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	lsm "github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/eddystream/eddy/internal/state"
)

// ingestFileSize is the size at which Rescale starts a new SST.
const ingestFileSize = 64 << 20

// Rescale builds in dir, which must not exist or be empty, the backend of
// the key groups kgs from checkpoints of the operator's old subtasks:
// sources are their checkpoint directories (as Checkpoint wrote them), and
// must together hold every key group of kgs. Sources whose key groups do not
// overlap kgs are ignored. The sources are not modified, so several new
// subtasks may rescale from the same downloaded directories, concurrently.
//
// How: the source with the largest overlap is the base. Its files are
// hard-linked into dir (SSTs and blob files; the small mutable files are
// copied), the DB is opened there, and the key groups outside kgs are
// excised: SSTs that straddle the new boundaries become virtual SSTs over
// their remaining part, so the base is neither rewritten nor left with range
// tombstones. For each other source, the key groups it holds in kgs are read
// from its DB (opened read-only on hard links) and written, in key order,
// into new SSTs, which are then ingested into the base: each lands in the
// bottom level, with no memtable, WAL or compaction. That is a rewrite of the
// foreign key-group ranges, and only of them. Pebble cannot ingest the
// foreign SSTs themselves: ingested SSTs must have sequence number zero and
// no keys outside the target range, whereas a DB's SSTs carry sequence
// numbers (several versions of a key, tombstones) and straddle the old
// subtasks' boundaries; sharing them as external or shared files would need
// a remote.Storage and holds only for files in the bottom levels.
//
// The value log (valuelog.go) follows the same plan: the base's segments
// are hard-linked and replayed for kgs, and the entries of the other
// sources' key groups are copied into it.
//
// Table ids are the base's; a table another source numbered differently is
// renumbered while its keys are copied, and a table only another source has
// gets a new id. A table declared with different kinds in two sources is an
// error wrapping state.ErrIncompatibleTable.
//
// For incremental checkpoints, the base's shared files keep their names and
// content in dir: the files already in storage for the base's checkpoint
// (RestoredFrom names it) may seed PlanUpload's uploaded set.
func Rescale(dir string, sources []string, kgs state.KeyGroupRange, maxParallelism int, opts Options) (*Backend, error) {
	if err := checkRange(kgs, maxParallelism); err != nil {
		return nil, err
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("pebble: rescale into %s: the directory is not empty", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("pebble: rescale: %w", err)
	}
	type source struct {
		dir     string
		overlap state.KeyGroupRange
	}
	var srcs []source
	for _, d := range sources {
		ci, err := verifyFiles(d)
		if err != nil {
			return nil, err
		}
		if ci.MaxParallelism != maxParallelism {
			return nil, fmt.Errorf("pebble: checkpoint directory %s holds state of max parallelism %d, not %d: the max parallelism of an operator cannot change; run it with max parallelism %d", d, ci.MaxParallelism, maxParallelism, ci.MaxParallelism)
		}
		ov := state.KeyGroupRange{Start: max(ci.KeyGroups.Start, kgs.Start), End: min(ci.KeyGroups.End, kgs.End)}
		if ov.Len() > 0 {
			srcs = append(srcs, source{d, ov})
		}
	}
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].overlap.Start < srcs[j].overlap.Start })
	next := kgs.Start
	for _, s := range srcs {
		if s.overlap.Start > next {
			return nil, fmt.Errorf("pebble: rescale to %v: key groups [%d,%d) are in none of the checkpoints %v: pass the checkpoint of every old subtask whose key groups overlap %v", kgs, next, s.overlap.Start, sources, kgs)
		}
		if s.overlap.Start < next {
			return nil, fmt.Errorf("pebble: rescale to %v: checkpoint %s overlaps another one at key group %d: pass checkpoints of one old parallelism", kgs, s.dir, s.overlap.Start)
		}
		next = s.overlap.End
	}
	if next < kgs.End {
		return nil, fmt.Errorf("pebble: rescale to %v: key groups [%d,%d) are in none of the checkpoints %v: pass the checkpoint of every old subtask whose key groups overlap %v", kgs, next, kgs.End, sources, kgs)
	}
	if len(srcs) == 0 { // kgs is empty
		return Open(dir, kgs, maxParallelism, opts)
	}
	base := 0
	for i, s := range srcs {
		if s.overlap.Len() > srcs[base].overlap.Len() {
			base = i
		}
	}

	if err := linkCheckpoint(srcs[base].dir, dir); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pebble: rescale: %w", err)
	}
	b, h, err := openCheckpoint(dir, maxParallelism, opts, false)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	fail := func(err error) (*Backend, error) {
		b.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	if err := b.finishRestore(kgs, h, nil); err != nil {
		return fail(err)
	}
	// The base's value log may hold records of key groups it gave away
	// (to the other sources) in an earlier rescale, which Pebble's excise
	// has no counterpart for: delete those key groups in the log, so that
	// neither this replay nor any later one sees their old entries. The
	// other sources' entries are copied in after.
	for kg := kgs.Start; kg < kgs.End; kg++ {
		if !h.kgs.Contains(kg) {
			if err := b.vlog.DeletePrefix(kgKey(kg)); err != nil {
				return fail(fmt.Errorf("pebble: rescale: %w", err))
			}
		}
	}
	b.from = srcs[base].dir
	work, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dir)), ".rescale-")
	if err != nil {
		return fail(fmt.Errorf("pebble: rescale: %w", err))
	}
	defer os.RemoveAll(work)
	out := &sstOut{dir: filepath.Join(work, "ingest"), wopts: b.popts.MakeWriterOptions(6, b.db.TableFormat())}
	if err := os.Mkdir(out.dir, 0o755); err != nil {
		return fail(fmt.Errorf("pebble: rescale: %w", err))
	}
	for i, s := range srcs {
		if i == base {
			continue
		}
		if err := b.copyRange(s.dir, filepath.Join(work, fmt.Sprint(i)), s.overlap, opts, out); err != nil {
			return fail(err)
		}
	}
	if err := out.finish(); err != nil {
		return fail(fmt.Errorf("pebble: rescale: write SST: %w", err))
	}
	if len(out.paths) > 0 {
		if err := b.db.Ingest(context.Background(), out.paths); err != nil {
			return fail(fmt.Errorf("pebble: rescale: ingest into %s: %w", dir, err))
		}
	}
	return b, nil
}

// copyRange writes the keys of key groups r of the checkpoint in src to out,
// renumbering tables to b's ids. work is a scratch directory.
func (b *Backend) copyRange(src, work string, r state.KeyGroupRange, opts Options, out *sstOut) error {
	if err := linkCheckpoint(src, work); err != nil {
		return fmt.Errorf("pebble: rescale: %w", err)
	}
	sb, h, err := openCheckpoint(work, b.maxP, opts, true)
	if err != nil {
		return err
	}
	defer sb.Close()
	// Renumbering, in the order of the new ids so that keys stay sorted.
	type remap struct{ from, to uint32 }
	var maps []remap
	identity := true
	for _, name := range sortedTables(h.tables) {
		t := h.tables[name]
		id, err := b.TableID(name, t.kind)
		if err != nil {
			return fmt.Errorf("pebble: rescale: checkpoints %s and %s: %w", b.dir, src, err)
		}
		maps = append(maps, remap{t.id, id})
		identity = identity && id == t.id
	}
	sort.Slice(maps, func(i, j int) bool { return maps[i].to < maps[j].to })
	it, err := sb.db.NewIter(&lsm.IterOptions{LowerBound: kgKey(r.Start), UpperBound: kgKey(r.End)})
	if err != nil {
		return fmt.Errorf("pebble: rescale: read %s: %w", src, err)
	}
	defer it.Close()
	copyKV := func(key []byte) error {
		v, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("pebble: rescale: read %s: %w", src, err)
		}
		return out.set(key, v)
	}
	if identity {
		for ok := it.First(); ok; ok = it.Next() {
			if err := copyKV(it.Key()); err != nil {
				return err
			}
		}
	} else {
		var from, to []byte
		for kg := r.Start; kg < r.End; kg++ {
			for _, m := range maps {
				from = binary.BigEndian.AppendUint32(append(from[:0], kgKey(kg)...), m.from)
				to = binary.BigEndian.AppendUint32(append(to[:0], kgKey(kg)...), m.to)
				for ok := it.SeekGE(from); ok && bytes.HasPrefix(it.Key(), from); ok = it.Next() {
					if err := copyKV(append(to[:6], it.Key()[6:]...)); err != nil {
						return err
					}
				}
			}
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("pebble: rescale: read %s: %w", src, err)
	}
	// The value log's entries of r, renumbered the same way, into b's log.
	l, err := b.loadLog(work, r.Start, r.End, true)
	if err != nil {
		return err
	}
	defer l.Close()
	ids := make(map[uint32]uint32, len(maps))
	for _, m := range maps {
		ids[m.from] = m.to
	}
	var key []byte
	var werr error
	err = l.Scan(nil, func(k, v []byte) bool {
		var to uint32
		ok := len(k) >= tablePrefixLen
		if ok {
			to, ok = ids[binary.BigEndian.Uint32(k[2:6])]
		}
		if !ok {
			werr = fmt.Errorf("pebble: rescale: checkpoint %s: the value log holds key %x of no declared table: the checkpoint is corrupt; restore from an earlier one", src, k)
			return false
		}
		key = binary.BigEndian.AppendUint32(append(key[:0], k[:2]...), to)
		key = append(key, k[tablePrefixLen:]...)
		werr = b.vlog.Set(key, v)
		return werr == nil
	})
	if err == nil {
		err = werr
	}
	if err != nil {
		return fmt.Errorf("pebble: rescale: copy the value log of %s: %w", src, err)
	}
	return nil
}

// linkCheckpoint makes dst a copy of the checkpoint in src, the files its
// FileList names: shared files (immutable) are hard-linked, or copied if
// linking fails, and the others are copied, since Pebble may rewrite them
// in place.
func linkCheckpoint(src, dst string) error {
	// The files the checkpoint lists, and the list: a file of the directory
	// that it does not list (a value log segment of another checkpoint,
	// say) is not part of the state.
	ci, err := ReadCheckpointInfo(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	names := []string{FileList}
	for name := range ci.Files {
		names = append(names, name)
	}
	for _, name := range names {
		from, to := filepath.Join(src, name), filepath.Join(dst, name)
		if IsShared(name) && os.Link(from, to) == nil {
			continue
		}
		if err := copyFile(from, to); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// sstOut writes keys, in increasing order, into SSTs of about
// ingestFileSize bytes for ingestion.
type sstOut struct {
	dir   string
	wopts sstable.WriterOptions
	w     *sstable.Writer
	paths []string
}

func (o *sstOut) set(k, v []byte) error {
	if o.w == nil {
		path := filepath.Join(o.dir, fmt.Sprintf("%06d.sst", len(o.paths)))
		f, err := vfs.Default.Create(path, vfs.WriteCategoryUnspecified)
		if err != nil {
			return err
		}
		o.w = sstable.NewWriter(objstorageprovider.NewFileWritable(f), o.wopts)
		o.paths = append(o.paths, path)
	}
	if err := o.w.Set(k, v); err != nil {
		return err
	}
	if o.w.Raw().EstimatedSize() >= ingestFileSize {
		return o.finish()
	}
	return nil
}

// finish closes the SST being written, if any.
func (o *sstOut) finish() error {
	if o.w == nil {
		return nil
	}
	err := o.w.Close()
	o.w = nil
	return err
}
