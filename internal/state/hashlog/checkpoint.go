package hashlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// indexMagic starts an index file.
const indexMagic = "EDDYVIX1"

// Checkpoint seals the active segment, hard-links every segment into dir
// (which must exist; a segment is copied where linking fails) and writes the
// index there. It returns the names of the files it put in dir, sorted. The
// files do not change afterwards: later compactions remove the log's names,
// not dir's.
func (l *Log) Checkpoint(dir string) ([]string, error) {
	if a := l.active; a != nil {
		if len(a.data) == segHeader {
			l.segs[a.idx] = nil
			l.freeIdx = append(l.freeIdx, a.idx)
			l.active = nil
			l.addMemory(-int64(cap(a.data)))
		} else if err := l.seal(); err != nil {
			return nil, err
		}
	}
	segs := l.sortedSegs()
	pos := make(map[uint16]uint32, len(segs))
	var names []string
	for i, s := range segs {
		pos[s.idx] = uint32(i + 1)
		name := segName(s.seq)
		if err := linkOrCopy(s.path, filepath.Join(dir, name)); err != nil {
			return nil, fmt.Errorf("hashlog: checkpoint to %s: %w", dir, err)
		}
		names = append(names, name)
	}
	b := []byte(indexMagic)
	b = binary.LittleEndian.AppendUint32(b, uint32(l.kgStart))
	b = binary.LittleEndian.AppendUint32(b, uint32(l.kgEnd))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(segs)))
	for _, s := range segs {
		b = binary.LittleEndian.AppendUint64(b, s.seq)
	}
	for i := range l.parts {
		p := &l.parts[i]
		b = binary.LittleEndian.AppendUint32(b, uint32(p.n))
		for _, s := range p.slots {
			if s <= slotDeleted {
				continue
			}
			loc := slotLoc(s)
			b = binary.LittleEndian.AppendUint64(b, uint64(pos[locSeg(loc)])<<32|uint64(locOff(loc)))
		}
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	name := indexName(l.nextSeq)
	l.nextSeq++
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		return nil, fmt.Errorf("hashlog: checkpoint to %s: %w", dir, err)
	}
	names = append(names, name)
	slices.Sort(names)
	return names, nil
}

