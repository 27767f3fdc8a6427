package mysqlcdc

import (
	"encoding/binary"
	"fmt"
	"strconv"

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
