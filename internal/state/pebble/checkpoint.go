package pebble

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/hashlog"
)

// FileList is the file Checkpoint adds to a checkpoint directory: the name
// and size of every other file of the checkpoint, so that Restore can name a
// file that is missing or truncated.
const FileList = "EDDY-CHECKPOINT"

const fileListHeader = "eddy-pebble-checkpoint 1"

// Checkpoint writes a checkpoint of the backend to dir, which must not exist,
// and returns the names of its files, sorted. It flushes the table caches
// and the memtables, then hard-links the SSTs (no copy) and writes a
// MANIFEST that names only them, the OPTIONS file, Pebble's marker files,
// and FileList; it seals the value log's active segment and hard-links its
// segments. There is no WAL.
//
// Call it on the subtask's goroutine at the barrier, when no write is in
// flight. The files do not change afterwards (later compactions unlink the
// DB's names, not the checkpoint's), so they may be uploaded by another
// goroutine; remove dir when done. SSTs and blob files are immutable and
// keep their names across checkpoints of one backend instance: see
// PlanUpload. The SSTs are not synced to the device (see Durability in the
// package comment): storage that keeps a checkpoint copies its files and
// syncs the copies, as Snapshot does.
func (b *Backend) Checkpoint(dir string) ([]string, error) {
	b.FlushCaches()
	if err := b.db.Flush(); err != nil {
		return nil, fmt.Errorf("pebble: checkpoint %s: flush: %w", b.dir, err)
	}
	if err := b.db.Checkpoint(dir); err != nil {
		return nil, fmt.Errorf("pebble: checkpoint %s to %s: %w", b.dir, dir, err)
	}
	// Pebble keeps a WAL file even with the WAL disabled, and copies it; the
	// memtables were just flushed, so it holds nothing the checkpoint needs.
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, l := range logs {
		if err := os.Remove(l); err != nil {
			return nil, fmt.Errorf("pebble: checkpoint %s: %w", dir, err)
		}
	}
	if _, err := b.vlog.Checkpoint(dir); err != nil {
		return nil, fmt.Errorf("pebble: checkpoint %s to %s: %w", b.dir, dir, err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("pebble: checkpoint %s: %w", dir, err)
	}
	var list bytes.Buffer
	list.WriteString(fileListHeader + "\n")
	fmt.Fprintf(&list, "keygroups %d %d %d\n", b.kgs.Start, b.kgs.End, b.maxP)
	names := make([]string, 0, len(ents)+1)
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			return nil, fmt.Errorf("pebble: checkpoint %s: %w", dir, err)
		}
		if !info.Mode().IsRegular() {
			continue
		}
		names = append(names, e.Name())
		fmt.Fprintf(&list, "%s %d\n", e.Name(), info.Size())
	}
	if err := writeFileSync(filepath.Join(dir, FileList), list.Bytes()); err != nil {
		return nil, fmt.Errorf("pebble: checkpoint %s: %w", dir, err)
	}
	names = append(names, FileList)
	slices.Sort(names)
	return names, nil
}

