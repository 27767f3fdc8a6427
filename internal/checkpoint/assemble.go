package checkpoint

import (
	"fmt"
	"sort"
	"time"
)

// SubtaskState is the state of one operator subtask: keyed state per key
// group and named operator-state lists.
type SubtaskState struct {
	KeyGroups map[int][]byte
	Lists     map[string][][]byte
	// Backends are native snapshots of keyed state backends: the one the
	// subtask took, or on restore those of every former subtask whose key
	// groups overlap the subtask's.
	Backends []*BackendState
	// Finished marks, in a checkpoint, a subtask whose input had ended and
	// that had emitted everything: its state is what it held at the end. On
	// restore it marks a subtask that must not run again (see
	// Redistribute).
	Finished bool
	// Canonical marks, in a checkpoint, a subtask whose key-group sections
	// hold keyed state in the canonical format of internal/state (the
	// format of savepoints, and of the checkpoints of a bytes backend that
	// does not snapshot natively), which readers of format version 2 and
	// earlier do not know. It is not stored: it makes the checkpoint format
	// version 3.
	Canonical bool
}

// OperatorState is the state of every subtask of one operator, as the
// coordinator collects it.
type OperatorState struct {
	UID            string
	Name           string
	Parallelism    int
	MaxParallelism int
	// Subtasks is indexed by subtask; a nil entry has no state.
	Subtasks []*SubtaskState
}

// Assemble lays out the state of a checkpoint as state files and metadata.
func Assemble(job string, id int64, savepoint, final bool, ops []OperatorState) (*Metadata, map[string][]byte) {
	m := &Metadata{Version: 1, Job: job, ID: id, Savepoint: savepoint, Final: final, Time: time.Now().UTC()}
	files := map[string][]byte{}
	for oi, op := range ops {
		mo := Operator{UID: op.UID, Name: op.Name, Parallelism: op.Parallelism, MaxParallelism: op.MaxParallelism}
		for i, st := range op.Subtasks {
			if st == nil {
				continue
			}
			if len(st.KeyGroups) == 0 && len(st.Lists) == 0 && len(st.Backends) == 0 {
				if st.Finished {
					mo.Subtasks = append(mo.Subtasks, Subtask{Index: i, Finished: true})
				}
				continue
			}
			sub := Subtask{Index: i, File: fmt.Sprintf("op%03d-%s-%d.state", oi, SafeName(op.UID), i), Finished: st.Finished}
			var buf []byte
			kgs := make([]int, 0, len(st.KeyGroups))
			for kg := range st.KeyGroups {
				kgs = append(kgs, kg)
			}
			sort.Ints(kgs)
			for _, kg := range kgs {
				b := st.KeyGroups[kg]
				sub.KeyGroups = append(sub.KeyGroups, Section{KeyGroup: kg, Offset: int64(len(buf)), Length: int64(len(b))})
				buf = append(buf, b...)
				if st.Canonical && len(b) > 0 {
					// Version 2 readers would take the canonical section
					// for a table the operator does not declare.
					m.Version = max(m.Version, 3)
				}
			}
			names := make([]string, 0, len(st.Lists))
			for name := range st.Lists {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				l := List{Name: name}
				for _, item := range st.Lists[name] {
					l.Items = append(l.Items, Section{Offset: int64(len(buf)), Length: int64(len(item))})
					buf = append(buf, item...)
				}
				sub.Lists = append(sub.Lists, l)
			}
			for _, b := range st.Backends {
				mb := *b
				mb.Files = make([]BackendFile, len(b.Files))
				for j, f := range b.Files {
					if f.Shared == "" {
						f.Offset = int64(len(buf))
						buf = append(buf, f.Data...)
					}
					mb.Files[j] = f
				}
				sub.Backends = append(sub.Backends, mb)
				// Version 1 readers would ignore the files and restore
				// nothing.
				m.Version = max(m.Version, 2)
			}

			sub.Size, sub.CRC32C = int64(len(buf)), Checksum(buf)
			files[sub.File] = buf
			mo.Subtasks = append(mo.Subtasks, sub)
		}
		m.Operators = append(m.Operators, mo)
	}
	return m, files
}

