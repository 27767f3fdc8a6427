package mysqlcdc

import (
	"encoding/binary"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc"
)

// splitVersion starts the encoding of every split and of the enumerator's
// state. Version 3: positions carry their GTID set, the binlog split the
// rows already read of transactions by GTID. Version 4: chunks of keys
// other than integers have bounds (the raw bytes of strings, the text of
// decimals and dates), and a pipeline's tables carry their columns'
// character sets and collations.
const splitVersion = 4

const binlogSplitID = "binlog"

// chunk is a part of a table's snapshot: the rows whose chunk key is in
// [start, end), an absent bound being unbounded (a table read as one chunk
// has neither).
type chunk struct {
	table string // db.table
	index int
	// start and end are keys as valueText renders them (integers in
	// decimal, strings' raw bytes), "" when unbounded.
	start, end string
	// done is set once the chunk's rows are emitted, rows to their number;
	// high is the binlog position they reflect: changes to the chunk's
	// rows at or after it are read from the binlog.
	done bool
	rows int64
	high position
}

// ID is the chunk's split id.
func (c *chunk) ID() string { return "chunk:" + c.table + ":" + strconv.Itoa(c.index) }

// Table is the id of the chunk's table.
func (c *chunk) Table() string { return c.table }

// Done reports whether the chunk is read.
func (c *chunk) Done() bool { return c.done }

// Rows is the number of the chunk's rows, once read.
func (c *chunk) Rows() int64 { return c.rows }

// contains tells whether a chunk key value k (as valueText renders it),
// or NULL, is in the chunk, its values ordered by o. NULL keys belong to
// the first chunk.
func (c *chunk) contains(o keyOrder, k string, null bool) bool {
	if null {
		return c.start == ""
	}
	return (c.start == "" || compareKeys(o, k, c.start) >= 0) && (c.end == "" || compareKeys(o, k, c.end) < 0)
}

func appendChunk(b []byte, c *chunk) []byte {
	b = cdc.AppendString(b, c.table)
	b = binary.AppendUvarint(b, uint64(c.index))
	b = cdc.AppendString(b, c.start)
	b = cdc.AppendString(b, c.end)
	b = cdc.AppendFlag(b, c.done)
	b = binary.AppendUvarint(b, uint64(c.rows))
	return appendPosition(b, c.high)
}

func readChunk(d *cdc.Decoder) *chunk {
	c := &chunk{table: d.String(), index: d.Int(), start: d.String(), end: d.String()}
	c.done = d.Flag()
	c.rows = int64(d.Uvarint())
	c.high = readPosition(d)
	return c
}

// binlogSplit is the reading of the binary log: the position of the
// transaction being read and the rows of it already read, and the finished
// snapshot chunks whose changes before their high positions it skips.
type binlogSplit struct {
	pos  position // where the transaction being read starts
	skip int      // rows of it already read, if it has no GTID
	// skipped are the rows already read of transactions by GTID: the one
	// at pos, if it has a GTID, and, after a restore by GTID set, others
	// read in part that have not come again yet.
	skipped map[string]int
	// chunks are the snapshot's chunks, while the binlog is before the
	// highest of their high positions.
	chunks []*chunk
	// fromMillis, if set, skips events older than it ('timestamp' startup).
	fromMillis int64
	// tables are, in a pipeline, the captured tables as they are at pos:
	// their schemas change with the DDL statements the binary log holds.
	tables []*tableInfo
}

// chunkCodec encodes and decodes the chunks.
var chunkCodec = cdc.ChunkCodec[*chunk]{Source: "mysql-cdc", Version: splitVersion, Append: appendChunk, Read: readChunk}

func encodeChunkSplit(c *chunk) connector.Split { return chunkCodec.Split(c) }

