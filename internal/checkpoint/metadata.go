// Package checkpoint stores and loads checkpoints and savepoints: the state
// files of every operator subtask and the metadata that makes them a
// checkpoint.
//
// Format (version 3). A checkpoint is a directory holding one state file per
// operator subtask and a file _metadata. A state file is the concatenation of
// the subtask's sections: one per key group (all keyed state of the
// operator in that key group) and one per element of each operator-state
// list. _metadata is JSON describing the job, the operators (by UID), their
// parallelism and max parallelism, and for every state file its size, its
// CRC-32C and the offset and length of each section; it ends with a line
// "crc32c <hex>" over the JSON. A directory without a valid _metadata is not
// a checkpoint. Readers reject a version they do not know; this version reads
// versions 1 to 3, and later versions keep reading them. A checkpoint is
// written in the lowest version that holds what it has, so that older
// readers read what they can.
//
// Version 2 adds native snapshots of keyed state backends (Subtask.Backends):
// the small files of a backend's snapshot are sections of the state file,
// and its large immutable files live once in the shared area of the storage,
// shared/ next to the checkpoint directories, referenced by key from every
// checkpoint that uses them. A checkpoint with no backend snapshot is
// written as version 1.
//
// Version 3 adds keyed state in the canonical format of internal/state
// (SubtaskState.Canonical): every table of a key group as the key/value
// pairs its codecs make, which restores into any state backend. Savepoints
// hold their keyed state so, and so do the checkpoints of a state backend
// that keeps bytes and does not snapshot natively. A checkpoint without such
// state is written as version 2 or 1.
//
// A subtask that had finished (its input ended and it emitted everything)
// when the checkpoint was taken is marked Finished; its state is what it
// held at the end. An operator whose subtasks had all finished is fully
// finished: a restore does not run it again (see Redistribute). Readers that
// do not know the mark run such subtasks again from their final state.
package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
	"time"
)

// FormatVersion is the version of the checkpoint format this code writes.
const FormatVersion = 3

// MetadataFile is the name of the file that completes a checkpoint.
const MetadataFile = "_metadata"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum returns the CRC-32C of b, as state files and metadata use.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// ErrCorrupt means a checkpoint failed verification: a file is missing,
// truncated, or fails its checksum.
var ErrCorrupt = errors.New("checkpoint: corrupt")

// Metadata describes a completed checkpoint or savepoint.
type Metadata struct {
	Version int    `json:"version"`
	Job     string `json:"job"`
	ID      int64  `json:"id"`
	// Savepoint marks a user-triggered, portable checkpoint.
	Savepoint bool `json:"savepoint,omitempty"`
	// Final marks the checkpoint taken when the job's input had ended and
	// every operator had finished: the job is complete. Every subtask is
	// marked Finished and holds its end state, such as the transactions a
	// sink pre-committed at the end of its input, which a run restored
	// from it commits.
	Final     bool       `json:"final,omitempty"`
	Time      time.Time  `json:"time"`
	Operators []Operator `json:"operators"`
}

// Operator is the state of one operator in a checkpoint.
type Operator struct {
	UID            string    `json:"uid"`
	Name           string    `json:"name"`
	Parallelism    int       `json:"parallelism"`
	MaxParallelism int       `json:"maxParallelism"`
	Subtasks       []Subtask `json:"subtasks"`
}

// Subtask is the state file of one operator subtask and its sections.
type Subtask struct {
	Index     int       `json:"index"`
	File      string    `json:"file"`
	Size      int64     `json:"size"`
	CRC32C    uint32    `json:"crc32c"`
	KeyGroups []Section `json:"keyGroups,omitempty"`
	Lists     []List    `json:"lists,omitempty"`
	// Backends are native snapshots of keyed state backends (version 2).
	Backends []BackendState `json:"backends,omitempty"`
	// Finished marks a subtask that had finished when the checkpoint was
	// taken. A finished subtask without state has no File.
	Finished bool `json:"finished,omitempty"`
}

// Section is a byte range of a state file.
type Section struct {
	// KeyGroup is the key group of a keyed-state section.
	KeyGroup int   `json:"kg,omitempty"`
	Offset   int64 `json:"off"`
	Length   int64 `json:"len"`
}

// List is a named operator-state list: one section per element.
type List struct {
	Name  string    `json:"name"`
	Items []Section `json:"items"`
}

// Operator returns the operator with the given UID.
func (m *Metadata) Operator(uid string) (*Operator, bool) {
	for i := range m.Operators {
		if m.Operators[i].UID == uid {
			return &m.Operators[i], true
		}
	}
	return nil, false
}

// encode renders the metadata with its checksum trailer.
func (m *Metadata) encode() ([]byte, error) {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return nil, fmt.Errorf("checkpoint: encoding metadata: %w", err)
	}
	return fmt.Appendf(b, "\ncrc32c %08x\n", Checksum(b)), nil
}

// decodeMetadata parses and verifies a _metadata file.
func decodeMetadata(data []byte) (*Metadata, error) {
	body := bytes.TrimRight(data, "\n")
	i := bytes.LastIndexByte(body, '\n')
	if i < 0 || !bytes.HasPrefix(body[i+1:], []byte("crc32c ")) {
		return nil, fmt.Errorf("%w: metadata has no checksum line (truncated?)", ErrCorrupt)
	}
	want, err := strconv.ParseUint(strings.TrimPrefix(string(body[i+1:]), "crc32c "), 16, 32)
	if err != nil {
		return nil, fmt.Errorf("%w: bad metadata checksum line: %v", ErrCorrupt, err)
	}
	if got := Checksum(body[:i]); got != uint32(want) {
		return nil, fmt.Errorf("%w: metadata checksum %08x, want %08x", ErrCorrupt, got, want)
	}
	var m Metadata
	if err := json.Unmarshal(body[:i], &m); err != nil {
		return nil, fmt.Errorf("%w: metadata: %v", ErrCorrupt, err)
	}
	if err := checkVersion(m.Version, FormatVersion); err != nil {
		return nil, err
	}
	return &m, nil
}

// checkVersion returns an error unless a reader of versions 1 to newest
// reads format version v.
func checkVersion(v, newest int) error {
	if v < 1 || v > newest {
		return fmt.Errorf("checkpoint: format version %d is not supported by this eddy (which reads versions 1 to %d); restore it with an eddy that reads version %d: the version that wrote it or a later one", v, newest, v)
	}
	return nil
}
