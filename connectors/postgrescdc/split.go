package postgrescdc

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/eddystream/eddy/connector"
)

// splitVersion starts the encoding of every split and of the enumerator's
// state.
const splitVersion = 1

const streamSplitID = "stream"

// chunk is a part of a table's snapshot: the rows whose chunk key is in
// [start, end), an absent bound being unbounded (a table read as one chunk
// has neither). Rows whose chunk key is NULL belong to the first chunk.
type chunk struct {
	table            string // schema.table
	index            int
	start, end       int64
	hasStart, hasEnd bool
	// snapshot is the exported snapshot the chunk is read in, and lsn its
	// consistent point: the chunk's rows are those of the transactions
	// that committed before lsn, and the stream skips the changes of the
	// chunk's rows in transactions whose commit is before it.
	snapshot string
	lsn      uint64
	// done is set once the chunk's rows are emitted.
	done bool
}

func (c *chunk) id() string { return fmt.Sprintf("chunk:%s:%d", c.table, c.index) }

// contains tells whether a chunk key value is in the chunk; ok is false
// for NULL, which belongs to the first chunk.
func (c *chunk) contains(k int64, ok bool) bool {
	if !ok {
		return !c.hasStart
	}
	return (!c.hasStart || k >= c.start) && (!c.hasEnd || k < c.end)
}

const (
	flagStart = 1 << iota
	flagEnd
	flagDone
)

func appendChunk(b []byte, c *chunk) []byte {
	b = appendString(b, c.table)
	b = binary.AppendUvarint(b, uint64(c.index))
	flags := uint64(0)
	if c.hasStart {
		flags |= flagStart
	}
	if c.hasEnd {
		flags |= flagEnd
	}
	if c.done {
		flags |= flagDone
	}
	b = binary.AppendUvarint(b, flags)
	b = binary.AppendVarint(b, c.start)
	b = binary.AppendVarint(b, c.end)
	b = appendString(b, c.snapshot)
	return binary.AppendUvarint(b, c.lsn)
}

func (d *decoder) chunk() *chunk {
	c := &chunk{table: d.string(), index: int(d.uvarint())}
	flags := d.uvarint()
	c.hasStart, c.hasEnd, c.done = flags&flagStart != 0, flags&flagEnd != 0, flags&flagDone != 0
	c.start, c.end = d.varint(), d.varint()
	c.snapshot = d.string()
	c.lsn = d.uvarint()
	return c
}

// streamSplit is the reading of the slot: the position of the transaction
// being read (its commit LSN) and the rows of it already emitted, and the
// finished snapshot chunks whose changes before their consistent points it
// skips.
type streamSplit struct {
	pos  uint64
	skip int
	// chunks are the snapshot's chunks, while the stream is before the
	// highest of their consistent points.
	chunks []*chunk
	// tables are, in a pipeline, the captured tables as they are at pos:
	// their columns change with the relations the stream holds.
	tables []*tableInfo
}

func encodeChunkSplit(c *chunk) connector.Split {
	b := []byte{splitVersion, 'c'}
	return connector.Split{ID: c.id(), State: appendChunk(b, c)}
}

// encodeStreamSplit encodes the stream split. Its chunks are kept by
// table, each with its bounds and its consistent point as a difference
// from the previous chunk's (0, one byte, for the chunks of one
// snapshot).
func encodeStreamSplit(s *streamSplit) connector.Split {
	b := []byte{splitVersion, 's'}
	b = binary.AppendUvarint(b, s.pos)
	b = binary.AppendUvarint(b, uint64(s.skip))
	byTable := map[string][]*chunk{}
	var names []string
	for _, c := range s.chunks {
		if byTable[c.table] == nil {
			names = append(names, c.table)
		}
		byTable[c.table] = append(byTable[c.table], c)
	}
	sort.Strings(names)
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, n := range names {
		cs := byTable[n]
		sortChunks(cs)
		b = appendString(b, n)
		b = binary.AppendUvarint(b, uint64(len(cs)))
		prev := uint64(0)
		for _, c := range cs {
			flags := uint64(0)
			if c.hasStart {
				flags |= flagStart
			}
			if c.hasEnd {
				flags |= flagEnd
			}
			b = binary.AppendUvarint(b, flags)
			if c.hasStart {
				b = binary.AppendVarint(b, c.start)
			}
			if c.hasEnd {
				b = binary.AppendVarint(b, c.end)
			}
			b = binary.AppendVarint(b, int64(c.lsn-prev))
			prev = c.lsn
		}
	}
	if len(s.tables) > 0 {
		b = binary.AppendUvarint(b, uint64(len(s.tables)))
		for _, t := range s.tables {
			b = appendTable(b, t)
		}
	}
	return connector.Split{ID: streamSplitID, State: b}
}

