package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Storage keeps checkpoints. Implementations must make a checkpoint visible
// only once it is complete: every state file durable, then the metadata.
type Storage interface {
	// Write stores a checkpoint: the state files (name → content) and then
	// its metadata. It returns where it is.
	Write(m *Metadata, files map[string][]byte) (Ref, error)
	// List returns the completed checkpoints, newest first.
	List() ([]Ref, error)
	// Load reads and verifies a checkpoint: its metadata and every state
	// file it names.
	Load(r Ref) (*Loaded, error)
	// Delete removes a checkpoint.
	Delete(r Ref) error
}

// Ref names a stored checkpoint.
type Ref struct {
	// ID is the checkpoint id.
	ID int64
	// Path is where it is stored.
	Path string
}

// String renders the reference as its path.
func (r Ref) String() string { return r.Path }

// Loaded is a verified checkpoint in memory.
type Loaded struct {
	Ref      Ref
	Metadata *Metadata
	// Files maps each state file name to its content.
	Files map[string][]byte
	// SharedRoot is the directory that holds the shared area the
	// checkpoint's backend snapshots refer to: the parent of the
	// checkpoint's directory.
	SharedRoot string
}

// SharedPath returns the path of the shared file with the given key.
func (l *Loaded) SharedPath(key string) string {
	return filepath.Join(l.SharedRoot, filepath.FromSlash(key))
}

// Dir stores checkpoints as directories chk-<id> under a local directory.
// Savepoints are written the same way, under a directory of their own.
type Dir struct {
	path   string
	prefix string
}

// NewDir returns storage in the directory path, creating it if needed.
func NewDir(path string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("checkpoint: creating checkpoint directory: %w", err)
	}
	return &Dir{path: path, prefix: "chk-"}, nil
}

// NewSavepointDir returns storage for savepoints in the directory path:
// savepoint-<id> directories.
func NewSavepointDir(path string) (*Dir, error) {
	d, err := NewDir(path)
	if err != nil {
		return nil, err
	}
	d.prefix = "savepoint-"
	return d, nil
}

// Path returns the directory.
func (d *Dir) Path() string { return d.path }

func (d *Dir) dirOf(id int64) string {
	return filepath.Join(d.path, fmt.Sprintf("%s%06d", d.prefix, id))
}

// Write writes the state files, fsyncs them, and then writes the metadata
// under a temporary name, fsyncs it and renames it into place, so that the
// checkpoint appears complete or not at all.
func (d *Dir) Write(m *Metadata, files map[string][]byte) (Ref, error) {
	dir := d.dirOf(m.ID)
	if err := os.RemoveAll(dir); err != nil {
		return Ref{}, fmt.Errorf("checkpoint: clearing %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Ref{}, fmt.Errorf("checkpoint: %w", err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := writeFileSync(filepath.Join(dir, name), files[name]); err != nil {
			return Ref{}, err
		}
	}
	meta, err := m.encode()
	if err != nil {
		return Ref{}, err
	}
	tmp := filepath.Join(dir, MetadataFile+".tmp")
	if err := writeFileSync(tmp, meta); err != nil {
		return Ref{}, err
	}
	if err := os.Rename(tmp, filepath.Join(dir, MetadataFile)); err != nil {
		return Ref{}, fmt.Errorf("checkpoint: completing %s: %w", dir, err)
	}
	if err := syncDir(dir); err != nil {
		return Ref{}, err
	}
	return Ref{ID: m.ID, Path: dir}, syncDir(d.path)
}

func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("checkpoint: writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("checkpoint: syncing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("checkpoint: closing %s: %w", path, err)
	}
	return nil
}

func syncDir(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("checkpoint: syncing directory %s: %w", path, err)
	}
	return nil
}

// List returns the directories that hold a metadata file, newest first.
func (d *Dir) List() ([]Ref, error) {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: listing %s: %w", d.path, err)
	}
	var refs []Ref
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), d.prefix) {
			continue
		}
		id, err := strconv.ParseInt(strings.TrimPrefix(e.Name(), d.prefix), 10, 64)
		if err != nil {
			continue
		}
		p := filepath.Join(d.path, e.Name())
		if _, err := os.Stat(filepath.Join(p, MetadataFile)); err != nil {
			continue
		}
		refs = append(refs, Ref{ID: id, Path: p})
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].ID > refs[j].ID })
	return refs, nil
}

// Load reads a checkpoint directory and verifies every file.
func (d *Dir) Load(r Ref) (*Loaded, error) { return LoadPath(r.Path) }