func writeFileSync(path string, data []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// CheckpointInfo describes a checkpoint directory, as its FileList records it.
type CheckpointInfo struct {
	// KeyGroups are the key groups the checkpoint holds.
	KeyGroups state.KeyGroupRange
	// MaxParallelism is the max parallelism of its operator.
	MaxParallelism int
	// Files maps each file of the checkpoint but FileList to its size.
	Files map[string]int64
}

// ReadCheckpointInfo reads the FileList of the checkpoint in dir. It does
// not check the files.
func ReadCheckpointInfo(dir string) (CheckpointInfo, error) {
	ci := CheckpointInfo{Files: map[string]int64{}}
	data, err := os.ReadFile(filepath.Join(dir, FileList))
	if err != nil {
		if os.IsNotExist(err) {
			return ci, fmt.Errorf("pebble: checkpoint directory %s has no %s: it is not a checkpoint written by (*Backend).Checkpoint, or its download is incomplete; download every file of the checkpoint into it, or restore from another checkpoint", dir, FileList)
		}
		return ci, fmt.Errorf("pebble: checkpoint directory %s: %w", dir, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	if !sc.Scan() || sc.Text() != fileListHeader {
		return ci, fmt.Errorf("pebble: checkpoint directory %s: %s does not start with %q: it was written by another version of eddy; restore it with that version and take a savepoint", dir, FileList, fileListHeader)
	}
	if !sc.Scan() {
		return ci, fmt.Errorf("pebble: checkpoint directory %s: %s is truncated; download it again", dir, FileList)
	}
	if _, err := fmt.Sscanf(sc.Text(), "keygroups %d %d %d", &ci.KeyGroups.Start, &ci.KeyGroups.End, &ci.MaxParallelism); err != nil {
		return ci, fmt.Errorf("pebble: checkpoint directory %s: bad line %q in %s", dir, sc.Text(), FileList)
	}
	for sc.Scan() {
		name, sizeText, ok := strings.Cut(sc.Text(), " ")
		size, err := strconv.ParseInt(sizeText, 10, 64)
		if !ok || err != nil || name == "" || strings.ContainsAny(name, `/\`) {
			return ci, fmt.Errorf("pebble: checkpoint directory %s: bad line %q in %s", dir, sc.Text(), FileList)
		}
		ci.Files[name] = size
	}
	return ci, nil
}

// verifyFiles reads the FileList of dir and checks that dir holds every file
// it names, at its size.
func verifyFiles(dir string) (CheckpointInfo, error) {
	ci, err := ReadCheckpointInfo(dir)
	if err != nil {
		return ci, err
	}
	names := make([]string, 0, len(ci.Files))
	for n := range ci.Files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		size := ci.Files[name]
		info, err := os.Stat(filepath.Join(dir, name))
		if os.IsNotExist(err) {
			return ci, fmt.Errorf("pebble: checkpoint directory %s is missing %s, which the checkpoint references: download every file listed in %s from checkpoint storage into the directory, or restore from an earlier checkpoint", dir, name, FileList)
		} else if err != nil {
			return ci, fmt.Errorf("pebble: checkpoint directory %s: %w", dir, err)
		}
		if info.Size() != size {
			return ci, fmt.Errorf("pebble: checkpoint directory %s: %s has %d bytes, the checkpoint recorded %d: download it again from checkpoint storage, or restore from an earlier checkpoint", dir, name, info.Size(), size)
		}
	}
	return ci, nil
}

// Restore opens the checkpoint in dir (the files Checkpoint wrote, e.g. as
// downloaded from checkpoint storage) as the backend of the key groups kgs,
// in place: dir becomes the DB's working directory and stops being a
// checkpoint (Restore removes its FileList). kgs must lie within the
// key groups of the checkpoint; key groups of the checkpoint outside kgs
// are dropped without rewriting files (see Rescale). Restore fails with an
// error naming the directory and the way out if a file is missing or
// truncated, if the format version is not FormatVersion, or if the max
// parallelism differs.
func Restore(dir string, kgs state.KeyGroupRange, maxParallelism int, opts Options) (*Backend, error) {
	if err := checkRange(kgs, maxParallelism); err != nil {
		return nil, err
	}
	ci, err := verifyFiles(dir)
	if err != nil {
		return nil, err
	}
	if kgs.Len() > 0 && (kgs.Start < ci.KeyGroups.Start || kgs.End > ci.KeyGroups.End) {
		return nil, fmt.Errorf("pebble: checkpoint directory %s holds key groups %v, which do not cover %v: use Rescale with the checkpoints of every old subtask whose key groups overlap %v", dir, ci.KeyGroups, kgs, kgs)
	}
	if err := unlistedSegments(dir, ci); err != nil {
		return nil, err
	}
	// The value log is read (and checked) before Pebble opens the DB
	// writable, which changes files: a checkpoint that fails stays as it
	// was.
	l, err := hashlog.Load(dir, kgs.Start, kgs.End, hashlog.Options{}, false)
	if err != nil {
		return nil, fmt.Errorf("pebble: checkpoint directory %s: %w: download the checkpoint again, or restore from an earlier one", dir, err)
	}
	b, h, err := openCheckpoint(dir, maxParallelism, opts, false)
	if err != nil {
		l.Close()
		return nil, err
	}
	if h.kgs != ci.KeyGroups {
		l.Close()
		b.Close()
		return nil, fmt.Errorf("pebble: checkpoint directory %s: %s says key groups %v, the DB %v: download the checkpoint again", dir, FileList, ci.KeyGroups, h.kgs)
	}
	if err := b.finishRestore(kgs, h, l); err != nil {
		b.Close()
		return nil, err
	}
	b.from = dir
	// dir is the DB's working directory now, no longer a checkpoint.
	if err := os.Remove(filepath.Join(dir, FileList)); err != nil {
		b.Close()
		return nil, fmt.Errorf("pebble: restore %s: %w", dir, err)
	}
	return b, nil
}

// unlistedSegments returns an error naming the value log segments in dir
// that the checkpoint's FileList does not list: the log replays every
// segment of its directory, so a segment left there by another checkpoint
// would change the state.
func unlistedSegments(dir string, ci CheckpointInfo) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("pebble: checkpoint directory %s: %w", dir, err)
	}
	var extra []string
	for _, e := range ents {
		if _, listed := ci.Files[e.Name()]; hashlog.IsLogFile(e.Name()) && !listed {
			extra = append(extra, e.Name())
		}
	}
	if len(extra) > 0 {
		return fmt.Errorf("pebble: checkpoint directory %s holds value log segments that its %s does not list (%s): they belong to another checkpoint; download the checkpoint into an empty directory", dir, FileList, strings.Join(extra, ", "))
	}
	return nil
}

// openCheckpoint opens the DB in dir and reads and checks its metadata. A
// writable open is preceded by a read-only one that checks the metadata, so
// that a checkpoint that fails the checks is left untouched (opening
// writable rewrites Pebble's MANIFEST and OPTIONS files).
func openCheckpoint(dir string, maxP int, opts Options, readOnly bool) (*Backend, header, error) {
	b, h, err := openChecked(dir, maxP, opts, true)
	if err != nil || readOnly {
		return b, h, err
	}
	b.Close()
	b, h, err = openChecked(dir, maxP, opts, false)
	return b, h, err
}

func openChecked(dir string, maxP int, opts Options, readOnly bool) (*Backend, header, error) {
	b, err := openDB(dir, opts, true, readOnly)
	if err != nil {
		// Pebble checks at open that every file the MANIFEST references
		// exists, and names the first missing one.
		return nil, header{}, fmt.Errorf("%w: if files of the checkpoint are missing, download every file of the checkpoint into %s from checkpoint storage, or restore from an earlier checkpoint", err, dir)
	}
	h, err := readHeader(b.db, dir)
	if err == nil && h.maxP != maxP {
		err = fmt.Errorf("pebble: checkpoint directory %s holds state of max parallelism %d, not %d: the max parallelism of an operator cannot change; run it with max parallelism %d", dir, h.maxP, maxP, h.maxP)
	}
	if err != nil {
		b.Close()
		return nil, header{}, err
	}
	b.tables, b.nextID, b.maxP, b.kgs = h.tables, h.nextID, h.maxP, h.kgs
	for _, t := range h.tables {
		b.markTable(t.id, t.kind)
	}
	return b, h, nil
}

// finishRestore drops the key groups outside kgs, records kgs and takes l,
// the value log of the checkpoint files in b's directory for kgs, or loads
// it if l is nil. It closes l if it fails.
func (b *Backend) finishRestore(kgs state.KeyGroupRange, h header, l *hashlog.Log) error {
	if l == nil {
		var err error
		if l, err = b.loadLog(b.dir, kgs.Start, kgs.End, false); err != nil {
			return err
		}
	}
	b.vlog = l
	l.SetOptions(b.logOptions())
	if kgs != h.kgs {
		if err := b.excise(kgs); err != nil {
			return err
		}
	}
	b.kgs = kgs
	return b.writeHeader()
}

// IsShared reports whether a checkpoint file is immutable once written, so
// that checkpoints of one backend instance that contain a file of this name
// contain the same bytes: SSTs, blob files and the value log's segments.
// The other files (MANIFEST, OPTIONS, markers, FileList) change with every
// checkpoint.
func IsShared(name string) bool {
	return strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".blob") || hashlog.IsLogFile(name)
}

// UploadPlan says which files of a new checkpoint must be uploaded.
type UploadPlan struct {
	// Upload lists the files to upload: shared files not in storage yet and
	// every file that is not shared.
	Upload []string
	// Reuse maps each shared file that is already in storage to the
	// storage key that holds it.
	Reuse map[string]string
}

// PlanUpload decides which of the files of a checkpoint (as Checkpoint
// returns them) must be uploaded, given uploaded: the shared files (see
// IsShared) already in checkpoint storage, as local name → storage key.
//
// uploaded must describe only the backend instance that wrote the
// checkpoint: the files of the checkpoint it was restored from (after
// Rescale: of its base, the source with the largest overlap) plus the files
// it uploaded since, restricted to retained checkpoints. Pebble numbers files
// per DB, so a name alone does not identify content across instances: two
// backends restored from one checkpoint, or a backend restored from an older
// checkpoint, reuse the same numbers for different files. Storage keys of
// files uploaded by an instance must therefore be unique to it, e.g.
// "<operator>/shared/<InstanceID>-<name>".
func PlanUpload(files []string, uploaded map[string]string) UploadPlan {
	p := UploadPlan{Reuse: map[string]string{}}
	for _, f := range files {
		if key, ok := uploaded[f]; ok && IsShared(f) {
			p.Reuse[f] = key
			continue
		}
		p.Upload = append(p.Upload, f)
	}
	return p
}