func (d *decoder) streamSplit() *streamSplit {
	s := &streamSplit{pos: d.uvarint(), skip: int(d.uvarint())}
	tables := d.uvarint()
	for i := uint64(0); i < tables && d.err == nil; i++ {
		name := d.string()
		n := d.uvarint()
		prev := uint64(0)
		for j := uint64(0); j < n && d.err == nil; j++ {
			c := &chunk{table: name, index: int(j), done: true}
			flags := d.uvarint()
			c.hasStart, c.hasEnd = flags&flagStart != 0, flags&flagEnd != 0
			if c.hasStart {
				c.start = d.varint()
			}
			if c.hasEnd {
				c.end = d.varint()
			}
			c.lsn = prev + uint64(d.varint())
			prev = c.lsn
			s.chunks = append(s.chunks, c)
		}
	}
	if len(d.b) > 0 {
		n := d.uvarint()
		for i := uint64(0); i < n && d.err == nil; i++ {
			s.tables = append(s.tables, d.table())
		}
	}
	return s
}

// appendTable encodes a pipeline's table as the server describes it, and
// its schema's version.
func appendTable(b []byte, t *tableInfo) []byte {
	b = appendString(b, t.namespace)
	b = appendString(b, t.name)
	b = binary.AppendUvarint(b, uint64(t.oid))
	flags := uint64(0)
	if t.full {
		flags = 1
	}
	b = binary.AppendUvarint(b, flags)
	b = binary.AppendUvarint(b, uint64(len(t.cols)))
	for _, c := range t.cols {
		b = appendString(b, c.name)
		b = appendString(b, c.typeName)
		b = appendString(b, c.typname)
		b = binary.AppendUvarint(b, uint64(c.kind))
		b = binary.AppendUvarint(b, uint64(c.typeOID))
		b = binary.AppendVarint(b, int64(c.typmod))
		notNull := uint64(0)
		if c.notNull {
			notNull = 1
		}
		b = binary.AppendUvarint(b, notNull)
	}
	b = binary.AppendUvarint(b, uint64(len(t.pk)))
	for _, k := range t.pk {
		b = binary.AppendUvarint(b, uint64(k))
	}
	b = binary.AppendUvarint(b, uint64(t.chunkKey+1))
	return binary.AppendUvarint(b, uint64(t.schema.Version))
}

// table decodes what appendTable wrote; the caller gives it its row type
// (config.pipelineTable) with the version it returns in version.
func (d *decoder) table() *tableInfo {
	t := &tableInfo{namespace: d.string(), name: d.string(), oid: uint32(d.uvarint())}
	t.full = d.uvarint() == 1
	n := d.uvarint()
	for i := uint64(0); i < n && d.err == nil; i++ {
		c := column{name: d.string(), typeName: d.string(), typname: d.string(), kind: valueKind(d.uvarint())}
		c.typeOID, c.typmod = uint32(d.uvarint()), int32(d.varint())
		c.notNull = d.uvarint() == 1
		t.cols = append(t.cols, c)
	}
	n = d.uvarint()
	for i := uint64(0); i < n && d.err == nil; i++ {
		if k := int(d.uvarint()); k < len(t.cols) {
			t.pk = append(t.pk, k)
		} else if d.err == nil {
			d.err = fmt.Errorf("postgres-cdc: split encoding has a key column out of range")
		}
	}
	t.chunkKey = int(d.uvarint()) - 1
	if t.chunkKey >= len(t.cols) {
		t.chunkKey = -1
	}
	t.version = int(d.uvarint())
	return t
}

// decodeSplit decodes a split: a chunk or the stream split.
func decodeSplit(s connector.Split) (*chunk, *streamSplit, error) {
	if len(s.State) < 2 || s.State[0] != splitVersion {
		return nil, nil, fmt.Errorf("postgres-cdc: split %q has an encoding this version does not read", s.ID)
	}
	d := &decoder{b: s.State[2:]}
	switch s.State[1] {
	case 'c':
		c := d.chunk()
		if d.err != nil {
			return nil, nil, fmt.Errorf("split %q: %w", s.ID, d.err)
		}
		return c, nil, nil
	case 's':
		ss := d.streamSplit()
		if d.err != nil {
			return nil, nil, fmt.Errorf("split %q: %w", s.ID, d.err)
		}
		return nil, ss, nil
	}
	return nil, nil, fmt.Errorf("postgres-cdc: split %q is of an unknown kind", s.ID)
}

func sortChunks(cs []*chunk) {
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.hasStart != b.hasStart {
			return !a.hasStart
		}
		return a.start < b.start
	})
}

// decoder reads the encodings of the source's splits and state.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = fmt.Errorf("postgres-cdc: split or state encoding is truncated")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = fmt.Errorf("postgres-cdc: split or state encoding is truncated")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.err = fmt.Errorf("postgres-cdc: split or state encoding is truncated")
		return ""
	}
	v := string(d.b[:n])
	d.b = d.b[n:]
	return v
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}