func encodeBinlogSplit(s *binlogSplit) connector.Split {
	b := []byte{splitVersion, 'b'}
	b = appendPosition(b, s.pos)
	b = binary.AppendUvarint(b, uint64(s.skip))
	gtids := slices.Sorted(maps.Keys(s.skipped))
	b = binary.AppendUvarint(b, uint64(len(gtids)))
	for _, g := range gtids {
		b = cdc.AppendString(b, g)
		b = binary.AppendUvarint(b, uint64(s.skipped[g]))
	}
	b = binary.AppendUvarint(b, uint64(s.fromMillis))
	b = binary.AppendUvarint(b, uint64(len(s.chunks)))
	for _, c := range s.chunks {
		b = appendChunk(b, c)
	}
	b = binary.AppendUvarint(b, uint64(len(s.tables)))
	for _, t := range s.tables {
		b = appendTable(b, t)
	}
	// The tables' default collations follow, which splits written
	// before the source followed ALTER TABLE statements by itself lack.
	for _, t := range s.tables {
		b = cdc.AppendString(b, t.collation)
	}
	return connector.Split{ID: binlogSplitID, State: b}
}

// decodeSplit decodes a split: a chunk or the binlog split.
func decodeSplit(s connector.Split) (*chunk, *binlogSplit, error) {
	var bs *binlogSplit
	c, err := chunkCodec.DecodeSplit(s, 'b', func(d *cdc.Decoder) { bs = readBinlogSplit(d) })
	if err != nil {
		return nil, nil, err
	}
	return c, bs, nil
}

func readBinlogSplit(d *cdc.Decoder) *binlogSplit {
	bs := &binlogSplit{pos: readPosition(d), skip: d.Int()}
	n := d.Uvarint()
	for i := uint64(0); i < n && d.Err == nil; i++ {
		if bs.skipped == nil {
			bs.skipped = map[string]int{}
		}
		g := d.String()
		bs.skipped[g] = d.Int()
	}
	bs.fromMillis = int64(d.Uvarint())
	n = d.Uvarint()
	for i := uint64(0); i < n && d.Err == nil; i++ {
		bs.chunks = append(bs.chunks, readChunk(d))
	}
	n = d.Uvarint()
	for i := uint64(0); i < n && d.Err == nil; i++ {
		bs.tables = append(bs.tables, readTable(d))
	}
	if d.More() {
		for _, t := range bs.tables {
			t.collation = d.String()
		}
	}
	return bs
}

// compareInts compares two integers written in decimal.
func compareInts(a, b string) int {
	an, bn := len(a) > 0 && a[0] == '-', len(b) > 0 && b[0] == '-'
	switch {
	case an && !bn:
		return -1
	case !an && bn:
		return 1
	case an:
		return compareMagnitudes(b[1:], a[1:])
	}
	return compareMagnitudes(a, b)
}

func compareMagnitudes(a, b string) int {
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// appendTable encodes a pipeline's table as the server describes it, and
// its schema's version.
func appendTable(b []byte, t *tableInfo) []byte {
	b = cdc.AppendString(b, t.db)
	b = cdc.AppendString(b, t.name)
	b = binary.AppendUvarint(b, uint64(len(t.cols)))
	for _, c := range t.cols {
		b = cdc.AppendString(b, c.name)
		b = cdc.AppendString(b, c.dataType)
		b = cdc.AppendString(b, c.columnType)
		b = cdc.AppendFlag(b, c.notNull)
		b = cdc.AppendString(b, c.charset)
		b = cdc.AppendString(b, c.collation)
	}
	b = cdc.AppendInts(b, t.pk)
	b = binary.AppendUvarint(b, uint64(t.chunkKey+1))
	return binary.AppendUvarint(b, uint64(t.schema.Version))
}

// table decodes what appendTable wrote; the caller gives it its row type
// (config.pipelineTable) with the version it returns in version.
func readTable(d *cdc.Decoder) *tableInfo {
	t := &tableInfo{db: d.String(), name: d.String()}
	n := d.Uvarint()
	for i := uint64(0); i < n && d.Err == nil; i++ {
		c := column{name: d.String(), dataType: d.String(), columnType: d.String()}
		c.notNull = d.Flag()
		c.charset, c.collation = d.String(), d.String()
		c.unsigned = strings.Contains(c.columnType, "unsigned")
		if c.dataType == "enum" || c.dataType == "set" {
			c.values = enumValues(c.columnType)
		}
		t.cols = append(t.cols, c)
	}
	t.pk = d.Ints()
	t.chunkKey = d.Int() - 1
	if t.chunkKey >= 0 && t.chunkKey < len(t.cols) {
		t.order = t.cols[t.chunkKey].keyOrder()
	}
	t.version = d.Int()
	return t
}