// LoadPath reads and verifies the checkpoint or savepoint in directory path.
func LoadPath(path string) (*Loaded, error) {
	data, err := os.ReadFile(filepath.Join(path, MetadataFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("checkpoint: %s is not a completed checkpoint or savepoint: it has no %s", path, MetadataFile)
		}
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	m, err := decodeMetadata(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(path, MetadataFile), err)
	}
	l := &Loaded{Ref: Ref{ID: m.ID, Path: path}, Metadata: m, Files: map[string][]byte{}, SharedRoot: filepath.Dir(filepath.Clean(path))}
	for _, op := range m.Operators {
		for _, st := range op.Subtasks {
			if st.File == "" {
				continue
			}
			p := filepath.Join(path, st.File)
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("%w: state file %s of operator %q: %v", ErrCorrupt, p, op.Name, err)
			}
			if int64(len(b)) != st.Size {
				return nil, fmt.Errorf("%w: state file %s is %d bytes, metadata says %d (truncated?)", ErrCorrupt, p, len(b), st.Size)
			}
			if got := Checksum(b); got != st.CRC32C {
				return nil, fmt.Errorf("%w: state file %s has checksum %08x, metadata says %08x", ErrCorrupt, p, got, st.CRC32C)
			}
			l.Files[st.File] = b
			if err := l.checkBackends(op, st); err != nil {
				return nil, err
			}
		}
	}
	return l, nil
}

// checkBackends verifies that the files of the subtask's backend snapshots
// are where the metadata says, at their size: private ones inside the state
// file, shared ones in the shared area. Their checksums are verified when a
// restore copies them.
func (l *Loaded) checkBackends(op Operator, st Subtask) error {
	for _, b := range st.Backends {
		for _, f := range b.Files {
			if f.Shared == "" {
				if f.Offset < 0 || f.Size < 0 || f.Offset+f.Size > st.Size {
					return fmt.Errorf("%w: file %s of operator %q, subtask %d lies outside its state file %s", ErrCorrupt, f.Name, op.Name, st.Index, st.File)
				}
				continue
			}
			if err := checkSharedKey(f.Shared); err != nil {
				return fmt.Errorf("%w: operator %q, subtask %d: %v", ErrCorrupt, op.Name, st.Index, err)
			}
			p := l.SharedPath(f.Shared)
			info, err := os.Stat(p)
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%w: %s references the shared file %s (operator %q, subtask %d), which is missing: eddy deletes a shared file only once no retained checkpoint references it, so it was removed or never copied with the checkpoint; restore from an earlier checkpoint or a savepoint, or copy the whole checkpoint directory including shared/", ErrCorrupt, l.Ref.Path, p, op.Name, st.Index)
			} else if err != nil {
				return fmt.Errorf("%w: shared file %s: %v", ErrCorrupt, p, err)
			}
			if info.Size() != f.Size {
				return fmt.Errorf("%w: shared file %s is %d bytes, %s says %d (truncated?): restore from an earlier checkpoint or a savepoint", ErrCorrupt, p, info.Size(), l.Ref.Path, f.Size)
			}
		}
	}
	return nil
}

// Delete removes a checkpoint directory.
func (d *Dir) Delete(r Ref) error {
	if err := os.RemoveAll(r.Path); err != nil {
		return fmt.Errorf("checkpoint: deleting %s: %w", r.Path, err)
	}
	return nil
}

// LatestValid returns the newest checkpoint in s that loads and verifies.
// Checkpoints that fail are skipped, and each skip is logged with the
// reason. It returns nil if there is none.
func LatestValid(s Storage, log *slog.Logger) (*Loaded, error) {
	refs, err := s.List()
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		l, err := s.Load(r)
		if err == nil {
			return l, nil
		}
		log.Warn("skipping a checkpoint that fails verification; falling back to the previous one", "checkpoint", r.Path, "reason", err)
	}
	return nil, nil
}

// Retain deletes all but the newest n completed checkpoints, any
// incomplete checkpoint directory older than the newest complete one, and
// the shared files no remaining checkpoint references (SweepShared).
func Retain(d *Dir, n int) error {
	if err := retainDirs(d, n); err != nil {
		return err
	}
	if d.prefix != "chk-" {
		return nil
	}
	_, err := SweepShared(d)
	return err
}

func retainDirs(d *Dir, n int) error {
	refs, err := d.List()
	if err != nil {
		return err
	}
	for i, r := range refs {
		if i >= n {
			if err := d.Delete(r); err != nil {
				return err
			}
		}
	}
	if len(refs) == 0 {
		return nil
	}
	newest := refs[0].ID
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	for _, e := range entries {
		id, err := strconv.ParseInt(strings.TrimPrefix(e.Name(), d.prefix), 10, 64)
		if err != nil || !strings.HasPrefix(e.Name(), d.prefix) || id >= newest {
			continue
		}
		p := filepath.Join(d.path, e.Name())
		if _, err := os.Stat(filepath.Join(p, MetadataFile)); errors.Is(err, fs.ErrNotExist) {
			os.RemoveAll(p)
		}
	}
	return nil
}
