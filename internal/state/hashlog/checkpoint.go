package hashlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Checkpoint hard-links every sealed segment into dir (which must exist; a
// file is copied where linking fails), and the active segment as parts:
// it writes the bytes appended to the active segment since the last
// checkpoint to a part file, vlog-<seq>.<offset>.part, and links all the
// segment's parts. So a checkpoint writes and uploads only what changed,
// however often checkpoints come; when the active segment is sealed, its
// parts give way to the segment file. Checkpoint returns the names of the
// files it put in dir, sorted. The files do not change afterwards.
func (l *Log) Checkpoint(dir string) ([]string, error) {
	if err := l.writable(); err != nil {
		return nil, err
	}
	if a := l.active; a != nil && len(a.data) > max(l.tailEnd, segHeader) {
		name := partName(a.seq, l.tailEnd)
		if err := os.WriteFile(filepath.Join(l.dir, name), a.data[l.tailEnd:], 0o644); err != nil {
			return nil, fmt.Errorf("hashlog: checkpoint: %w", err)
		}
		l.tail = append(l.tail, name)
		l.tailEnd = len(a.data)
	}
	var names []string
	for _, s := range l.sortedSegs() {
		if s.sealed {
			names = append(names, segName(s.seq))
		}
	}
	names = append(names, l.tail...)
	for _, name := range names {
		if err := linkOrCopy(filepath.Join(l.dir, name), filepath.Join(dir, name)); err != nil {
			return nil, fmt.Errorf("hashlog: checkpoint to %s: %w", dir, err)
		}
	}
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

// Load opens the log whose segments (as Checkpoint left them) are in dir, as
// the log of the key groups [kgStart, kgEnd): it replays every segment in
// order, checking each record, and keeps the entries of those key groups.
// Load does not change dir, so a failed Load leaves the checkpoint as it
// was. A read-only log reads its files in place and never writes or removes
// any (it serves to copy entries out with Scan); a writable one takes over
// dir: it names new segments above every segment there, and its compactions
// remove segments it no longer needs.
func Load(dir string, kgStart, kgEnd int, opts Options, readOnly bool) (*Log, error) {
	l, err := Open(dir, kgStart, kgEnd, opts)
	if err != nil {
		return nil, err
	}
	l.readOnly = readOnly
	if err := l.load(); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

func (l *Log) load() error {
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("hashlog: %w", err)
	}
	var seqs []uint64
	parts := map[uint64][]int{} // the parts' offsets, by segment
	for _, e := range ents {
		if seq, ext, ok := parseName(e.Name()); ok && ext == "seg" {
			seqs = append(seqs, seq)
		} else if seq, from, ok := parsePart(e.Name()); ok {
			parts[seq] = append(parts[seq], from)
		}
	}
	slices.Sort(seqs)
	var tailSeq uint64 // 0: no parts (segments are numbered from 1)
	for seq := range parts {
		if len(seqs) > 0 && seq <= seqs[len(seqs)-1] || tailSeq != 0 {
			return fmt.Errorf("%w: %s holds parts of segment %d besides later or other segments: only the segment being written has parts", ErrCorrupt, l.dir, seq)
		}
		tailSeq = seq
	}
	bySeq := make(map[uint64]uint16, len(seqs)+1)
	for _, seq := range seqs {
		idx, err := l.allocIdx()
		if err != nil {
			return err
		}
		s, err := openSegment(filepath.Join(l.dir, segName(seq)), seq, idx)
		if err != nil {
			return err
		}
		l.segs[idx] = s
		bySeq[seq] = idx
		l.nextSeq = seq + 1
		if err := l.replay(s, bySeq); err != nil {
			return err
		}
	}
	if tailSeq != 0 {
		if err := l.loadTail(tailSeq, parts[tailSeq], bySeq); err != nil {
			return err
		}
	}
	l.recountCapacity()
	l.sealedLive = 0
	for _, s := range l.segs {
		if s != nil && s.sealed {
			l.sealedLive += s.live
		}
	}
	return nil
}

// loadTail makes the parts of segment seq, which start at the offsets
// froms, the active segment, and replays it.
func (l *Log) loadTail(seq uint64, froms []int, bySeq map[uint64]uint16) error {
	slices.Sort(froms)
	var data []byte
	for _, from := range froms {
		name := partName(seq, from)
		if from != len(data) {
			return fmt.Errorf("%w: part %s of %s does not follow the parts before it (which end at %d)", ErrCorrupt, name, l.dir, len(data))
		}
		b, err := os.ReadFile(filepath.Join(l.dir, name))
		if err != nil {
			return fmt.Errorf("hashlog: %w", err)
		}
		if len(b) == 0 {
			return fmt.Errorf("%w: part %s of %s is empty", ErrCorrupt, name, l.dir)
		}
		data = append(data, b...)
		l.tail = append(l.tail, name)
	}
	if len(data) < segHeader || string(data[:8]) != segMagic || binary.LittleEndian.Uint64(data[8:]) != seq {
		return fmt.Errorf("%w: the parts of segment %d in %s do not start with its header", ErrCorrupt, seq, l.dir)
	}
	idx, err := l.allocIdx()
	if err != nil {
		return err
	}
	c := max(len(data), l.segSize)
	buf := make([]byte, len(data), c)
	copy(buf, data)
	s := &segment{seq: seq, idx: idx, data: buf}
	l.segs[idx] = s
	l.active = s
	l.tailEnd = len(buf)
	bySeq[seq] = idx
	l.nextSeq = seq + 1
	l.addMemory(int64(c))
	if err := l.replay(s, bySeq); err != nil {
		return fmt.Errorf("the parts %s of %s (offsets are the segment's): %w", strings.Join(l.tail, ", "), l.dir, err)
	}
	return nil
}

// replay applies the records of the segment s, in order, to the index: a set
// record of the log's key groups becomes the key's entry, a kill record
// removes the entry if it is the record the kill names.
func (l *Log) replay(s *segment, bySeq map[uint64]uint16) error {
	for off := uint32(segHeader); int(off) < s.size(); {
		rec, hdr, kl, err := s.parse(off, &l.scratch)
		if err == nil {
			err = s.check(off, rec)
		}
		if err != nil {
			return err
		}
		if s.data == nil {
			// The record is in the read buffer, which find reuses.
			rec = bytes.Clone(rec)
		}
		loc := makeLoc(s.idx, off)
		off += uint32(len(rec))
		k := rec[hdr : hdr+kl]
		if len(k) < 2 {
			return s.corrupt(locOff(loc), "a key without a key group")
		}
		p, err := l.part(k)
		if err != nil {
			continue // a key group the log does not hold
		}
		h := l.hash(k)
		at, free, old, err := l.find(p, h, k)
		if err != nil {
			return err
		}
		if rec[4] == kindKill {
			v := rec[hdr+kl:]
			if len(v) != killValueLen {
				return s.corrupt(locOff(loc), "bad kill record")
			}
			if at < 0 {
				continue
			}
			idx, ok := bySeq[binary.LittleEndian.Uint64(v)]
			if ok && slotLoc(p.slots[at]) == makeLoc(idx, binary.LittleEndian.Uint32(v[8:])) {
				l.drop(p, at, old)
			}
			continue
		}
		if err := l.point(p, h, k, at, free, old, loc); err != nil {
			return err
		}
		s.live += int64(len(rec))
	}
	return nil
}
