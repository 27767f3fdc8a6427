package pebble

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/eddystream/eddy/internal/checkpoint"
	"github.com/eddystream/eddy/internal/state"
)

// SnapshotKind is the kind of the checkpoint.BackendState of Pebble
// snapshots, with the version of the backend's layout.
var SnapshotKind = "pebble/" + strconv.Itoa(FormatVersion)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// incremental is what a backend remembers between incremental snapshots:
// the shared files of the last completed checkpoint, which the next one
// reuses instead of uploading them again.
type incremental struct {
	mu sync.Mutex
	// confirmed maps a local file name to the stored file of the newest
	// completed checkpoint (or of the checkpoint restored from).
	confirmed map[string]checkpoint.BackendFile
	// pending holds the shared files of snapshots not yet known complete.
	pending map[int64]map[string]checkpoint.BackendFile
}

// Snapshot takes snapshot id of the backend for checkpoint storage, on the
// subtask's goroutine at the barrier: it flushes the table caches and the
// memtables and hard-links the SSTs into a checkpoint directory next to the
// DB (Checkpoint). The returned function, which may run on another
// goroutine while the subtask goes on, uploads the SSTs that no completed
// checkpoint of this backend instance holds to shared under
// keyPrefix/<InstanceID>-<name>, reads the small mutable files into the
// state, and removes the checkpoint directory. It must be called exactly
// once. Call CheckpointComplete when a checkpoint completes, so that the
// next snapshot reuses its files.
func (b *Backend) Snapshot(id int64, shared checkpoint.SharedStorage, keyPrefix string) (func() (*checkpoint.BackendState, error), error) {
	dir := b.dir + ".chk-" + strconv.FormatInt(id, 10)
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("pebble: snapshot: %w", err)
	}
	files, err := b.Checkpoint(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	b.inc.mu.Lock()
	base := b.inc.confirmed
	b.inc.mu.Unlock()
	kgs := b.kgs
	instance := b.id
	return func() (*checkpoint.BackendState, error) {
		defer os.RemoveAll(dir)
		st := &checkpoint.BackendState{Kind: SnapshotKind, KeyGroupStart: kgs.Start, KeyGroupEnd: kgs.End}
		sharedFiles := map[string]checkpoint.BackendFile{}
		uploaded := make(map[string]string, len(base))
		for name, f := range base {
			uploaded[name] = f.Shared
		}
		plan := PlanUpload(files, uploaded)
		for name := range plan.Reuse {
			f := base[name]
			if info, err := os.Stat(filepath.Join(dir, name)); err != nil || info.Size() != f.Size {
				return nil, fmt.Errorf("pebble: snapshot %d: %s differs from the file of that name in the previous checkpoint (%d bytes stored): %v", id, name, f.Size, err)
			}
			f.Uploaded = false
			st.Files = append(st.Files, f)
			sharedFiles[name] = f
		}
		for _, name := range plan.Upload {
			path := filepath.Join(dir, name)
			if !IsShared(name) {
				data, err := os.ReadFile(path)
				if err != nil {
					return nil, fmt.Errorf("pebble: snapshot %d: %w", id, err)
				}
				st.Files = append(st.Files, checkpoint.BackendFile{Name: name, Size: int64(len(data)), CRC32C: crc32.Checksum(data, castagnoli), Data: data})
				continue
			}
			key := keyPrefix + "/" + instance + "-" + name
			size, crc, err := shared.Upload(key, path)
			if err != nil {
				return nil, fmt.Errorf("pebble: snapshot %d: %w", id, err)
			}
			f := checkpoint.BackendFile{Name: name, Size: size, CRC32C: crc, Shared: key, Uploaded: true}
			st.Files = append(st.Files, f)
			sharedFiles[name] = f
		}
		slices.SortFunc(st.Files, func(a, b checkpoint.BackendFile) int { return strings.Compare(a.Name, b.Name) })
		b.inc.mu.Lock()
		if b.inc.pending == nil {
			b.inc.pending = map[int64]map[string]checkpoint.BackendFile{}
		}
		b.inc.pending[id] = sharedFiles
		b.inc.mu.Unlock()
		return st, nil
	}, nil
}

// CheckpointComplete records that checkpoint id completed: the next
// snapshot reuses its shared files. Snapshots older than id are forgotten.
func (b *Backend) CheckpointComplete(id int64) {
	b.inc.mu.Lock()
	defer b.inc.mu.Unlock()
	if files, ok := b.inc.pending[id]; ok {
		b.inc.confirmed = files
	}
	for p := range b.inc.pending {
		if p <= id {
			delete(b.inc.pending, p)
		}
	}
}

