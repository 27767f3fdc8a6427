// Package hashlog is a hash-indexed log of key/value records: the store of
// the Pebble backend's value tables, where a point read or write is one
// lookup in an in-memory hash index and one access to a log record at a
// known offset, instead of a search through the levels of an LSM.
//
// # Layout
//
// Records are appended to segments: an active segment, a buffer in memory
// of Options.SegmentSize bytes (doubled, up to 8 times, when a log holds
// thousands of segments), and sealed segments, files named
// vlog-<seq>.seg in the log's directory (written once, never changed, read
// through a read-only mapping on Linux and with pread elsewhere). A record is
//
//	crc32c (4 bytes, LE, over the rest) | kind (1 byte) | key length (uvarint) | value length (uvarint) | key | value
//
// of kind set (the key's value) or kill (the key was deleted; the value is
// the sequence number (8 bytes LE) and offset (4 bytes LE) of the record
// the delete ended).
// The index holds, per key group (the first two bytes of every key, big
// endian), an open-addressing hash table of 8-byte slots: 20 bits of the
// key's hash, the segment (12 bits) and the offset of the record (32 bits).
// A lookup probes from the slot its hash selects, and reads the record of a
// slot whose hash bits match to compare the key. The index takes about 11
// bytes per key, counted by Memory with the active segment.
//
// A write appends a set record and points the key's slot at it; a delete
// appends a kill record and clears the slot. The bytes of set records no
// slot points at, and kill records, are garbage. While more than half of
// the sealed bytes are garbage, the oldest sealed segment is compacted: its
// live records are appended again and its file is removed. Compacting
// oldest first is what makes the log its own index: the segments in use are
// always the newest ones, so replaying them in order (later records win,
// a kill removes the record it names) gives the live entries, and a kill
// record, once its segment is the oldest, names a record already gone.
//
// # Checkpoints
//
// Checkpoint hard-links every sealed segment into a checkpoint directory,
// and the active segment as parts: files vlog-<seq>.<offset>.part, each
// holding the bytes appended since the checkpoint before, which give way to
// the segment's file once it is sealed. Segments and parts are immutable
// and named uniquely by the log instance, so an incremental checkpoint
// uploads only what was appended since the last one (new entries and
// compaction's copies), however often checkpoints come. Load rebuilds the
// index by replaying the segments and parts of a checkpoint, reading and
// checking every record.
//
// Concurrency: a Log is used on one goroutine.
package hashlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

