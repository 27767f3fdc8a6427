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
)

// Checkpoint seals the active segment and hard-links every segment into dir
// (which must exist; a segment is copied where linking fails). It returns
// the names of the files it put in dir, sorted. The files do not change
// afterwards: later compactions remove the log's names, not dir's.
func (l *Log) Checkpoint(dir string) ([]string, error) {
	if err := l.writable(); err != nil {
		return nil, err
	}
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
	var names []string
	for _, s := range l.sortedSegs() {
		name := segName(s.seq)
		if err := linkOrCopy(s.path, filepath.Join(dir, name)); err != nil {
			return nil, fmt.Errorf("hashlog: checkpoint to %s: %w", dir, err)
		}
		names = append(names, name)
	}
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
	for _, e := range ents {
		if seq, ext, ok := parseName(e.Name()); ok && ext == "seg" {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	bySeq := make(map[uint64]uint16, len(seqs))
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
	l.recountCapacity()
	l.sealedLive = 0
	for _, s := range l.segs {
		if s != nil {
			l.sealedLive += s.live
		}
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
				l.unlive(slotLoc(p.slots[at]), old)
				p.slots[at] = slotDeleted
				p.n--
				p.tombs++
			}
			continue
		}
		if at >= 0 {
			l.unlive(slotLoc(p.slots[at]), old)
			p.slots[at] = makeSlot(h, loc)
		} else {
			if free < 0 || p.needsGrow() {
				if err := l.grow(p); err != nil {
					return err
				}
				_, free, _, _ = l.find(p, h, k)
			}
			if p.slots[free] == slotDeleted {
				p.tombs--
			}
			p.slots[free] = makeSlot(h, loc)
			p.n++
		}
		s.live += int64(len(rec))
	}
	return nil
}
