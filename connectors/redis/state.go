package redis

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// stateVersion starts every state and event the source encodes.
const stateVersion = 1

// Kinds of encoded state.
const (
	kindPlain = 1 // a split read with XREAD
	kindGroup = 2 // a split read through a consumer group: a consumer
	kindEnum  = 3 // the state of the group enumerator
)

// Flags of a group split.
const (
	flagFresh       = 1 << iota // assigned by the enumerator of this run, never snapshotted
	flagReadPending             // read the consumer's pending entries first
)

// Events between the group enumerator and its readers.
const (
	eventRestored = 'r' // reader → enumerator: the states of the splits restored to it
	eventGo       = 'g' // enumerator → reader: the group is ready; the floor and the ids to skip
	eventFloor    = 'f' // enumerator → reader: a new floor
)

var errCorrupt = errors.New("the state is corrupt or of another source")

// plainState is the state of a split read with XREAD: the id of the last
// entry emitted, and, for a bounded read, the last id to read.
type plainState struct {
	stream  string
	pos     entryID
	bounded bool
	end     entryID
}

// groupState is the state of a consumer: the floor (every entry up to it
// was consumed by the job, or is none of its business) and the ranges of
// entries after the floor that the consumer consumed.
type groupState struct {
	stream string
	flags  byte
	floor  entryID
	ranges rangeSet
}

// enumState is the state of the group enumerator: the group's floor, the
// ranges of entries after it consumed before the last restore, and the
// consumers.
type enumState struct {
	stream    string
	group     string
	floor     entryID
	skip      rangeSet
	consumers []string
}

type encoder struct{ b []byte }

func (e *encoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) id(id entryID) { e.uint(id.ms); e.uint(id.seq) }
func (e *encoder) byte(v byte)   { e.b = append(e.b, v) }
func (e *encoder) str(s string)  { e.uint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) ranges(s rangeSet) {
	e.uint(uint64(len(s)))
	for _, r := range s {
		e.id(r.lo)
		e.id(r.hi)
	}
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) id() entryID { return entryID{d.uint(), d.uint()} }

func (d *decoder) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.err = errCorrupt
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) str() string {
	n := d.uint()
	if d.err != nil || uint64(len(d.b)) < n {
		d.err = errCorrupt
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) ranges() rangeSet {
	n := d.uint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = errCorrupt
		return nil
	}
	out := make(rangeSet, 0, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		out = append(out, idRange{d.id(), d.id()})
	}
	return out
}

// header checks the version and kind that start b.
func (d *decoder) header(kind byte) {
	if d.byte() != stateVersion || d.byte() != kind {
		d.err = errCorrupt
	}
}

func (d *decoder) done() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = errCorrupt
	}
	return d.err
}

// stateKind returns the kind of an encoded state.
func stateKind(b []byte) byte {
	if len(b) < 2 || b[0] != stateVersion {
		return 0
	}
	return b[1]
}

func (s plainState) encode() []byte {
	e := &encoder{b: []byte{stateVersion, kindPlain}}
	e.str(s.stream)
	e.id(s.pos)
	if s.bounded {
		e.byte(1)
	} else {
		e.byte(0)
	}
	e.id(s.end)
	return e.b
}

func decodePlain(b []byte) (plainState, error) {
	d := &decoder{b: b}
	d.header(kindPlain)
	s := plainState{stream: d.str(), pos: d.id(), bounded: d.byte() == 1, end: d.id()}
	return s, d.done()
}

func (s groupState) encode() []byte {
	e := &encoder{b: []byte{stateVersion, kindGroup}}
	e.str(s.stream)
	e.byte(s.flags)
	e.id(s.floor)
	e.ranges(s.ranges)
	return e.b
}

func decodeGroup(b []byte) (groupState, error) {
	d := &decoder{b: b}
	d.header(kindGroup)
	s := groupState{stream: d.str(), flags: d.byte(), floor: d.id(), ranges: d.ranges()}
	return s, d.done()
}

func (s enumState) encode() []byte {
	e := &encoder{b: []byte{stateVersion, kindEnum}}
	e.str(s.stream)
	e.str(s.group)
	e.id(s.floor)
	e.ranges(s.skip)
	e.uint(uint64(len(s.consumers)))
	for _, c := range s.consumers {
		e.str(c)
	}
	return e.b
}

func decodeEnum(b []byte) (enumState, error) {
	d := &decoder{b: b}
	d.header(kindEnum)
	s := enumState{stream: d.str(), group: d.str(), floor: d.id(), skip: d.ranges()}
	n := d.uint()
	if n > uint64(len(d.b)) {
		return s, errCorrupt
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		s.consumers = append(s.consumers, d.str())
	}
	return s, d.done()
}

// goEvent is what the enumerator sends a reader once the group is ready.
type goEvent struct {
	floor entryID
	skip  rangeSet
	// autoAck says that the job takes no checkpoints: readers acknowledge
	// entries as soon as they have emitted them.
	autoAck bool
}

func (g goEvent) encode() []byte {
	e := &encoder{b: []byte{eventGo}}
	e.id(g.floor)
	e.ranges(g.skip)
	if g.autoAck {
		e.byte(1)
	} else {
		e.byte(0)
	}
	return e.b
}

func encodeFloor(f entryID) []byte {
	e := &encoder{b: []byte{eventFloor}}
	e.id(f)
	return e.b
}

// decodeEvent decodes an event of the enumerator.
func decodeEvent(b []byte) (kind byte, g goEvent, err error) {
	if len(b) == 0 {
		return 0, g, fmt.Errorf("an empty event")
	}
	d := &decoder{b: b[1:]}
	switch b[0] {
	case eventGo:
		g = goEvent{floor: d.id(), skip: d.ranges(), autoAck: d.byte() == 1}
	case eventFloor:
		g.floor = d.id()
	default:
		return 0, g, fmt.Errorf("an event of unknown kind %q", b[0])
	}
	return b[0], g, d.done()
}
