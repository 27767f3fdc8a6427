package ops

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/eddystream/eddy/internal/checkpoint"
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
	} else if bb, ok := k.backend.(tableBytesBackend); ok {
		out[bytesTablesName] = &bytesTables{b: bb}
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

// bytesTablesName is the name under which a bytes backend's tables appear in
// a key group's snapshot.
const bytesTablesName = "\x00bytes"

// tableBytesBackend is a bytes backend that can list its tables.
type tableBytesBackend interface {
	state.BytesBackend
	TableIDs() map[string]uint32
}

// bytesTables snapshots the key groups of a bytes backend (such as Pebble)
// as one pseudo-table: for each table, its name and its entries with the
// key group and table id cut off, so that a restore into a backend that
// numbered the tables otherwise puts them back under its own ids. It is a
// full (not incremental) snapshot of the key group.
type bytesTables struct {
	b tableBytesBackend
}

func (t *bytesTables) Kind() string { return "bytes-tables" }
func (t *bytesTables) Len() int     { return 0 }

func (t *bytesTables) DropKeyGroup(kg int) { t.b.DeletePrefix([]byte{byte(kg >> 8), byte(kg)}) }

func tablePrefix(kg int, id uint32) []byte {
	return []byte{byte(kg >> 8), byte(kg), byte(id >> 24), byte(id >> 16), byte(id >> 8), byte(id)}
}

func (t *bytesTables) AppendKeyGroup(dst []byte, kg int) []byte {
	ids := t.b.TableIDs()
	names := make([]string, 0, len(ids))
	for name := range ids {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		prefix := tablePrefix(kg, ids[name])
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
		prefix := tablePrefix(kg, id)
		for i := uint64(0); i < count; i++ {
			k, err := next()
			if err != nil {
				return err
			}
			v, err := next()
			if err != nil {
				return err
			}
			t.b.Set(append(append([]byte(nil), prefix...), k...), v)
		}
	}
	return nil
}

// SnapshotStateAsync freezes the operator's tables copy-on-write, on the
// subtask's goroutine, and returns the function that encodes the frozen key
// groups on another goroutine while the subtask processes on. Tables that
// cannot freeze (a bytes backend's) are encoded here and now.
//
// A backend that snapshots natively (incrementalBackend: Pebble) does so for
// checkpoints, when the job has checkpoint storage; savepoints encode every
// key group in the canonical format, so that they are self-contained and
// portable.
func (k *keyedBase[K, T]) SnapshotStateAsync(id int64) (func() (*runtime.OperatorSnapshot, error), error) {
	tables, err := k.tables()
	if err != nil {
		return nil, err
	}
	var native func() (*checkpoint.BackendState, error)
	if ib, ok := k.backend.(incrementalBackend); ok && k.ctx.Shared != nil && !k.ctx.IsSavepoint(id) {
		delete(tables, bytesTablesName)
		if native, err = ib.Snapshot(id, k.ctx.Shared, sharedPrefix(k.ctx.Operator)); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, len(tables))
	for name := range tables {
		names = append(names, name)
	}
	sort.Strings(names)
	encoders := make([]func(dst []byte, kg int) []byte, len(names))
	var releases []func()
	sync := map[int][]byte{} // per key group, the part encoded now
	for i, name := range names {
		if a, ok := tables[name].(state.AsyncSnapshotter); ok {
			enc, rel := a.BeginSnapshot()
			encoders[i] = enc
			releases = append(releases, rel)
		}
	}
	// Tables without copy-on-write are encoded synchronously.
	var data []byte
	for kg := k.kgs.Start; kg < k.kgs.End; kg++ {
		var buf []byte
		for i, name := range names {
			if encoders[i] != nil {
				continue
			}
			data = tables[name].AppendKeyGroup(data[:0], kg)
			buf = appendSection(buf, name, data)
		}
		sync[kg] = buf
	}
	kgs := k.kgs
	return func() (*runtime.OperatorSnapshot, error) {
		defer func() {
			for _, rel := range releases {
				rel()
			}
		}()
		snap := &runtime.OperatorSnapshot{KeyGroups: map[int][]byte{}}
		if native != nil {
			bs, err := native()
			if err != nil {
				return nil, err
			}
			snap.Backends = []*checkpoint.BackendState{bs}
		}
		var data []byte
		for kg := kgs.Start; kg < kgs.End; kg++ {
			buf := sync[kg]
			for i, name := range names {
				if encoders[i] == nil {
					continue
				}
				data = encoders[i](data[:0], kg)
				buf = appendSection(buf, name, data)
			}
			snap.KeyGroups[kg] = buf
		}
		return snap, nil
	}, nil
}

// appendSection appends one (name, data) pair of a key group's snapshot.
func appendSection(buf []byte, name string, data []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(name)))
	buf = append(buf, name...)
	buf = binary.AppendUvarint(buf, uint64(len(data)))
	return append(buf, data...)
}

// incrementalBackend is a keyed state backend that snapshots in its own
// format, sharing files across checkpoints (the Pebble backend).
type incrementalBackend interface {
	Snapshot(id int64, shared checkpoint.SharedStorage, keyPrefix string) (func() (*checkpoint.BackendState, error), error)
	CheckpointComplete(id int64)
}

// NotifyCheckpointComplete tells an incremental backend that checkpoint id
// completed, so that the next snapshot reuses its files.
func (k *keyedBase[K, T]) NotifyCheckpointComplete(id int64) error {
	if ib, ok := k.backend.(incrementalBackend); ok {
		ib.CheckpointComplete(id)
	}
	return nil
}

// sharedPrefix is the folder of an operator's shared files.
func sharedPrefix(operator string) string {
	return checkpoint.SharedDir + "/" + checkpoint.SafeName(operator)
}
