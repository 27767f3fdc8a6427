package ops

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
)

// tables returns the operator's object tables by name: the tables of an
// object backend, and the timer services.
func (k *keyedBase[K, T]) tables() (map[string]state.ObjectTable, error) {
	out := map[string]state.ObjectTable{}
	if ob, ok := k.backend.(state.ObjectBackend); ok {
		for _, name := range ob.Tables() {
			t, _ := ob.Table(name)
			out[name] = t
		}
	} else {
		return nil, fmt.Errorf("checkpointing keyed state of a %T backend is not supported", k.backend)
	}
	for name, t := range k.extra {
		out[name] = t
	}
	return out, nil
}

// registerExtra adds an object table that lives outside the backend (a timer
// service) to the operator's snapshots.
func (k *keyedBase[K, T]) registerExtra(name string, t state.ObjectTable) {
	if k.extra == nil {
		k.extra = map[string]state.ObjectTable{}
	}
	if _, dup := k.extra[name]; dup {
		panic(fmt.Sprintf("ops: table %q registered twice", name))
	}
	k.extra[name] = t
}

// SnapshotState encodes every table of every key group the operator owns:
// per key group, a sequence of (name, data) pairs.
func (k *keyedBase[K, T]) SnapshotState(int64) (*runtime.OperatorSnapshot, error) {
	tables, err := k.tables()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(tables))
	for name := range tables {
		names = append(names, name)
	}
	sort.Strings(names)
	snap := &runtime.OperatorSnapshot{KeyGroups: map[int][]byte{}}
	var data []byte
	for kg := k.kgs.Start; kg < k.kgs.End; kg++ {
		var buf []byte
		for _, name := range names {
			data = tables[name].AppendKeyGroup(data[:0], kg)
			buf = binary.AppendUvarint(buf, uint64(len(name)))
			buf = append(buf, name...)
			buf = binary.AppendUvarint(buf, uint64(len(data)))
			buf = append(buf, data...)
		}
		snap.KeyGroups[kg] = buf
	}
	return snap, nil
}

// restore loads the key groups of a restored state into the operator's
// tables, which must all be declared by now.
func (k *keyedBase[K, T]) restore(rs *runtime.RestoredState) error {
	if rs == nil {
		return nil
	}
	tables, err := k.tables()
	if err != nil {
		return err
	}
	for kg, b := range rs.KeyGroups {
		if !k.kgs.Contains(kg) {
			return fmt.Errorf("restored key group %d is outside this subtask's %v", kg, k.kgs)
		}
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
			t, ok := tables[name]
			if !ok {
				return fmt.Errorf("the checkpoint holds state %q that the operator does not declare; declare all state in Open, under the same names as the job that wrote the checkpoint", name)
			}
			if err := t.RestoreKeyGroup(kg, data); err != nil {
				return fmt.Errorf("restoring state %q, key group %d: %w", name, kg, err)
			}
		}
	}
	return nil
}
