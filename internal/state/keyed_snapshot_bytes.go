package state

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// bytesTables snapshots the key groups of a bytes backend (such as Pebble)
// as one pseudo-table, the section BytesTablesSection: for each table with
// entries in the key group, in order of name,
//
//	uvarint len(name) | name | uvarint count | count × (uvarint len(key) | key | uvarint len(value) | value)
//
// with the key group and table id cut off the keys, so that a restore into a
// backend that numbered the tables otherwise puts them back under its own
// ids. It is a full (not incremental) snapshot of the key group.
type bytesTables struct {
	b TableLister
}

func (t *bytesTables) Kind() string { return "bytes-tables" }
func (t *bytesTables) Len() int     { return 0 }

func (t *bytesTables) DropKeyGroup(kg int) { t.b.DeletePrefix([]byte{byte(kg >> 8), byte(kg)}) }

func (t *bytesTables) AppendKeyGroup(dst []byte, kg int) []byte {
	ids := t.b.TableIDs()
	names := make([]string, 0, len(ids))
	for name := range ids {
		names = append(names, name)
	}
	sort.Strings(names)
	var prefix []byte
	for _, name := range names {
		prefix = appendTablePrefix(prefix[:0], kg, ids[name])
		var entries []byte
		n := 0
		t.b.Scan(prefix, func(key, value []byte) bool {
			entries = binary.AppendUvarint(entries, uint64(len(key)-len(prefix)))
			entries = append(entries, key[len(prefix):]...)
			entries = binary.AppendUvarint(entries, uint64(len(value)))
			entries = append(entries, value...)
			n++
			return true
		})
		if n == 0 {
			continue
		}
		dst = binary.AppendUvarint(dst, uint64(len(name)))
		dst = append(dst, name...)
		dst = binary.AppendUvarint(dst, uint64(n))
		dst = append(dst, entries...)
	}
	return dst
}

func (t *bytesTables) RestoreKeyGroup(kg int, data []byte) error {
	ids := t.b.TableIDs()
	next := func() ([]byte, error) {
		n, m := binary.Uvarint(data)
		if m <= 0 || uint64(len(data)-m) < n {
			return nil, fmt.Errorf("restored key group %d of a bytes backend is corrupt", kg)
		}
		b := data[m : m+int(n)]
		data = data[m+int(n):]
		return b, nil
	}
	var key []byte
	for len(data) > 0 {
		name, err := next()
		if err != nil {
			return err
		}
		id, ok := ids[string(name)]
		if !ok {
			return fmt.Errorf("the checkpoint holds state %q that the operator does not declare; declare all state in Open", name)
		}
		count, m := binary.Uvarint(data)
		if m <= 0 {
			return fmt.Errorf("restored key group %d of a bytes backend is corrupt", kg)
		}
		data = data[m:]
		for i := uint64(0); i < count; i++ {
			k, err := next()
			if err != nil {
				return err
			}
			v, err := next()
			if err != nil {
				return err
			}
			key = append(appendTablePrefix(key[:0], kg, id), k...)
			t.b.Set(key, v)
		}
	}
	return nil
}
