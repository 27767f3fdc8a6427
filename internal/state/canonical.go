package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/eddystream/eddy/internal/state/codec"
	"github.com/eddystream/eddy/internal/state/kv"
)

// Canonical keyed-state format: the backend-independent encoding of a key
// group that savepoints use, so that a savepoint restores into any backend
// (as Flink's canonical savepoint format does). It is the key/value view of
// the bytes backends: every entry of every table is a key and a value, both
// made by the table's codecs:
//
//	value table:  key | namespace                 → value
//	map table:    key | namespace | user key      → user value
//	timers:       domain (1 byte) | timestamp (8 bytes, big-endian, sign bit
//	              flipped) | key | namespace      → empty
//
// A key group's snapshot holds one section, CanonicalSection, whose data is,
// for each table with entries in the key group, in order of name:
//
//	uvarint len(name) | name | uvarint len(kind) | kind | uvarint len(entries) | entries
//
// and entries is a sequence of uvarint len(key) | key | uvarint len(value) |
// value. kind is the table's Kind (e.g. "value[int64,void,string]"); a
// restore checks it against the declared table. An object backend writes
// its tables' entries with their codecs (CanonicalTable); a bytes backend
// writes its stored entries with the key group and table id cut off, as
// they are. The section BytesTablesSection that bytes backends wrote before
// (the same entries, counted, without kinds) restores into any backend too.

// CanonicalSection is the name of the section that holds a key group in the
// canonical format.
const CanonicalSection = "\x00canonical"

// CanonicalTable is an object table that reads and writes the canonical
// format: the tables of the heap backend (internal/state/heap/cow) and the
// timer service do.
type CanonicalTable interface {
	ObjectTable
	// AppendCanonical appends the entries of key group kg to dst in the
	// canonical format.
	AppendCanonical(dst []byte, kg int) []byte
	// BeginCanonicalSnapshot is BeginSnapshot (AsyncSnapshotter) in the
	// canonical format: encode appends what AppendCanonical would have at
	// the time of the call.
	BeginCanonicalSnapshot() (encode func(dst []byte, kg int) []byte, release func())
	// RestoreCanonical adds the canonical entries to key group kg.
	RestoreCanonical(kg int, entries []byte) error
}

// TableKindLister is a bytes backend that can tell the kind of each of its
// tables, which canonical snapshots record and restores check.
type TableKindLister interface {
	// TableKinds returns the kind of every table declared on the backend.
	TableKinds() map[string]string
}

// errCorruptCanonical means canonical state data does not parse.
var errCorruptCanonical = errors.New("corrupt canonical state")

// nextBytes cuts a uvarint-prefixed byte string off the front of *data.
func nextBytes(data *[]byte) ([]byte, error) {
	n, m := binary.Uvarint(*data)
	if m <= 0 || uint64(len(*data)-m) < n {
		return nil, errCorruptCanonical
	}
	b := (*data)[m : m+int(n)]
	*data = (*data)[m+int(n):]
	return b, nil
}

// canonicalTable is one table in a canonical key group: its name and kind,
// and its entries.
type canonicalTable struct {
	name, kind string
	entries    []byte
}

// parseCanonical splits the data of a CanonicalSection into its tables.
func parseCanonical(data []byte) ([]canonicalTable, error) {
	var out []canonicalTable
	for len(data) > 0 {
		name, err := nextBytes(&data)
		if err != nil {
			return nil, err
		}
		kind, err := nextBytes(&data)
		if err != nil {
			return nil, err
		}
		entries, err := nextBytes(&data)
		if err != nil {
			return nil, err
		}
		out = append(out, canonicalTable{string(name), string(kind), entries})
	}
	return out, nil
}

// parseBytesTables splits the data of a BytesTablesSection into its tables,
// with their entries in the canonical layout and no kinds.
func parseBytesTables(data []byte) ([]canonicalTable, error) {
	var out []canonicalTable
	for len(data) > 0 {
		name, err := nextBytes(&data)
		if err != nil {
			return nil, err
		}
		count, m := binary.Uvarint(data)
		if m <= 0 {
			return nil, errCorruptCanonical
		}
		data = data[m:]
		rest := data
		for range count {
			if _, err := nextBytes(&data); err != nil {
				return nil, err
			}
			if _, err := nextBytes(&data); err != nil {
				return nil, err
			}
		}
		out = append(out, canonicalTable{name: string(name), entries: rest[:len(rest)-len(data)]})
	}
	return out, nil
}