const (
	// segMagic starts every segment file, followed by its 8-byte sequence
	// number (LE).
	segMagic = "EDDYVLG1"
	// segHeader is the size of a segment file's header; record offsets
	// start there, so no location is 0.
	segHeader = 16
	// maxSegments bounds the segments in use at once (12 bits of a slot).
	maxSegments = 1<<12 - 1
	// maxSegmentSize bounds Options.SegmentSize.
	maxSegmentSize = 1 << 30
	// kindSet and kindKill are the kinds of records.
	kindSet  = 0
	kindKill = 1
	// killValueLen is the length of a kill record's value.
	killValueLen = 12
	// DefaultSegmentSize is the segment size when Options.SegmentSize is 0.
	DefaultSegmentSize = 4 << 20
	// minSegmentSize bounds Options.SegmentSize from below.
	minSegmentSize = 64 << 10
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is wrapped by the errors that report a record, segment or index
// file whose bytes do not check.
var ErrCorrupt = errors.New("hashlog: corrupt")

// Options configures a Log.
type Options struct {
	// SegmentSize is the size of a segment in bytes: the active segment
	// buffered in memory, and the unit of compaction. 0 means
	// DefaultSegmentSize; it is clamped to [64 KiB, 1 GiB].
	SegmentSize int
	// OnMemory, if set, is called with the change in Memory each time it
	// changes (index tables grown or shrunk, active segment allocated).
	OnMemory func(delta int64)
}

// Log is a hash-indexed log of the key groups [KeyGroupStart, KeyGroupEnd)
// (see the package comment).
type Log struct {
	dir      string
	kgStart  int
	kgEnd    int
	segSize  int
	baseSize int // Options.SegmentSize, clamped
	onMemory func(int64)
	seed     maphash.Seed

	segs    []*segment // by segment index; 0 is never used, nil is free
	freeIdx []uint16
	active  *segment
	nextSeq uint64
	parts   []part // by key group - kgStart

	sealedCap  int64 // capacity of the sealed segments: max(size, segSize) each
	sealedLive int64 // live record bytes in sealed segments
	memory     int64
	noGC       int // > 0 while a Scan runs or a compaction runs
	closed     bool
	readOnly   bool
	scratch    []byte // record reads on systems without mappings
	// tail are the part files that hold the active segment's bytes up to
	// tailEnd, written by checkpoints (see Checkpoint).
	tail    []string
	tailEnd int
	hashes  []uint64
	sink    uint64 // keeps prefetch's loads
}

// Open returns an empty log for the key groups [kgStart, kgEnd) whose
// segments are files in dir, which must exist.
func Open(dir string, kgStart, kgEnd int, opts Options) (*Log, error) {
	if kgStart < 0 || kgEnd < kgStart || kgEnd > 1<<16 {
		return nil, fmt.Errorf("hashlog: key groups [%d,%d) out of range", kgStart, kgEnd)
	}
	size := opts.SegmentSize
	if size == 0 {
		size = DefaultSegmentSize
	}
	size = min(max(size, minSegmentSize), maxSegmentSize)
	l := &Log{
		dir: dir, kgStart: kgStart, kgEnd: kgEnd, segSize: size, baseSize: size, onMemory: opts.OnMemory,
		seed: maphash.MakeSeed(), segs: make([]*segment, 1), nextSeq: 1,
		parts: make([]part, kgEnd-kgStart),
	}
	return l, nil
}

// SetOptions replaces the log's options: new segments get the segment size
// of opts, and opts.OnMemory is called at once with the log's memory.
func (l *Log) SetOptions(opts Options) {
	size := opts.SegmentSize
	if size == 0 {
		size = DefaultSegmentSize
	}
	l.segSize = min(max(size, minSegmentSize), maxSegmentSize)
	l.baseSize = l.segSize
	l.recountCapacity()
	if a := l.active; a != nil && cap(a.data) != max(len(a.data), l.segSize) {
		// A buffer of the new size (values handed out before this call
		// may point into the old one, which is left to the garbage
		// collector).
		c := max(len(a.data), l.segSize)
		buf := make([]byte, len(a.data), c)
		copy(buf, a.data)
		l.memory += int64(c - cap(a.data))
		a.data = buf
	}
	l.onMemory = opts.OnMemory
	if l.onMemory != nil && l.memory != 0 {
		l.onMemory(l.memory)
	}
}

// SegmentSize returns the size of new segments: Options.SegmentSize,
// doubled each time the log holds growSegmentsAt segments.
func (l *Log) SegmentSize() int { return l.segSize }

// Memory returns the bytes the log holds in memory: its index tables and
// active segment.
func (l *Log) Memory() int64 { return l.memory }

func (l *Log) addMemory(d int64) {
	if d == 0 {
		return
	}
	l.memory += d
	if l.onMemory != nil {
		l.onMemory(d)
	}
}

// Len returns the number of keys in the log.
func (l *Log) Len() int {
	n := 0
	for i := range l.parts {
		n += l.parts[i].n
	}
	return n
}

// part returns the index of the key group of key, or an error if the key is
// shorter than a key group or its key group is not the log's.
func (l *Log) part(key []byte) (*part, error) {
	if len(key) < 2 {
		return nil, fmt.Errorf("hashlog: key %x has no key group", key)
	}
	kg := int(binary.BigEndian.Uint16(key))
	if kg < l.kgStart || kg >= l.kgEnd {
		return nil, fmt.Errorf("hashlog: key %x of key group %d is outside the log's key groups [%d,%d)", key, kg, l.kgStart, l.kgEnd)
	}
	return &l.parts[kg-l.kgStart], nil
}

func (l *Log) hash(key []byte) uint64 { return maphash.Bytes(l.seed, key) }

// record returns the key and value of the record at loc and its size in
// bytes, checking its checksum.
func (l *Log) record(loc uint64) (key, value []byte, size int, err error) {
	s, err := l.seg(loc)
	if err != nil {
		return nil, nil, 0, err
	}
	return s.record(locOff(loc), &l.scratch)
}

// raw returns the bytes of the record at loc and the lengths of its header
// and key, without checking its checksum.
func (l *Log) raw(loc uint64) (b []byte, hdr, kl int, err error) {
	s, err := l.seg(loc)
	if err != nil {
		return nil, 0, 0, err
	}
	return s.parse(locOff(loc), &l.scratch)
}

// rawKey returns the key of the record at loc, without checking its
// checksum.
func (l *Log) rawKey(loc uint64) ([]byte, error) {
	b, hdr, kl, err := l.raw(loc)
	if err != nil {
		return nil, err
	}
	return b[hdr : hdr+kl], nil
}

// mapped reports whether the record at loc is read in place (the active
// segment or a mapping), not into the read buffer.
func (l *Log) mapped(loc uint64) bool {
	s, err := l.seg(loc)
	return err == nil && s.data != nil
}

func (l *Log) seg(loc uint64) (*segment, error) {
	si := locSeg(loc)
	if int(si) >= len(l.segs) || l.segs[si] == nil {
		return nil, fmt.Errorf("%w: location %x names segment %d, which the log does not hold", ErrCorrupt, loc, si)
	}
	return l.segs[si], nil
}

// Get returns the value of key, or ok=false. The value is valid until the
// next call that changes the log (Set, Delete, DeletePrefix, Checkpoint).
func (l *Log) Get(key []byte) (value []byte, ok bool, err error) {
	if l.closed {
		return nil, false, errors.New("hashlog: read from a closed log")
	}
	p, err := l.part(key)
	if err != nil {
		return nil, false, err
	}
	h := l.hash(key)
	i, _, _, err := l.find(p, h, key)
	if err != nil || i < 0 {
		return nil, false, err
	}
	_, v, _, err := l.record(slotLoc(p.slots[i]))
	if err != nil {
		return nil, false, err
	}
	if !l.mapped(slotLoc(p.slots[i])) {
		v = bytes.Clone(v) // not in the read buffer, which the next read reuses
	}
	return v, true, nil
}

// find returns the slot of key in p (-1 if none) and the size of its
// record, and where a new entry of key would go. It compares keys without
// checking the records' checksums: reads of values check them.
func (l *Log) find(p *part, h uint64, key []byte) (at, free, size int, err error) {
	free = -1
	if p.slots == nil {
		return -1, -1, 0, nil
	}
	tag := h >> (64 - tagBits)
	for i := p.home(h); ; i = p.next(i) {
		s := p.slots[i]
		switch {
		case s == slotEmpty:
			if free < 0 {
				free = i
			}
			return -1, free, 0, nil
		case s == slotDeleted:
			if free < 0 {
				free = i
			}
		case slotTag(s) == tag:
			b, hdr, kl, err := l.raw(slotLoc(s))
			if err != nil {
				return -1, -1, 0, err
			}
			if bytes.Equal(b[hdr:hdr+kl], key) {
				return i, free, len(b), nil
			}
			// Another key with the same hash bits, or a damaged key:
			// tell them apart by the record's checksum (rarely taken).
			if _, _, _, err := l.record(slotLoc(s)); err != nil {
				return -1, -1, 0, err
			}
		}
	}
}

// Set stores value under key.
func (l *Log) Set(key, value []byte) error {
	return l.set(key, value, l.hash(key))
}

// set is Set with the key's hash h.
func (l *Log) set(key, value []byte, h uint64) error {
	if err := l.writable(); err != nil {
		return err
	}
	p, err := l.part(key)
	if err != nil {
		return err
	}
	at, free, old, err := l.find(p, h, key)
	if err != nil {
		return err
	}
	loc, size, err := l.append(kindSet, key, value)
	if err != nil {
		return err
	}
	if err := l.point(p, h, key, at, free, old, loc); err != nil {
		return err
	}
	l.segs[locSeg(loc)].live += int64(size)
	return l.maybeCompact()
}

// point makes the record at loc the entry of key, of hash h, in p: in slot
// at, whose record of old bytes it replaces, or, if at < 0, in a new slot
// (free, or another after the table grows).
func (l *Log) point(p *part, h uint64, key []byte, at, free, old int, loc uint64) error {
	if at >= 0 {
		l.unlive(slotLoc(p.slots[at]), old)
		p.slots[at] = makeSlot(h, loc)
		return nil
	}
	if free < 0 || p.needsGrow() {
		if err := l.grow(p); err != nil {
			return err
		}
		_, free, _, _ = l.find(p, h, key) // no match: the key is new
	}
	if p.slots[free] == slotDeleted {
		p.tombs--
	}
	p.slots[free] = makeSlot(h, loc)
	p.n++
	return nil
}

// drop empties slot i of p, whose record of size bytes becomes garbage.
func (l *Log) drop(p *part, i, size int) {
	l.unlive(slotLoc(p.slots[i]), size)
	p.slots[i] = slotDeleted
	p.n--
	p.tombs++
}

// writable returns an error if the log is read-only or closed.
func (l *Log) writable() error {
	if l.readOnly {
		return errors.New("hashlog: write to a read-only log")
	}
	if l.closed {
		return errors.New("hashlog: write to a closed log")
	}
	return nil
}

// Delete removes key, if present.
func (l *Log) Delete(key []byte) error {
	if err := l.writable(); err != nil {
		return err
	}
	p, err := l.part(key)
	if err != nil {
		return err
	}
	at, _, size, err := l.find(p, l.hash(key), key)
	if err != nil || at < 0 {
		return err
	}
	if err := l.clear(p, at, key, size); err != nil {
		return err
	}
	return l.maybeCompact()
}

// clear removes the entry of key in slot i of p, whose record has size
// bytes, appending a kill record that names the record.
func (l *Log) clear(p *part, i int, key []byte, size int) error {
	loc := slotLoc(p.slots[i])
	var v [killValueLen]byte
	binary.LittleEndian.PutUint64(v[:], l.segs[locSeg(loc)].seq)
	binary.LittleEndian.PutUint32(v[8:], locOff(loc))
	if _, _, err := l.append(kindKill, key, v[:]); err != nil {
		return err
	}
	l.drop(p, i, size)
	return nil
}

// unlive counts the record at loc, of size bytes, as garbage.
func (l *Log) unlive(loc uint64, size int) {
	s := l.segs[locSeg(loc)]
	s.live -= int64(size)
	if s.sealed {
		l.sealedLive -= int64(size)
	}
}

// DeletePrefix removes every key that starts with prefix.
func (l *Log) DeletePrefix(prefix []byte) error {
	if err := l.writable(); err != nil {
		return err
	}
	lo, hi := l.partRange(prefix)
	for kg := lo; kg < hi; kg++ {
		p := &l.parts[kg-l.kgStart]
		for i, s := range p.slots {
			if s <= slotDeleted {
				continue
			}
			b, hdr, kl, err := l.raw(slotLoc(s))
			if err != nil {
				return err
			}
			k := b[hdr : hdr+kl]
			if len(prefix) > 2 && !bytes.HasPrefix(k, prefix) {
				continue
			}
			if !l.mapped(slotLoc(s)) {
				k = bytes.Clone(k) // the read buffer is reused
			}
			if err := l.clear(p, i, k, len(b)); err != nil {
				return err
			}
		}
		if p.n == 0 {
			l.addMemory(-p.bytes())
			*p = part{}
		}
	}
	return l.maybeCompact()
}

// partRange returns the key groups [lo, hi) that keys starting with prefix
// may belong to.
func (l *Log) partRange(prefix []byte) (lo, hi int) {
	switch len(prefix) {
	case 0:
		return l.kgStart, l.kgEnd
	case 1:
		lo, hi = int(prefix[0])<<8, int(prefix[0]+1)<<8
		if prefix[0] == 0xFF {
			hi = 1 << 16
		}
	default:
		lo = int(binary.BigEndian.Uint16(prefix))
		hi = lo + 1
	}
	return max(lo, l.kgStart), max(min(hi, l.kgEnd), max(lo, l.kgStart))
}

// Scan calls fn for each key starting with prefix, in key order, until fn
// returns false. It visits the entries present when it starts: fn may Get
// any key and Set or Delete the key it is given, and entries it adds are not
// visited. The slices are valid only during the call.
func (l *Log) Scan(prefix []byte, fn func(key, value []byte) bool) error {
	l.noGC++
	defer func() { l.noGC-- }()
	lo, hi := l.partRange(prefix)
	var locs []uint64
	for kg := lo; kg < hi; kg++ {
		p := &l.parts[kg-l.kgStart]
		locs = locs[:0]
		for _, s := range p.slots {
			if s <= slotDeleted {
				continue
			}
			loc := slotLoc(s)
			if len(prefix) > 2 {
				k, err := l.rawKey(loc)
				if err != nil {
					return err
				}
				if !bytes.HasPrefix(k, prefix) {
					continue
				}
			}
			locs = append(locs, loc)
		}
		var sortErr error
		keyOf := func(loc uint64) []byte {
			k, err := l.rawKey(loc)
			if err != nil && sortErr == nil {
				sortErr = err
			}
			return k
		}
		if l.segsMapped() {
			sort.Slice(locs, func(i, j int) bool { return bytes.Compare(keyOf(locs[i]), keyOf(locs[j])) < 0 })
		} else {
			// Without mappings a record read reuses one buffer: sort
			// copies of the keys.
			keys := make([][]byte, len(locs))
			for i, loc := range locs {
				keys[i] = bytes.Clone(keyOf(loc))
			}
			idx := make([]int, len(locs))
			for i := range idx {
				idx[i] = i
			}
			sort.Slice(idx, func(i, j int) bool { return bytes.Compare(keys[idx[i]], keys[idx[j]]) < 0 })
			sorted := make([]uint64, len(locs))
			for i, j := range idx {
				sorted[i] = locs[j]
			}
			locs = sorted
		}
		if sortErr != nil {
			return sortErr
		}
		for _, loc := range locs {
			k, v, _, err := l.record(loc)
			if err != nil {
				return err
			}
			if !l.mapped(loc) {
				// fn may read the log, which reuses the read buffer.
				k, v = bytes.Clone(k), bytes.Clone(v)
			}
			if !fn(k, v) {
				return nil
			}
		}
	}
	return nil
}

// segsMapped reports whether sealed segments are read through mappings, so
// that records of different segments can be held at once.
func (l *Log) segsMapped() bool {
	for _, s := range l.segs {
		if s != nil && s.data == nil {
			return false
		}
	}
	return true
}

// append appends a record of kind, key and value to the active segment,
// sealing it first if the record does not fit, and returns the record's
// location and size.
func (l *Log) append(kind byte, key, value []byte) (loc uint64, size int, err error) {
	size = 5 + uvarintLen(uint64(len(key))) + uvarintLen(uint64(len(value))) + len(key) + len(value)
	if l.active != nil && len(l.active.data)+size > l.room(size) {
		if err := l.seal(); err != nil {
			return 0, 0, err
		}
	}
	if l.active == nil {
		if err := l.newActive(size); err != nil {
			return 0, 0, err
		}
	}
	s := l.active
	off := len(s.data)
	if off+size > 1<<32-1 {
		return 0, 0, fmt.Errorf("hashlog: segment %d exceeds 4 GiB", s.seq)
	}
	b := append(s.data[:off+4], kind)
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = binary.AppendUvarint(b, uint64(len(value)))
	b = append(b, key...)
	b = append(b, value...)
	binary.LittleEndian.PutUint32(b[off:], crc32.Checksum(b[off+4:], castagnoli))
	s.data = b
	return makeLoc(s.idx, uint32(off)), size, nil
}

// room returns the bytes the active segment may hold with a record of size
// bytes: its buffer's capacity (allocated for the segment size of its
// time), or the record alone in a segment.
func (l *Log) room(size int) int {
	return max(cap(l.active.data), segHeader+size)
}

// appendRaw appends a copy of the record rec (checksum included) and
// returns its location.
func (l *Log) appendRaw(rec []byte) (uint64, error) {
	size := len(rec)
	if l.active != nil && len(l.active.data)+size > l.room(size) {
		if err := l.seal(); err != nil {
			return 0, err
		}
	}
	if l.active == nil {
		if err := l.newActive(size); err != nil {
			return 0, err
		}
	}
	s := l.active
	off := len(s.data)
	if off+size > 1<<32-1 {
		return 0, fmt.Errorf("hashlog: segment %d exceeds 4 GiB", s.seq)
	}
	s.data = append(s.data, rec...)
	return makeLoc(s.idx, uint32(off)), nil
}

// recountCapacity sets sealedCap for the segment size in use.
func (l *Log) recountCapacity() {
	l.sealedCap = 0
	for _, s := range l.segs {
		if s != nil && s.sealed {
			l.sealedCap += s.capacity(l.segSize)
		}
	}
}

// growSegmentsAt is the number of segments in use from which new segments
// are twice as large, up to maxGrowth times Options.SegmentSize: a log far
// larger than its segment size keeps a bounded number of files and
// mappings, at the cost of a larger active segment in memory.
const (
	growSegmentsAt = 2048
	maxGrowth      = 8
)

// newActive starts an active segment with room for a record of size bytes.
func (l *Log) newActive(size int) error {
	if len(l.segs)-1-len(l.freeIdx) >= growSegmentsAt && l.segSize < min(maxSegmentSize, maxGrowth*l.baseSize) {
		l.segSize *= 2
		l.recountCapacity()
	}
	idx, err := l.allocIdx()
	if err != nil {
		return err
	}
	c := max(l.segSize, segHeader+size)
	s := &segment{seq: l.nextSeq, idx: idx, data: make([]byte, segHeader, c)}
	l.nextSeq++
	copy(s.data, segMagic)
	binary.LittleEndian.PutUint64(s.data[8:], s.seq)
	l.segs[idx] = s
	l.active = s
	l.addMemory(int64(c))
	return nil
}

// allocIdx returns a free segment index.
func (l *Log) allocIdx() (uint16, error) {
	if n := len(l.freeIdx); n > 0 {
		i := l.freeIdx[n-1]
		l.freeIdx = l.freeIdx[:n-1]
		return i, nil
	}
	if len(l.segs) > maxSegments {
		return 0, fmt.Errorf("hashlog: %s: more than %d segments of up to %d bytes in use: the state is too large for the segment size; give the job a larger memory budget (segments are sized from it) or more parallelism", l.dir, maxSegments, l.segSize)
	}
	l.segs = append(l.segs, nil)
	return uint16(len(l.segs) - 1), nil
}

// seal writes the active segment to its file and maps it. The buffer is
// left to the garbage collector, not reused: values returned by Get and
// passed to Scan's fn may point into it.
func (l *Log) seal() error {
	s := l.active
	if s == nil {
		return nil
	}
	path := filepath.Join(l.dir, segName(s.seq))
	if err := os.WriteFile(path, s.data, 0o644); err != nil {
		return fmt.Errorf("hashlog: seal segment: %w", err)
	}
	buf := cap(s.data)
	sealed, err := openSegment(path, s.seq, s.idx)
	if err != nil {
		return err
	}
	sealed.live = s.live
	l.segs[s.idx] = sealed
	l.active = nil
	if !l.readOnly {
		for _, name := range l.tail {
			if err := os.Remove(filepath.Join(l.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("hashlog: seal segment: %w", err)
			}
		}
	}
	l.tail, l.tailEnd = nil, 0
	l.sealedCap += sealed.capacity(l.segSize)
	l.sealedLive += sealed.live
	l.addMemory(-int64(buf))
	return nil
}

// maybeCompact compacts the oldest sealed segment while more than half of
// the sealed capacity is garbage. One pass compacts only segments older than
// itself, so it ends even when the copies seal as sparse as what they
// replace.
func (l *Log) maybeCompact() error {
	if l.noGC > 0 {
		return nil
	}
	limit := l.nextSeq
	for l.sealedCap > 2*int64(l.segSize) && 2*l.sealedLive < l.sealedCap {
		var victim *segment
		for _, s := range l.segs {
			if s != nil && s.sealed && (victim == nil || s.seq < victim.seq) {
				victim = s
			}
		}
		if victim == nil || victim.seq >= limit {
			return nil
		}
		if err := l.compact(victim); err != nil {
			return err
		}
	}
	return nil
}

// compact appends the live records of the sealed segment s, the oldest,
// again and removes s. Its kill records name records of older segments,
// which are gone: they are dropped.
func (l *Log) compact(s *segment) error {
	l.noGC++
	defer func() { l.noGC-- }()
	off := uint32(segHeader)
	ahead := off // records before ahead have been prefetched
	var keys [][]byte
	for s.live > 0 && int(off) < s.size() {
		if off >= ahead && s.data != nil {
			// Touch the slots of the next records' keys together.
			keys = keys[:0]
			for len(keys) < 32 && int(ahead) < s.size() {
				rec, hdr, kl, err := s.parse(ahead, &l.scratch)
				if err != nil {
					break // reported below
				}
				keys = append(keys, rec[hdr:hdr+kl])
				ahead += uint32(len(rec))
			}
			l.prefetch(keys)
		}
		loc := makeLoc(s.idx, off)
		rec, hdr, kl, err := s.parse(off, &l.scratch)
		if err != nil {
			return err
		}
		size := len(rec)
		off += uint32(size)
		if s.data == nil {
			// The record is in the scratch buffer, which the next record
			// read reuses.
			rec = bytes.Clone(rec)
		}
		if rec[4] == kindKill {
			continue
		}
		k := rec[hdr : hdr+kl]
		if len(k) < 2 {
			return fmt.Errorf("%w: segment %s: a record at offset %d has a key of %d bytes", ErrCorrupt, segName(s.seq), loc&(1<<32-1), len(k))
		}
		p, err := l.part(k)
		if err != nil {
			continue // a key group the log dropped when it was loaded
		}
		h := l.hash(k)
		at, _, _, err := l.find(p, h, k)
		if err != nil {
			return err
		}
		if at < 0 || slotLoc(p.slots[at]) != loc {
			continue // garbage
		}
		// The record moves as it is, checksum included: a damaged one
		// still fails when its value is read.
		nloc, err := l.appendRaw(rec)
		if err != nil {
			return err
		}
		p.slots[at] = makeSlot(h, nloc)
		s.live -= int64(size)
		l.sealedLive -= int64(size)
		l.segs[locSeg(nloc)].live += int64(size)
	}
	if s.live != 0 {
		return fmt.Errorf("%w: segment %s: %d live bytes not found in it", ErrCorrupt, segName(s.seq), s.live)
	}
	return l.dropSegment(s)
}

// dropSegment unmaps the sealed segment s, which holds no live record, and
// removes its file.
func (l *Log) dropSegment(s *segment) error {
	l.sealedCap -= s.capacity(l.segSize)
	l.sealedLive -= s.live
	l.segs[s.idx] = nil
	l.freeIdx = append(l.freeIdx, s.idx)
	err := s.close()
	if !l.readOnly {
		if rerr := os.Remove(filepath.Join(l.dir, segName(s.seq))); err == nil {
			err = rerr
		}
	}
	if err != nil {
		return fmt.Errorf("hashlog: drop segment: %w", err)
	}
	return nil
}

// grow makes p's table half as large again, or rebuilds it at its size if
// deleted slots take much of it.
func (l *Log) grow(p *part) error {
	size := 16
	if p.slots != nil {
		size = len(p.slots)
		// Live entries above 3/4 of the maximum load: grow.
		if 4*maxLoadDen*(p.n+1) > 3*maxLoadNum*size {
			size += size / 2
		}
	}
	return l.rebuild(p, size)
}

// rebuild moves p's entries to a table of size slots.
func (l *Log) rebuild(p *part, size int) error {
	old := p.slots
	oldBytes := p.bytes()
	p.slots = make([]uint64, size)
	p.tombs = 0
	for _, s := range old {
		if s <= slotDeleted {
			continue
		}
		h := slotTag(s) << locBits
		if size > 1<<tagBits {
			k, err := l.rawKey(slotLoc(s))
			if err != nil {
				return err
			}
			h = l.hash(k)
		}
		i := p.home(h)
		for p.slots[i] != slotEmpty {
			i = p.next(i)
		}
		p.slots[i] = s
	}
	l.addMemory(p.bytes() - oldBytes)
	return nil
}

// Close releases the mappings and files of the log. The files stay in the
// directory. Close is idempotent.
func (l *Log) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	var err error
	for i, s := range l.segs {
		if s != nil {
			if cerr := s.close(); err == nil {
				err = cerr
			}
			l.segs[i] = nil
		}
	}
	l.addMemory(-l.memory)
	return err
}

// segName names the file of segment seq.
func segName(seq uint64) string { return fmt.Sprintf("vlog-%06d.seg", seq) }

// partName names the part of the active segment seq that starts at offset
// from.
func partName(seq uint64, from int) string { return fmt.Sprintf("vlog-%06d.%d.part", seq, from) }

// IsLogFile reports whether name is a file of a log in its directory or a
// checkpoint: a segment or a part of one, immutable once written and named
// uniquely by the log that wrote it.
func IsLogFile(name string) bool {
	if _, _, ok := parseName(name); ok {
		return true
	}
	_, _, ok := parsePart(name)
	return ok
}

// parsePart returns the segment and offset of a part's file name.
func parsePart(name string) (seq uint64, from int, ok bool) {
	rest, found := strings.CutSuffix(name, ".part")
	if !found {
		return 0, 0, false
	}
	head, off, found := strings.Cut(rest, ".")
	if !found || len(off) == 0 || len(off) > 10 {
		return 0, 0, false
	}
	seq, ext, ok := parseName(head + ".seg")
	if !ok || ext != "seg" {
		return 0, 0, false
	}
	for _, c := range off {
		if c < '0' || c > '9' {
			return 0, 0, false
		}
		from = from*10 + int(c-'0')
	}
	if name != partName(seq, from) {
		return 0, 0, false
	}
	return seq, from, true
}

// parseName returns the sequence number and extension of a file name the
// log writes (extension "seg").
func parseName(name string) (seq uint64, ext string, ok bool) {
	rest, found := strings.CutPrefix(name, "vlog-")
	if !found {
		return 0, "", false
	}
	digits, ext, found := strings.Cut(rest, ".")
	if !found || ext != "seg" || len(digits) == 0 || len(digits) > 19 {
		return 0, "", false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, "", false
		}
		seq = seq*10 + uint64(c-'0')
	}
	// Only the names the log writes: no other padding, no segment 0.
	if seq == 0 || name != segName(seq) {
		return 0, "", false
	}
	return seq, ext, true
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// sortedSegs returns the segments in use, sealed and active, by sequence.
func (l *Log) sortedSegs() []*segment {
	var out []*segment
	for _, s := range l.segs {
		if s != nil {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b *segment) int {
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
	return out
}

// SetBatch stores values[i] under keys[i] for each i in order, as Set does.
// It first reads the index slots of all the keys and then the records they
// point at, so that the cache misses of a batch overlap instead of coming
// one after the other; the Sets then find them in the CPU cache.
func (l *Log) SetBatch(keys, values [][]byte) error {
	l.prefetch(keys)
	// Compaction waits for the end of the batch: it could unmap a segment
	// that a later value points into.
	l.noGC++
	for i := range keys {
		if err := l.set(keys[i], values[i], l.hashes[i]); err != nil {
			l.noGC--
			return err
		}
	}
	l.noGC--
	return l.maybeCompact()
}

// prefetch reads the home slots of keys, then the first bytes of the records
// their tags match, touching the memory the Sets of keys will read. Loads
// of different keys do not depend on each other, so the CPU issues them
// together.
func (l *Log) prefetch(keys [][]byte) {
	hs := l.hashes[:0]
	var sink uint64
	for _, k := range keys {
		h := l.hash(k)
		hs = append(hs, h)
		if p, err := l.part(k); err == nil && p.slots != nil {
			sink += p.slots[p.home(h)]
		}
	}
	for j, k := range keys {
		p, err := l.part(k)
		if err != nil || p.slots == nil {
			continue
		}
		h := hs[j]
		tag := h >> (64 - tagBits)
		for i, n := p.home(h), 0; n < 4; i, n = p.next(i), n+1 {
			s := p.slots[i]
			if s == slotEmpty {
				break
			}
			if s == slotDeleted || slotTag(s) != tag {
				continue
			}
			loc := slotLoc(s)
			if si := locSeg(loc); int(si) < len(l.segs) && l.segs[si] != nil {
				if d, off := l.segs[si].data, locOff(loc); int(off)+4 < len(d) {
					sink += uint64(d[off+4])
				}
			}
			break
		}
	}
	l.hashes = hs
	l.sink += sink
}