// RestoreSnapshots builds in dir, which must not exist or be empty, the
// backend of the key groups kgs from the snapshots of the old subtasks whose
// key groups overlap kgs (as checkpoint.Loaded.Redistribute hands them out).
// Each snapshot's files are fetched into a directory of its own: shared
// files are hard-linked from checkpoint storage when it is on the same file
// system and copied otherwise (the copy is checked against the recorded
// CRC-32C), small files are written from the state. One snapshot covering
// kgs is restored in place (Restore); several are combined with Rescale.
//
// If shared is the storage the snapshots came from, the shared files of the
// snapshot the backend continues are recorded as already stored, so that
// its first checkpoint uploads only new files.
func RestoreSnapshots(dir string, snaps []*checkpoint.BackendState, kgs state.KeyGroupRange, maxParallelism int, opts Options, shared checkpoint.SharedStorage) (*Backend, error) {
	if len(snaps) == 0 {
		return nil, fmt.Errorf("pebble: restore into %s: no snapshot to restore", dir)
	}
	for _, s := range snaps {
		if s.Kind != SnapshotKind {
			return nil, fmt.Errorf("pebble: the checkpoint holds state of kind %q, and this build restores %q: restore it with the eddy release that wrote it and take a savepoint there (savepoints are portable)", s.Kind, SnapshotKind)
		}
	}
	var b *Backend
	var base *checkpoint.BackendState
	if len(snaps) == 1 && snaps[0].KeyGroupStart <= kgs.Start && kgs.End <= snaps[0].KeyGroupEnd {
		if err := fetch(dir, snaps[0]); err != nil {
			return nil, err
		}
		var err error
		if b, err = Restore(dir, kgs, maxParallelism, opts); err != nil {
			return nil, err
		}
		base = snaps[0]
	} else {
		srcs := make([]string, len(snaps))
		for i, s := range snaps {
			srcs[i] = fmt.Sprintf("%s.src-%d", dir, i)
			defer os.RemoveAll(srcs[i])
			if err := fetch(srcs[i], s); err != nil {
				return nil, err
			}
		}
		var err error
		if b, err = Rescale(dir, srcs, kgs, maxParallelism, opts); err != nil {
			return nil, err
		}
		for i, src := range srcs {
			if src == b.RestoredFrom() {
				base = snaps[i]
			}
		}
	}
	if shared != nil && base != nil {
		confirmed := map[string]checkpoint.BackendFile{}
		for _, f := range base.Files {
			if f.Shared != "" && f.Path == shared.SharedPath(f.Shared) {
				f.Path = ""
				confirmed[f.Name] = f
			}
		}
		b.inc.confirmed = confirmed
	}
	return b, nil
}

// fetch puts the files of snapshot s into dir.
func fetch(dir string, s *checkpoint.BackendState) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("pebble: restore: %w", err)
	}
	for _, f := range s.Files {
		if f.Name == "" || f.Name != filepath.Base(f.Name) || f.Name == "." || f.Name == ".." {
			return fmt.Errorf("pebble: restore: the checkpoint names a file %q, which is not a plain file name: the checkpoint is corrupt; restore from an earlier one", f.Name)
		}
		dst := filepath.Join(dir, f.Name)
		if f.Shared == "" {
			if got := crc32.Checksum(f.Data, castagnoli); got != f.CRC32C || int64(len(f.Data)) != f.Size {
				return fmt.Errorf("pebble: restore: file %s of the checkpoint has checksum %08x and %d bytes, the checkpoint recorded %08x and %d: the checkpoint is corrupt; restore from an earlier one", f.Name, got, len(f.Data), f.CRC32C, f.Size)
			}
			if err := os.WriteFile(dst, f.Data, 0o644); err != nil {
				return fmt.Errorf("pebble: restore: %w", err)
			}
			continue
		}
		if err := os.Link(f.Path, dst); err == nil {
			continue
		} else if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("pebble: restore: the shared file %s that the checkpoint references is missing: restore from an earlier checkpoint or a savepoint", f.Path)
		}
		if err := copyChecked(dst, f); err != nil {
			return err
		}
	}
	return nil
}

// copyChecked copies the shared file f to dst and checks its size and
// CRC-32C.
func copyChecked(dst string, f checkpoint.BackendFile) error {
	in, err := os.Open(f.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("pebble: restore: the shared file %s that the checkpoint references is missing: restore from an earlier checkpoint or a savepoint", f.Path)
		}
		return fmt.Errorf("pebble: restore: %w", err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("pebble: restore: %w", err)
	}
	h := crc32.New(castagnoli)
	n, err := io.Copy(io.MultiWriter(out, h), in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pebble: restore: copying %s: %w", f.Path, err)
	}
	if n != f.Size || h.Sum32() != f.CRC32C {
		return fmt.Errorf("pebble: restore: the shared file %s has %d bytes and checksum %08x, the checkpoint recorded %d and %08x: it is corrupt; restore from an earlier checkpoint or a savepoint", f.Path, n, h.Sum32(), f.Size, f.CRC32C)
	}
	return nil
}
