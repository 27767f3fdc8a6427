package hashlog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

// segment is a segment of the log: the active one, whose data is a buffer,
// or a sealed file, whose data is a read-only mapping (mapSegments) or read
// with pread from f.
type segment struct {
	seq    uint64
	idx    uint16
	data   []byte // the active buffer or the mapping; nil if read from f
	f      *os.File
	n      int   // size of the file, if sealed
	live   int64 // bytes of the records slots point at
	sealed bool
	path   string
}

// size returns the bytes of the segment, header included.
func (s *segment) size() int {
	if s.sealed {
		return s.n
	}
	return len(s.data)
}

// capacity returns the room the segment takes, for the garbage ratio: its
// size. (Segments are sealed full, or as full as their records allow;
// checkpoints write the active segment's new bytes as parts instead of
// sealing it.)
func (s *segment) capacity(int) int64 { return int64(s.size()) }

// record returns the key, value and size of the record at off, checking its
// checksum. Without a mapping the record is read into *scratch.
func (s *segment) record(off uint32, scratch *[]byte) (key, value []byte, size int, err error) {
	b, hdr, kl, err := s.parse(off, scratch)
	if err != nil {
		return nil, nil, 0, err
	}
	if err := s.check(off, b); err != nil {
		return nil, nil, 0, err
	}
	return b[hdr : hdr+kl : hdr+kl], b[hdr+kl:], len(b), nil
}

// check verifies the checksum of the record b at off.
func (s *segment) check(off uint32, b []byte) error {
	if crc32.Checksum(b[4:], castagnoli) != binary.LittleEndian.Uint32(b) {
		return s.corrupt(off, "checksum mismatch")
	}
	return nil
}

// parse returns the bytes of the record at off (len(b) is its size), the
// length of its header and of its key, without checking its checksum.
// Without a mapping the record is read into *scratch.
func (s *segment) parse(off uint32, scratch *[]byte) (b []byte, hdr, kl int, err error) {
	if s.data != nil {
		if int(off) >= len(s.data) || off < segHeader {
			return nil, 0, 0, s.corrupt(off, "offset out of range")
		}
		b = s.data[off:]
	} else {
		if int(off) >= s.n || off < segHeader {
			return nil, 0, 0, s.corrupt(off, "offset out of range")
		}
		n := min(s.n-int(off), 32)
		if cap(*scratch) < n {
			*scratch = make([]byte, n, 256)
		}
		b = (*scratch)[:n]
		if _, err := s.f.ReadAt(b, int64(off)); err != nil && err != io.EOF {
			return nil, 0, 0, fmt.Errorf("hashlog: read %s: %w", s.path, err)
		}
	}
	if len(b) < 7 {
		return nil, 0, 0, s.corrupt(off, "truncated record")
	}
	if b[4] > kindKill {
		return nil, 0, 0, s.corrupt(off, "bad record kind")
	}
	k, n1 := binary.Uvarint(b[5:])
	if n1 <= 0 {
		return nil, 0, 0, s.corrupt(off, "bad key length")
	}
	v, n2 := binary.Uvarint(b[5+n1:])
	if n2 <= 0 {
		return nil, 0, 0, s.corrupt(off, "bad value length")
	}
	hdr = 5 + n1 + n2
	total := uint64(hdr) + k + v
	if total > uint64(s.size()-int(off)) {
		return nil, 0, 0, s.corrupt(off, "record runs past the end of the segment")
	}
	size := int(total)
	if s.data == nil {
		if cap(*scratch) < size {
			*scratch = make([]byte, size)
		}
		b = (*scratch)[:size]
		if _, err := s.f.ReadAt(b, int64(off)); err != nil && err != io.EOF {
			return nil, 0, 0, fmt.Errorf("hashlog: read %s: %w", s.path, err)
		}
	}
	return b[:size:size], hdr, int(k), nil
}

func (s *segment) corrupt(off uint32, what string) error {
	name := s.path
	if name == "" {
		name = "active segment " + segName(s.seq)
	}
	return fmt.Errorf("%w: %s at offset %d: %s", ErrCorrupt, name, off, what)
}

// openSegment opens the sealed segment file at path, checks its header and
// maps it (or keeps it open for pread).
func openSegment(path string, seq uint64, idx uint16) (*segment, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hashlog: open segment: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("hashlog: open segment: %w", err)
	}
	s := &segment{seq: seq, idx: idx, n: int(st.Size()), sealed: true, path: path}
	var hdr [segHeader]byte
	if st.Size() < segHeader || st.Size() > 1<<32 {
		f.Close()
		return nil, fmt.Errorf("%w: segment %s has %d bytes", ErrCorrupt, path, st.Size())
	}
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("hashlog: open segment: %w", err)
	}
	if string(hdr[:8]) != segMagic || binary.LittleEndian.Uint64(hdr[8:]) != seq {
		f.Close()
		return nil, fmt.Errorf("%w: %s is not segment %d of a value log (bad header)", ErrCorrupt, filepath.Base(path), seq)
	}
	if m, ok := mapFile(f, s.n); ok {
		s.data = m
		f.Close()
		return s, nil
	}
	if mapSegments {
		mapFailed.Do(func() {
			slog.Warn("hashlog: a value log segment could not be memory-mapped and is read with pread, which is slower; if the process has many mappings, raise vm.max_map_count", "segment", path)
		})
	}
	s.f = f
	return s, nil
}

// mapFailed warns once per process that a segment is read without a
// mapping where mappings are the rule.
var mapFailed sync.Once

// close releases the segment's mapping or file.
func (s *segment) close() error {
	if !s.sealed {
		s.data = nil
		return nil
	}
	if s.f != nil {
		err := s.f.Close()
		s.f = nil
		return err
	}
	err := unmap(s.data)
	s.data = nil
	return err
}
