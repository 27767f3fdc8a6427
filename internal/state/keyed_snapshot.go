package state

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
)

// Keyed snapshot layout. The keyed state of one key group of an operator
// subtask is a sequence of sections:
//
//	uvarint len(name) | name | uvarint len(data) | data
//
// In the native format of an object backend (its checkpoints) there is one
// section per table, in order of name, whose data is what the table's
// AppendKeyGroup (or the encode of its BeginSnapshot) made for the key
// group. Its name is the table's, a zero byte and the sum of the table's
// kind (kindSum), so that a restore into a table of another kind (a job
// whose state changed type, or an eddy release that keys an operator
// otherwise) is refused instead of decoding the entries as the new types;
// sections written before the sum have the table's name alone. In the canonical format (savepoints, and the checkpoints of a bytes
// backend that does not snapshot natively) there is one section,
// CanonicalSection (see canonical.go). Extra tables beside a bytes backend
// are in their native format.

// BytesTablesSection is the name of the section in which bytes backends
// wrote their tables before the canonical format; restores read it.
const BytesTablesSection = "\x00bytes"

// AppendSection appends one (name, data) section of a key group's snapshot
// to dst.
func AppendSection(dst []byte, name string, data []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(name)))
	dst = append(dst, name...)
	dst = binary.AppendUvarint(dst, uint64(len(data)))
	return append(dst, data...)
}

// EachSection calls fn for each section of b, the snapshot of key group kg,
// in order, and stops at the first error fn returns.
func EachSection(kg int, b []byte, fn func(name string, data []byte) error) error {
	for len(b) > 0 {
		n, m := binary.Uvarint(b)
		if m <= 0 || uint64(len(b)-m) < n {
			return fmt.Errorf("restored key group %d is corrupt", kg)
		}
		name := string(b[m : m+int(n)])
		b = b[m+int(n):]
		n, m = binary.Uvarint(b)
		if m <= 0 || uint64(len(b)-m) < n {
			return fmt.Errorf("restored key group %d is corrupt in table %q", kg, name)
		}
		data := b[m : m+int(n)]
		b = b[m+int(n):]
		if err := fn(name, data); err != nil {
			return err
		}
	}
	return nil
}

// KeyedTables is what the snapshots of one keyed operator subtask hold: the
// tables of its backend, and extra object tables that live beside it (the
// timer services of an object backend). It encodes and restores key groups
// in the layout above.
//
// Concurrency: used on the subtask's goroutine, except for the function
// BeginSnapshot returns.
type KeyedTables struct {
	b     Backend
	extra map[string]ObjectTable
}

// NewKeyedTables returns the snapshot tables of backend b, with no extra
// table yet.
func NewKeyedTables(b Backend) *KeyedTables { return &KeyedTables{b: b} }

// AddExtra adds an object table that lives outside the backend (a timer
// service) to the snapshots under name. It panics if name is taken: two
// declarations of one name are a bug of the operator.
func (t *KeyedTables) AddExtra(name string, tbl ObjectTable) {
	if t.extra == nil {
		t.extra = map[string]ObjectTable{}
	}
	if _, dup := t.extra[name]; dup {
		panic(fmt.Sprintf("state: table %q registered twice", name))
	}
	t.extra[name] = tbl
}

// TableLister is a bytes backend that can list its tables by name, which
// its snapshots in the key-group layout need.
type TableLister interface {
	BytesBackend
	// TableIDs returns the id of every table declared on the backend.
	TableIDs() map[string]uint32
}

// objectTables returns the object tables by name: those of an object
// backend, and the extra tables.
func (t *KeyedTables) objectTables() (map[string]ObjectTable, error) {
	out := map[string]ObjectTable{}
	switch b := t.b.(type) {
	case ObjectBackend:
		for _, name := range b.Tables() {
			tbl, _ := b.Table(name)
			out[name] = tbl
		}
	case TableLister:
	default:
		return nil, fmt.Errorf("checkpointing keyed state of a %T backend is not supported", t.b)
	}
	for name, tbl := range t.extra {
		out[name] = tbl
	}
	return out, nil
}

// SnapshotOptions says what BeginSnapshot encodes.
type SnapshotOptions struct {
	// Canonical encodes every key group in the canonical format, which
	// restores into any backend (savepoints).
	Canonical bool
	// SkipBackend leaves the tables of a bytes backend out: the backend
	// snapshots them natively. Only the extra tables are encoded, in their
	// native format.
	SkipBackend bool
}

// Canonical reports whether BeginSnapshot with opts encodes key groups in
// the canonical format: if opts.Canonical, and for the tables of a bytes
// backend unless opts.SkipBackend.
func (t *KeyedTables) Canonical(opts SnapshotOptions) bool {
	_, bytesBackend := t.b.(TableLister)
	return opts.Canonical || bytesBackend && !opts.SkipBackend
}

