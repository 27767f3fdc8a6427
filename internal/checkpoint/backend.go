package checkpoint

import (
	"fmt"
	"strings"
)

// BackendState is a native snapshot of a keyed state backend: the files of a
// Pebble checkpoint, say, rather than an encoding of every key group. Large
// files that do not change once written (Pebble's SSTs) are stored once in
// the storage's shared area and referenced by every checkpoint that needs
// them, which makes checkpoints incremental; small files that change each
// time travel inside the subtask's state file.
type BackendState struct {
	// Kind names the backend and its format, e.g. "pebble/1". A restore
	// checks that the backend it runs understands it.
	Kind string `json:"kind"`
	// KeyGroupStart and KeyGroupEnd bound the key groups the files hold.
	KeyGroupStart int `json:"kgStart"`
	KeyGroupEnd   int `json:"kgEnd"`
	// Files are the backend's files.
	Files []BackendFile `json:"files"`
}

// BackendFile is one file of a BackendState.
type BackendFile struct {
	// Name is the file's name in the backend's directory.
	Name string `json:"name"`
	// Size and CRC32C describe the content.
	Size   int64  `json:"size"`
	CRC32C uint32 `json:"crc32c"`
	// Shared is the storage key of a file kept in the shared area; empty
	// for a file stored in the state file, at Offset.
	Shared string `json:"shared,omitempty"`
	Offset int64  `json:"off,omitempty"`

	// Data is the content of a file that is not shared, when taking or
	// restoring a checkpoint.
	Data []byte `json:"-"`
	// Path is the location of a shared file when restoring: where to copy
	// or link it from.
	Path string `json:"-"`
	// Uploaded marks a shared file that was copied to storage for this
	// checkpoint (as opposed to one reused from an earlier checkpoint), so
	// that statistics can tell what a checkpoint wrote.
	Uploaded bool `json:"-"`
}

// overlaps reports whether the state holds any key group of [start, end).
func (b *BackendState) overlaps(start, end int) bool {
	return b.KeyGroupStart < end && start < b.KeyGroupEnd
}

// checkSharedKey rejects keys that would leave the shared area.
func checkSharedKey(key string) error {
	if key == "" || key[0] == '/' || len(key) > 1024 {
		return fmt.Errorf("checkpoint: bad shared file key %q", key)
	}
	for _, part := range strings.Split(key, "/") {
		if part == ".." || part == "." || part == "" {
			return fmt.Errorf("checkpoint: bad shared file key %q", key)
		}
	}
	return nil
}
