package postgrescdc

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc"
)

// splitVersion starts the encoding of every split and of the enumerator's
// state.
const splitVersion = 3

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
	// done is set once the chunk's rows are emitted, rows to their number.
	done bool
	rows int64
}

// ID is the chunk's split id.
func (c *chunk) ID() string { return "chunk:" + c.table + ":" + strconv.Itoa(c.index) }

// Table is the id of the chunk's table.
func (c *chunk) Table() string { return c.table }

// Done reports whether the chunk is read.
func (c *chunk) Done() bool { return c.done }

// Rows is the number of the chunk's rows, once read.
func (c *chunk) Rows() int64 { return c.rows }

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
	b = cdc.AppendString(b, c.table)
	b = binary.AppendUvarint(b, uint64(c.index))
	b = binary.AppendUvarint(b, c.flags())
	b = binary.AppendVarint(b, c.start)
	b = binary.AppendVarint(b, c.end)
	b = cdc.AppendString(b, c.snapshot)
	b = binary.AppendUvarint(b, c.lsn)
	return binary.AppendUvarint(b, uint64(c.rows))
}

// flags returns the flags of the chunk's encodings.
func (c *chunk) flags() uint64 {
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
	return flags
}

// setFlags sets what flags says of the chunk.
func (c *chunk) setFlags(flags uint64) {
	c.hasStart, c.hasEnd, c.done = flags&flagStart != 0, flags&flagEnd != 0, flags&flagDone != 0
}

func readChunk(d *cdc.Decoder) *chunk {
	c := &chunk{table: d.String(), index: d.Int()}
	c.setFlags(d.Uvarint())
	c.start, c.end = d.Varint(), d.Varint()
	c.snapshot = d.String()
	c.lsn = d.Uvarint()
	c.rows = int64(d.Uvarint())
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
	// tables are, in a pipeline, the captured tables as they are at pos
	// (from the enumerator's discovery, then from checkpoints): their
	// columns change with the relations and DDL messages the stream holds.
	tables []*tableInfo
}

// chunkCodec encodes and decodes the chunks.
var chunkCodec = cdc.ChunkCodec[*chunk]{Source: "postgres-cdc", Version: splitVersion, Append: appendChunk, Read: readChunk}

func encodeChunkSplit(c *chunk) connector.Split { return chunkCodec.Split(c) }

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
		b = cdc.AppendString(b, n)
		b = binary.AppendUvarint(b, uint64(len(cs)))
		prev := uint64(0)
		for _, c := range cs {
			b = binary.AppendUvarint(b, c.flags()&^flagDone)
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

func readStreamSplit(d *cdc.Decoder) *streamSplit {
	s := &streamSplit{pos: d.Uvarint(), skip: d.Int()}
	tables := d.Uvarint()
	for i := uint64(0); i < tables && d.Err == nil; i++ {
		name := d.String()
		n := d.Uvarint()
		prev := uint64(0)
		for j := uint64(0); j < n && d.Err == nil; j++ {
			c := &chunk{table: name, index: int(j)}
			c.setFlags(d.Uvarint() | flagDone)
			if c.hasStart {
				c.start = d.Varint()
			}
			if c.hasEnd {
				c.end = d.Varint()
			}
			c.lsn = prev + uint64(d.Varint())
			prev = c.lsn
			s.chunks = append(s.chunks, c)
		}
	}
	if d.More() {
		n := d.Uvarint()
		for i := uint64(0); i < n && d.Err == nil; i++ {
			s.tables = append(s.tables, readTable(d))
		}
	}
	return s
}

// appendTable encodes a pipeline's table as the server describes it, and
// its schema's version.
func appendTable(b []byte, t *tableInfo) []byte {
	b = cdc.AppendString(b, t.namespace)
	b = cdc.AppendString(b, t.name)
	b = binary.AppendUvarint(b, uint64(t.oid))
	b = cdc.AppendFlag(b, t.full)
	b = binary.AppendUvarint(b, uint64(len(t.cols)))
	for _, c := range t.cols {
		b = cdc.AppendString(b, c.name)
		b = cdc.AppendString(b, c.typeName)
		b = cdc.AppendString(b, c.typname)
		b = binary.AppendUvarint(b, uint64(c.kind))
		b = binary.AppendUvarint(b, uint64(c.typeOID))
		b = binary.AppendVarint(b, int64(c.typmod))
		b = cdc.AppendFlag(b, c.notNull)
		b = binary.AppendUvarint(b, uint64(c.attnum))
	}
	b = cdc.AppendInts(b, t.pk)
	b = binary.AppendUvarint(b, uint64(t.chunkKey+1))
	version := t.version // a table decoded, not yet given its schema
	if t.schema != nil {
		version = t.schema.Version
	}
	return binary.AppendUvarint(b, uint64(version))
}

// table decodes what appendTable wrote; the caller gives it its row type
// (config.pipelineTable) with the version it returns in version.
func readTable(d *cdc.Decoder) *tableInfo {
	t := &tableInfo{namespace: d.String(), name: d.String(), oid: uint32(d.Uvarint())}
	t.full = d.Flag()
	n := d.Uvarint()
	for i := uint64(0); i < n && d.Err == nil; i++ {
		c := column{name: d.String(), typeName: d.String(), typname: d.String(), kind: valueKind(d.Uvarint())}
		c.typeOID, c.typmod = uint32(d.Uvarint()), int32(d.Varint())
		c.notNull = d.Flag()
		c.attnum = d.Int()
		t.cols = append(t.cols, c)
	}
	t.pk = d.Ints()
	for _, k := range t.pk {
		if k >= len(t.cols) && d.Err == nil {
			d.Err = fmt.Errorf("postgres-cdc: split encoding has a key column out of range")
		}
	}
	t.chunkKey = d.Int() - 1
	if t.chunkKey >= len(t.cols) {
		t.chunkKey = -1
	}
	t.version = d.Int()
	return t
}

// decodeSplit decodes a split: a chunk or the stream split.
func decodeSplit(s connector.Split) (*chunk, *streamSplit, error) {
	var ss *streamSplit
	c, err := chunkCodec.DecodeSplit(s, 's', func(d *cdc.Decoder) { ss = readStreamSplit(d) })
	if err != nil {
		return nil, nil, err
	}
	return c, ss, nil
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