// BeginSnapshot freezes the tables for a snapshot of the key groups kgs, on
// the subtask's goroutine: copy-on-write for tables that support it
// (AsyncSnapshotter), an encoding made now for the others (a bytes
// backend's). It returns the function that completes the snapshot, on any
// goroutine, while the subtask goes on: it returns the encoding of each key
// group and releases the frozen tables. That function must be called
// exactly once.
//
// The tables of a bytes backend have no native format in this layout: unless
// opts.SkipBackend, they are encoded in the canonical format.
func (t *KeyedTables) BeginSnapshot(kgs KeyGroupRange, opts SnapshotOptions) (func() map[int][]byte, error) {
	if t.Canonical(opts) {
		return t.beginCanonical(kgs)
	}
	tables, err := t.objectTables()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(tables))
	for name := range tables {
		names = append(names, name)
	}
	sort.Strings(names)
	encoders := make([]func(dst []byte, kg int) []byte, len(names))
	sections := make([]string, len(names))
	var releases []func()
	for i, name := range names {
		sections[i] = name + "\x00" + kindSum(tables[name].Kind())
		if a, ok := tables[name].(AsyncSnapshotter); ok {
			enc, rel := a.BeginSnapshot()
			encoders[i] = enc
			releases = append(releases, rel)
		}
	}
	// Tables without copy-on-write are encoded now, each in its place
	// among the sections: a key group's sections are in order of name.
	now := make([][][]byte, kgs.Len())
	for kg := kgs.Start; kg < kgs.End; kg++ {
		parts := make([][]byte, len(names))
		for i, name := range names {
			if encoders[i] == nil {
				parts[i] = tables[name].AppendKeyGroup(nil, kg)
			}
		}
		now[kg-kgs.Start] = parts
	}
	return func() map[int][]byte {
		defer func() {
			for _, rel := range releases {
				rel()
			}
		}()
		out := make(map[int][]byte, kgs.Len())
		var data []byte
		for kg := kgs.Start; kg < kgs.End; kg++ {
			var buf []byte
			for i := range names {
				if encoders[i] == nil {
					buf = AppendSection(buf, sections[i], now[kg-kgs.Start][i])
					continue
				}
				data = encoders[i](data[:0], kg)
				buf = AppendSection(buf, sections[i], data)
			}
			out[kg] = buf
		}
		return out
	}, nil
}

// Restore loads the key groups of a snapshot, native or canonical, into the
// tables, which must all be declared by now. Every key group must be in kgs.
// A canonical snapshot restores into any backend; the native sections of an
// object backend's tables restore into an object backend only.
func (t *KeyedTables) Restore(kgs KeyGroupRange, keyGroups map[int][]byte) error {
	if len(keyGroups) == 0 {
		return nil
	}
	tables, err := t.objectTables()
	if err != nil {
		return err
	}
	for kg, b := range keyGroups {
		if !kgs.Contains(kg) {
			return fmt.Errorf("restored key group %d is outside this subtask's %v", kg, kgs)
		}
		err := EachSection(kg, b, func(name string, data []byte) error {
			switch name {
			case CanonicalSection, BytesTablesSection:
				parse := parseCanonical
				if name == BytesTablesSection {
					parse = parseBytesTables
				}
				cts, err := parse(data)
				if err != nil {
					return fmt.Errorf("restored key group %d: %w", kg, err)
				}
				return t.restoreCanonical(kg, cts)
			}
			name, sum := splitSection(name)
			tbl, ok := tables[name]
			if ok && sum != "" && sum != kindSum(tbl.Kind()) {
				return fmt.Errorf("restoring state %q: the checkpoint holds it with other types than the operator declares (%s): the job's state changed, or the checkpoint was written by another eddy release; resume from a savepoint, which names both, or start the job without the checkpoint: %w", name, tbl.Kind(), ErrIncompatibleTable)
			}
			if !ok {
				if _, bytesBackend := t.b.(TableLister); bytesBackend {
					return fmt.Errorf("the checkpoint holds state %q in the heap backend's own format, which this state backend cannot read: restore from a savepoint (savepoints restore into any state backend), or run the job with the heap backend", name)
				}
				return undeclared(name)
			}
			if err := tbl.RestoreKeyGroup(kg, data); err != nil {
				return fmt.Errorf("restoring state %q, key group %d: %w", name, kg, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// kindSum returns the sum of a table's kind that its native sections carry:
// its 64-bit FNV-1a hash with the top bit set, so that it always has 16
// hexadecimal digits.
func kindSum(kind string) string {
	h := fnv.New64a()
	h.Write([]byte(kind))
	return strconv.FormatUint(h.Sum64()|1<<63, 16)
}

// splitSection returns the table name and the kind sum of a native
// section's name; a name without a sum (written before them, or a table
// name that ends otherwise) has an empty sum.
func splitSection(section string) (name, sum string) {
	i := strings.LastIndexByte(section, 0)
	if i < 0 || len(section)-i-1 != 16 {
		return section, ""
	}
	if _, err := strconv.ParseUint(section[i+1:], 16, 64); err != nil {
		return section, ""
	}
	return section[:i], section[i+1:]
}
