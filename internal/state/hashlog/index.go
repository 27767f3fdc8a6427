package hashlog

import "math/bits"

// A slot of a key group's hash table: 0 is empty, 1 a deleted entry;
// otherwise the top tagBits bits are the top bits of the key's hash and the
// rest the record's location: the segment index (12 bits) and the offset in
// it (32 bits). Segment indexes start at 1, so an entry is never 0 or 1.
const (
	slotEmpty   = 0
	slotDeleted = 1
	tagBits     = 20
	locBits     = 64 - tagBits
)

func makeLoc(seg uint16, off uint32) uint64 { return uint64(seg)<<32 | uint64(off) }
func locSeg(loc uint64) uint16              { return uint16(loc >> 32) }
func locOff(loc uint64) uint32              { return uint32(loc) }

func makeSlot(h, loc uint64) uint64 { return h>>locBits<<locBits | loc }
func slotTag(s uint64) uint64       { return s >> locBits }
func slotLoc(s uint64) uint64       { return s & (1<<locBits - 1) }

// part is the hash table of one key group: linear probing from the slot
// that the key's hash maps to, scaled to the table's size (any size, so
// that tables grow by half). Tables of up to 2^tagBits slots map only the
// hash bits their slots keep, and are rebuilt from them; larger ones reread
// the keys.
type part struct {
	slots []uint64
	n     int // entries
	tombs int // deleted slots
}

// home returns the first slot to probe for hash h.
func (p *part) home(h uint64) int {
	if len(p.slots) <= 1<<tagBits {
		h = h >> locBits << locBits
	}
	hi, _ := bits.Mul64(h, uint64(len(p.slots)))
	return int(hi)
}

// next returns the slot after i.
func (p *part) next(i int) int {
	if i++; i == len(p.slots) {
		return 0
	}
	return i
}

// maxLoad is the share of a table's slots, deleted ones included, above which
// it grows: linear probing stays within a few cache lines per lookup.
const maxLoadNum, maxLoadDen = 4, 5

// needsGrow reports whether adding an entry would fill more than maxLoad of
// the table, deleted slots included.
func (p *part) needsGrow() bool { return maxLoadDen*(p.n+p.tombs+1) > maxLoadNum*len(p.slots) }

// bytes returns the memory of p's table.
func (p *part) bytes() int64 { return 8 * int64(len(p.slots)) }
