package checkpoint

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// SharedDir is the directory of the shared area, next to the checkpoint
// directories: shared files have keys "shared/...".
const SharedDir = "shared"

// SharedStorage is where backends put the immutable files their snapshots
// share across checkpoints.
//
// Concurrency: safe for concurrent use.
type SharedStorage interface {
	// Upload copies the local file src into the shared area under key,
	// durably, and returns its size and CRC-32C. Uploading a key again
	// replaces the file whole. Keys must be unique to the content: backends
	// name files with an id of their own instance.
	Upload(key, src string) (size int64, crc uint32, err error)
	// SharedPath returns where the shared file key is stored, so that a
	// restore that finds it there can link it rather than copy it.
	SharedPath(key string) string
}

var _ SharedStorage = (*Dir)(nil)

// SharedPath returns the path of the shared file key.
func (d *Dir) SharedPath(key string) string {
	return filepath.Join(d.path, filepath.FromSlash(key))
}

// Upload copies src to the shared file key: into a temporary file that is
// fsynced and then renamed into place.
func (d *Dir) Upload(key, src string) (int64, uint32, error) {
	if err := checkSharedKey(key); err != nil {
		return 0, 0, err
	}
	if !strings.HasPrefix(key, SharedDir+"/") {
		return 0, 0, fmt.Errorf("checkpoint: shared file key %q is not under %s/", key, SharedDir)
	}
	dst := d.SharedPath(key)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, 0, fmt.Errorf("checkpoint: %w", err)
	}
	in, err := os.Open(src)
	if err != nil {
		return 0, 0, fmt.Errorf("checkpoint: uploading %s: %w", src, err)
	}
	defer in.Close()
	var suffix [6]byte
	rand.Read(suffix[:])
	tmp := dst + ".tmp-" + hex.EncodeToString(suffix[:])
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, 0, fmt.Errorf("checkpoint: %w", err)
	}
	h := crc32.New(castagnoli)
	n, err := io.Copy(io.MultiWriter(out, h), in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return 0, 0, fmt.Errorf("checkpoint: uploading %s to %s: %w", src, dst, err)
	}
	if err := syncDir(filepath.Dir(dst)); err != nil {
		return 0, 0, err
	}
	return n, h.Sum32(), nil
}

// ReadMetadata reads and verifies the metadata of the checkpoint in the
// directory path, without reading its state files.
func ReadMetadata(path string) (*Metadata, error) {
	data, err := os.ReadFile(filepath.Join(path, MetadataFile))
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	m, err := decodeMetadata(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(path, MetadataFile), err)
	}
	return m, nil
}

// sharedKeysOf returns the shared files a checkpoint's metadata references.
func sharedKeysOf(m *Metadata) []string {
	var keys []string
	for _, op := range m.Operators {
		for _, st := range op.Subtasks {
			for _, b := range st.Backends {
				for _, f := range b.Files {
					if f.Shared != "" {
						keys = append(keys, f.Shared)
					}
				}
			}
		}
	}
	return keys
}

// SweepShared deletes the shared files that no completed checkpoint in d
// references: those of checkpoints Retain deleted, and leftovers of
// checkpoints that never completed. It must not run while a checkpoint
// whose files are being uploaded may still complete. If the metadata of a
// checkpoint cannot be read, nothing is deleted, since that checkpoint's
// files are unknown. It returns the number of files deleted.
func SweepShared(d *Dir) (int, error) {
	refs, err := d.List()
	if err != nil {
		return 0, err
	}
	keep := map[string]bool{}
	for _, r := range refs {
		m, err := ReadMetadata(r.Path)
		if err != nil {
			return 0, fmt.Errorf("checkpoint: not deleting unused shared files: %w", err)
		}
		for _, k := range sharedKeysOf(m) {
			keep[k] = true
		}
	}
	root := filepath.Join(d.path, SharedDir)
	deleted := 0
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if e.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(d.path, p)
		if err != nil {
			return err
		}
		if keep[filepath.ToSlash(rel)] {
			return nil
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		deleted++
		return nil
	})
	if err != nil {
		return deleted, fmt.Errorf("checkpoint: deleting unused shared files: %w", err)
	}
	return deleted, nil
}