// linkOrCopy hard-links from to to, or copies it where the file system
// cannot link (another device). An existing to is an error, never
// overwritten: it may be a link to from.
func linkOrCopy(from, to string) error {
	err := os.Link(from, to)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// FindIndex returns the name of the index file in dir, or ok=false if dir
// holds none (state without a log). More than one is an error.
func FindIndex(dir string) (name string, ok bool, err error) {
	m, err := filepath.Glob(filepath.Join(dir, "vlog-*.idx"))
	if err != nil {
		return "", false, fmt.Errorf("hashlog: %w", err)
	}
	switch len(m) {
	case 0:
		return "", false, nil
	case 1:
		return filepath.Base(m[0]), true, nil
	}
	return "", false, fmt.Errorf("hashlog: %s holds %d index files, a checkpoint has one: download the checkpoint again", dir, len(m))
}

// Load opens the log whose index file index (as Checkpoint wrote it) and
// segments are in dir, as the log of the key groups [kgStart, kgEnd): the
// entries of other key groups are dropped. Every live record is read and
// checked. A read-only log reads its files in place and never writes or
// removes any (it serves to copy entries out with Scan); a writable one
// takes over dir: it removes the index file and the segments it does not
// need, and names new files above every name in the checkpoint.
func Load(dir, index string, kgStart, kgEnd int, opts Options, readOnly bool) (*Log, error) {
	l, err := Open(dir, kgStart, kgEnd, opts)
	if err != nil {
		return nil, err
	}
	l.readOnly = readOnly
	if err := l.load(index); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

func (l *Log) load(index string) error {
	path := filepath.Join(l.dir, index)
	seq, ext, ok := parseName(index)
	if !ok || ext != "idx" {
		return fmt.Errorf("hashlog: %s is not an index file name", index)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("hashlog: the checkpoint in %s has no index file %s: download every file of the checkpoint", l.dir, index)
		}
		return fmt.Errorf("hashlog: %w", err)
	}
	bad := func(what string) error {
		return fmt.Errorf("%w: index file %s: %s: download the checkpoint again, or restore from an earlier one", ErrCorrupt, path, what)
	}
	if len(b) < len(indexMagic)+16 || string(b[:len(indexMagic)]) != indexMagic {
		return bad("bad header")
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return bad("checksum mismatch")
	}
	r := body[len(indexMagic):]
	u32 := func() (uint32, bool) {
		if len(r) < 4 {
			return 0, false
		}
		v := binary.LittleEndian.Uint32(r)
		r = r[4:]
		return v, true
	}
	fileStart, ok1 := u32()
	fileEnd, ok2 := u32()
	nseg, ok3 := u32()
	if !ok1 || !ok2 || !ok3 || fileEnd < fileStart || uint64(len(r)) < 8*uint64(nseg) || nseg > maxSegments {
		return bad("bad header")
	}
	l.nextSeq = seq + 1
	byPos := make([]uint16, nseg+1)
	for i := range int(nseg) {
		sseq := binary.LittleEndian.Uint64(r)
		r = r[8:]
		if sseq >= seq {
			return bad(fmt.Sprintf("segment %d is not older than the index", sseq))
		}
		idx, err := l.allocIdx()
		if err != nil {
			return err
		}
		s, err := openSegment(filepath.Join(l.dir, segName(sseq)), sseq, idx)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("hashlog: the checkpoint in %s has no segment %s, which its index names: download every file of the checkpoint", l.dir, segName(sseq))
			}
			return err
		}
		l.segs[idx] = s
		byPos[i+1] = idx
	}
	for kg := int(fileStart); kg < int(fileEnd); kg++ {
		n, ok := u32()
		if !ok || uint64(len(r)) < 8*uint64(n) {
			return bad("truncated")
		}
		keep := kg >= l.kgStart && kg < l.kgEnd
		for range n {
			v := binary.LittleEndian.Uint64(r)
			r = r[8:]
			if !keep {
				continue
			}
			pos := v >> 32
			if pos == 0 || pos > uint64(nseg) {
				return bad(fmt.Sprintf("a location names segment %d of %d", pos, nseg))
			}
			loc := makeLoc(byPos[pos], uint32(v))
			if err := l.insertLoaded(kg, loc); err != nil {
				return err
			}
		}
	}
	if len(r) != 0 {
		return bad(fmt.Sprintf("%d trailing bytes", len(r)))
	}
	for _, s := range l.sortedSegs() {
		l.sealedCap += s.capacity(l.segSize)
		l.sealedLive += s.live
		if s.live == 0 {
			if err := l.dropSegment(s); err != nil {
				return err
			}
		}
	}
	if !l.readOnly {
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("hashlog: %w", err)
		}
	}
	return nil
}

// insertLoaded adds the record at loc, of key group kg, to the index.
func (l *Log) insertLoaded(kg int, loc uint64) error {
	k, _, size, err := l.record(loc)
	if err != nil {
		return err
	}
	p, err := l.part(k)
	if err != nil || p != &l.parts[kg-l.kgStart] {
		return fmt.Errorf("%w: the index lists the record at %s offset %d under key group %d, which it is not in", ErrCorrupt, segName(l.segs[locSeg(loc)].seq), locOff(loc), kg)
	}
	h := l.hash(k)
	at, free, _, err := l.find(p, h, k)
	if err != nil {
		return err
	}
	if at >= 0 {
		return fmt.Errorf("%w: the index lists key %x twice", ErrCorrupt, k)
	}
	if free < 0 || p.needsGrow() {
		if err := l.grow(p); err != nil {
			return err
		}
		_, free, _, _ = l.find(p, h, k)
	}
	p.slots[free] = makeSlot(h, loc)
	p.n++
	l.segs[locSeg(loc)].live += int64(size)
	return nil
}
