package mysqlcdc

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/eddystream/eddy/connector"
)

// splitVersion starts the encoding of every split and of the enumerator's
// state.
const splitVersion = 1

const binlogSplitID = "binlog"

// chunk is a part of a table's snapshot: the rows whose chunk key is in
// [start, end), an absent bound being unbounded (a table read as one chunk
// has neither).
type chunk struct {
	table      string // db.table
	index      int
	start, end string // integers in decimal, "" when unbounded
	// done is set once the chunk's rows are emitted; high is the binlog
	// position they reflect: changes to the chunk's rows at or after it are
	// read from the binlog.
	done bool
	high position
}

func (c *chunk) id() string { return "chunk:" + c.table + ":" + strconv.Itoa(c.index) }

// contains tells whether a chunk key value (an integer in decimal, or
// nullText) is in the chunk. NULL keys belong to the first chunk.
func (c *chunk) contains(k string) bool {
	if k == nullText {
		return c.start == ""
	}
	return (c.start == "" || compareInts(k, c.start) >= 0) && (c.end == "" || compareInts(k, c.end) < 0)
}

func appendChunk(b []byte, c *chunk) []byte {
	b = appendString(b, c.table)
	b = binary.AppendUvarint(b, uint64(c.index))
	b = appendString(b, c.start)
	b = appendString(b, c.end)
	done := uint64(0)
	if c.done {
		done = 1
	}
	b = binary.AppendUvarint(b, done)
	return appendPosition(b, c.high)
}

func (d *decoder) chunk() *chunk {
	c := &chunk{table: d.string(), index: int(d.uvarint()), start: d.string(), end: d.string()}
	c.done = d.uvarint() == 1
	c.high = d.position()
	return c
}

// binlogSplit is the reading of the binary log: the position of the
// transaction being read and the rows of it already read, and the finished
// snapshot chunks whose changes before their high positions it skips.
type binlogSplit struct {
	pos  position // where the transaction being read starts
	skip int      // rows of it already read
	// chunks are the snapshot's chunks, while the binlog is before the
	// highest of their high positions.
	chunks []*chunk
	// fromMillis, if set, skips events older than it ('timestamp' startup).
	fromMillis int64
	// tables are, in a pipeline, the captured tables as they are at pos:
	// their schemas change with the DDL statements the binary log holds.
	tables []*tableInfo
}

func encodeChunkSplit(c *chunk) connector.Split {
	b := []byte{splitVersion, 'c'}
	return connector.Split{ID: c.id(), State: appendChunk(b, c)}
}

func encodeBinlogSplit(s *binlogSplit) connector.Split {
	b := []byte{splitVersion, 'b'}
	b = appendPosition(b, s.pos)
	b = binary.AppendUvarint(b, uint64(s.skip))
	b = binary.AppendUvarint(b, uint64(s.fromMillis))
	b = binary.AppendUvarint(b, uint64(len(s.chunks)))
	for _, c := range s.chunks {
		b = appendChunk(b, c)
	}
	b = binary.AppendUvarint(b, uint64(len(s.tables)))
	for _, t := range s.tables {
		b = appendTable(b, t)
	}
	return connector.Split{ID: binlogSplitID, State: b}
}

// decodeSplit decodes a split: a chunk or the binlog split.
func decodeSplit(s connector.Split) (*chunk, *binlogSplit, error) {
	if len(s.State) < 2 || s.State[0] != splitVersion {
		return nil, nil, fmt.Errorf("mysql-cdc: split %q has an encoding this version does not read", s.ID)
	}
	d := &decoder{b: s.State[2:]}
	switch s.State[1] {
	case 'c':
		c := d.chunk()
		if d.err != nil {
			return nil, nil, fmt.Errorf("split %q: %w", s.ID, d.err)
		}
		return c, nil, nil
	case 'b':
		bs := &binlogSplit{pos: d.position(), skip: int(d.uvarint()), fromMillis: int64(d.uvarint())}
		n := d.uvarint()
		for i := uint64(0); i < n && d.err == nil; i++ {
			bs.chunks = append(bs.chunks, d.chunk())
		}
		if len(d.b) > 0 {
			n = d.uvarint()
			for i := uint64(0); i < n && d.err == nil; i++ {
				bs.tables = append(bs.tables, d.table())
			}
		}
		if d.err != nil {
			return nil, nil, fmt.Errorf("split %q: %w", s.ID, d.err)
		}
		return nil, bs, nil
	}
	return nil, nil, fmt.Errorf("mysql-cdc: split %q is of an unknown kind", s.ID)
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
	b = appendString(b, t.db)
	b = appendString(b, t.name)
	b = binary.AppendUvarint(b, uint64(len(t.cols)))
	for _, c := range t.cols {
		b = appendString(b, c.name)
		b = appendString(b, c.dataType)
		b = appendString(b, c.columnType)
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
	t := &tableInfo{db: d.string(), name: d.string()}
	n := d.uvarint()
	for i := uint64(0); i < n && d.err == nil; i++ {
		c := column{name: d.string(), dataType: d.string(), columnType: d.string()}
		c.notNull = d.uvarint() == 1
		c.unsigned = strings.Contains(c.columnType, "unsigned")
		if c.dataType == "enum" || c.dataType == "set" {
			c.values = enumValues(c.columnType)
		}
		t.cols = append(t.cols, c)
	}
	n = d.uvarint()
	for i := uint64(0); i < n && d.err == nil; i++ {
		t.pk = append(t.pk, int(d.uvarint()))
	}
	t.chunkKey = int(d.uvarint()) - 1
	t.version = int(d.uvarint())
	return t
}