// beginCanonical freezes the tables for a canonical snapshot of the key
// groups kgs and returns the function that encodes them (see BeginSnapshot).
// The tables of an object backend and the extra tables must all be
// CanonicalTables; those of a bytes backend are read now.
func (t *KeyedTables) beginCanonical(kgs KeyGroupRange) (func() map[int][]byte, error) {
	type source struct {
		name, kind string
		encode     func(dst []byte, kg int) []byte // frozen, or nil
		now        [][]byte                        // per key group, if encode is nil
	}
	var sources []*source
	var releases []func()
	release := func() {
		for _, rel := range releases {
			rel()
		}
	}
	object := map[string]ObjectTable{}
	switch b := t.b.(type) {
	case ObjectBackend:
		for _, name := range b.Tables() {
			object[name], _ = b.Table(name)
		}
	case TableLister:
		ids := b.TableIDs()
		var kinds map[string]string
		if kl, ok := b.(TableKindLister); ok {
			kinds = kl.TableKinds()
		}
		var prefix []byte
		for name, id := range ids {
			s := &source{name: name, kind: kinds[name], now: make([][]byte, kgs.Len())}
			for kg := kgs.Start; kg < kgs.End; kg++ {
				prefix = kv.AppendTablePrefix(prefix[:0], kg, id)
				var entries []byte
				b.Scan(prefix, func(key, value []byte) bool {
					entries = codec.AppendKV(entries, key[len(prefix):], value)
					return true
				})
				s.now[kg-kgs.Start] = entries
			}
			sources = append(sources, s)
		}
	default:
		return nil, fmt.Errorf("a savepoint of keyed state of a %T backend is not supported", t.b)
	}
	for name, tbl := range t.extra {
		object[name] = tbl
	}
	for name, tbl := range object {
		ct, ok := tbl.(CanonicalTable)
		if !ok {
			release()
			return nil, fmt.Errorf("state %q (%s) has no canonical encoding for savepoints", name, tbl.Kind())
		}
		s := &source{name: name, kind: tbl.Kind()}
		var rel func()
		s.encode, rel = ct.BeginCanonicalSnapshot()
		releases = append(releases, rel)
		sources = append(sources, s)
	}
	sort.Slice(sources, func(i, j int) bool { return sources[i].name < sources[j].name })
	return func() map[int][]byte {
		defer release()
		out := make(map[int][]byte, kgs.Len())
		var entries []byte
		for kg := kgs.Start; kg < kgs.End; kg++ {
			var data []byte
			for _, s := range sources {
				if s.encode != nil {
					entries = s.encode(entries[:0], kg)
				} else {
					entries = s.now[kg-kgs.Start]
				}
				if len(entries) == 0 {
					continue
				}
				data = binary.AppendUvarint(data, uint64(len(s.name)))
				data = append(data, s.name...)
				data = binary.AppendUvarint(data, uint64(len(s.kind)))
				data = append(data, s.kind...)
				data = binary.AppendUvarint(data, uint64(len(entries)))
				data = append(data, entries...)
			}
			var buf []byte
			if len(data) > 0 {
				buf = AppendSection(nil, CanonicalSection, data)
			}
			out[kg] = buf
		}
		return out
	}, nil
}