// SafeName returns s with the characters that are not safe in a file name
// replaced by '_', cut to 40 bytes.
func SafeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) > 40 {
		b = b[:40]
	}
	return string(b)
}

// Redistribute returns the state of subtask i of an operator now running
// with parallelism p and owning key groups [kgStart, kgEnd): the sections of
// exactly those key groups, whatever subtask held them before, and a
// round-robin share of each operator-state list (or all of it for the lists
// named in union); at an unchanged parallelism, the lists it had itself.
//
// Native backend snapshots are not divided: the state gets every one that
// holds a key group of [kgStart, kgEnd), with the data of its private files
// and the paths of its shared ones; the backend keeps its key groups.
//
// The state is Finished, meaning that the subtask must not run again, when
// every subtask of the operator had finished, or when the parallelism is
// unchanged and subtask i had finished. A partly finished operator restored
// with another parallelism runs again on every subtask, from the state its
// subtasks had (for a finished subtask, its state at the end).
func (l *Loaded) Redistribute(uid string, i, p, kgStart, kgEnd int, union map[string]bool) (*SubtaskState, error) {
	op, ok := l.Metadata.Operator(uid)
	if !ok {
		return nil, nil
	}
	st := &SubtaskState{KeyGroups: map[int][]byte{}, Lists: map[string][][]byte{}}
	finished := 0
	for _, sub := range op.Subtasks {
		if sub.Finished {
			finished++
			if sub.Index == i && p == op.Parallelism {
				st.Finished = true
			}
		}
	}
	if op.Parallelism > 0 && finished == op.Parallelism {
		st.Finished = true
	}
	all := map[string][][]byte{}
	// At an unchanged parallelism each subtask keeps its own lists, as in
	// Flink: a finished subtask does not run again, so the items of another
	// subtask dealt to it would be lost.
	own := map[string][][]byte{}
	var order []string
	for _, sub := range op.Subtasks {
		data := l.Files[sub.File]
		slice := func(s Section) ([]byte, error) {
			if s.Offset < 0 || s.Length < 0 || s.Offset+s.Length > int64(len(data)) {
				return nil, fmt.Errorf("%w: section [%d,+%d) outside state file %s of %d bytes", ErrCorrupt, s.Offset, s.Length, sub.File, len(data))
			}
			return data[s.Offset : s.Offset+s.Length], nil
		}
		for _, s := range sub.KeyGroups {
			if s.KeyGroup < kgStart || s.KeyGroup >= kgEnd {
				continue
			}
			b, err := slice(s)
			if err != nil {
				return nil, err
			}
			st.KeyGroups[s.KeyGroup] = b
		}
		for _, b := range sub.Backends {
			if !b.overlaps(kgStart, kgEnd) {
				continue
			}
			rb := b
			rb.Files = make([]BackendFile, len(b.Files))
			for j, f := range b.Files {
				if f.Shared != "" {
					f.Path = l.SharedPath(f.Shared)
				} else {
					data, err := slice(Section{Offset: f.Offset, Length: f.Size})
					if err != nil {
						return nil, err
					}
					f.Data = data
				}
				rb.Files[j] = f
			}
			st.Backends = append(st.Backends, &rb)
		}
		for _, list := range sub.Lists {
			if _, seen := all[list.Name]; !seen {
				order = append(order, list.Name)
			}
			for _, s := range list.Items {
				b, err := slice(s)
				if err != nil {
					return nil, err
				}
				all[list.Name] = append(all[list.Name], b)
				if sub.Index == i {
					own[list.Name] = append(own[list.Name], b)
				}
			}
			if all[list.Name] == nil {
				all[list.Name] = [][]byte{}
			}
		}
	}
	for _, name := range order {
		items := all[name]
		if union[name] {
			st.Lists[name] = items
			continue
		}
		if p == op.Parallelism {
			st.Lists[name] = append([][]byte{}, own[name]...)
			continue
		}
		share := [][]byte{}
		for j := i; j < len(items); j += p {
			share = append(share, items[j])
		}
		st.Lists[name] = share
	}
	return st, nil
}