// restoreCanonical adds the tables of a canonical key group kg (or of a
// BytesTablesSection, whose tables have no kind) to the operator's tables.
func (t *KeyedTables) restoreCanonical(kg int, tables []canonicalTable) error {
	if lister, ok := t.b.(TableLister); ok {
		return t.restoreCanonicalBytes(lister, kg, tables)
	}
	objects, err := t.objectTables()
	if err != nil {
		return err
	}
	for _, ct := range tables {
		tbl, ok := objects[ct.name]
		if !ok {
			return undeclared(ct.name)
		}
		if ct.kind != "" && tbl.Kind() != ct.kind {
			return fmt.Errorf("restoring state %q: %w", ct.name, incompatible(ct.name, ct.kind, tbl.Kind()))
		}
		c, ok := tbl.(CanonicalTable)
		if !ok {
			return fmt.Errorf("restoring state %q: a %s cannot restore from a savepoint's canonical format", ct.name, tbl.Kind())
		}
		if err := c.RestoreCanonical(kg, ct.entries); err != nil {
			return fmt.Errorf("restoring state %q, key group %d: %w", ct.name, kg, err)
		}
	}
	return nil
}

// undeclared is the error for restored state the operator does not declare.
func undeclared(name string) error {
	return fmt.Errorf("the checkpoint holds state %q that the operator does not declare; declare all state in Open, under the same names as the job that wrote the checkpoint", name)
}

// restoreCanonicalBytes writes the canonical tables of key group kg into a
// bytes backend, under the ids it gave the tables: in key order through a
// sorted batch if the backend takes one (Pebble ingests a large one as a
// table file), else through a write batch or one write at a time.
func (t *KeyedTables) restoreCanonicalBytes(b TableLister, kg int, tables []canonicalTable) error {
	ids := b.TableIDs()
	var kinds map[string]string
	if kl, ok := b.(TableKindLister); ok {
		kinds = kl.TableKinds()
	}
	type entry struct{ k, v []byte }
	var all []entry
	for _, ct := range tables {
		id, ok := ids[ct.name]
		if !ok {
			if tbl, ok := t.extra[ct.name]; ok {
				if err := t.restoreExtra(tbl, kg, ct); err != nil {
					return err
				}
				continue
			}
			return undeclared(ct.name)
		}
		if k := kinds[ct.name]; ct.kind != "" && k != "" && k != ct.kind {
			return fmt.Errorf("restoring state %q: %w", ct.name, incompatible(ct.name, ct.kind, k))
		}
		prefix := kv.AppendTablePrefix(nil, kg, id)
		err := codec.EachKV(ct.entries, func(k, v []byte) error {
			all = append(all, entry{append(slices.Clip(prefix), k...), v})
			return nil
		})
		if err != nil {
			return fmt.Errorf("restoring state %q, key group %d: %w", ct.name, kg, err)
		}
	}
	if len(all) == 0 {
		return nil
	}
	kgPrefix := []byte{byte(kg >> 8), byte(kg)}
	host, cached := b.(kv.CacheHost)
	invalidate := func() {
		if cached {
			for _, c := range host.Caches() {
				c.Invalidate(kgPrefix)
			}
		}
	}
	invalidate()
	defer invalidate()
	var w kv.WriteBatch
	if sh, ok := b.(kv.SortedWriteHost); ok {
		slices.SortFunc(all, func(a, b entry) int { return bytes.Compare(a.k, b.k) })
		for i := 1; i < len(all); i++ {
			if bytes.Equal(all[i-1].k, all[i].k) {
				return fmt.Errorf("restoring key group %d: a key appears twice: %w", kg, errCorruptCanonical)
			}
		}
		w = sh.NewSortedBatch()
	} else if cached {
		w = host.NewWriteBatch()
	}
	for _, e := range all {
		if w != nil {
			w.Set(e.k, e.v)
		} else {
			b.Set(e.k, e.v)
		}
	}
	if w != nil {
		w.Commit()
	}
	return nil
}

// restoreExtra restores the canonical table ct into an extra table of a
// bytes backend's operator.
func (t *KeyedTables) restoreExtra(tbl ObjectTable, kg int, ct canonicalTable) error {
	c, ok := tbl.(CanonicalTable)
	if !ok {
		return fmt.Errorf("restoring state %q: a %s cannot restore from a savepoint's canonical format", ct.name, tbl.Kind())
	}
	if ct.kind != "" && tbl.Kind() != ct.kind {
		return fmt.Errorf("restoring state %q: %w", ct.name, incompatible(ct.name, ct.kind, tbl.Kind()))
	}
	return c.RestoreCanonical(kg, ct.entries)
}
