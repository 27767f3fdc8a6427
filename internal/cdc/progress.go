package cdc

import (
	"encoding/binary"
	"log/slog"
	"maps"
	"slices"
	"time"
)

// TableProgress is how far the snapshot of one table is.
type TableProgress struct {
	// Table is the table's id (db.table, schema.table).
	Table string
	// Chunks is the number of the table's chunks, Read of those read.
	Chunks, Read int
	// Rows is the number of rows of the chunks read.
	Rows int64
}

// Done reports whether every chunk of the table is read.
func (p TableProgress) Done() bool { return p.Read >= p.Chunks }

// progressEvery is how often the progress of the tables being read is
// logged, at most.
const progressEvery = 3 * time.Second

// progress follows the snapshot's progress per table, and logs it: every
// few seconds a line per table being read, a line when a table is read,
// and one when the snapshot is.
type progress struct {
	log    *slog.Logger
	source string
	byName map[string]*tableProgress
	// now is the clock of the periodic lines.
	now  func() time.Time
	last time.Time
}

type tableProgress struct {
	TableProgress
	// left is the number of the table's chunks not handed out.
	left int
}

func newProgress(log *slog.Logger, source string) progress {
	return progress{log: log, source: source, byName: map[string]*tableProgress{}, now: time.Now}
}

func (p *progress) table(name string) *tableProgress {
	t := p.byName[name]
	if t == nil {
		t = &tableProgress{TableProgress: TableProgress{Table: name}}
		p.byName[name] = t
	}
	return t
}

// add counts a chunk of a starting snapshot.
func (p *progress) add(c Chunk) {
	t := p.table(c.Table())
	t.Chunks++
	t.left++
}

// handedOut notes that a chunk is handed out to a reader.
func (p *progress) handedOut(c Chunk) {
	if t := p.byName[c.Table()]; t != nil && t.left > 0 {
		t.left--
	}
}

// read notes that a chunk is read, and logs the progress.
func (p *progress) read(c Chunk) {
	t := p.table(c.Table())
	t.Read++
	t.Rows += c.Rows()
	if t.Done() {
		p.log.Info(p.source+": snapshot of a table read", "table", t.Table, "chunks", t.Chunks, "rows", t.Rows)
		return
	}
	if now := p.now(); now.Sub(p.last) >= progressEvery {
		p.last = now
		for _, t := range p.tables() {
			// Being read: some of its chunks are, or are handed out.
			if !t.Done() && (t.Read > 0 || p.byName[t.Table].left < t.Chunks) {
				p.log.Info(p.source+": snapshot progress", "table", t.Table, "read", t.Read, "chunks", t.Chunks, "rows", t.Rows)
			}
		}
	}
}

// end logs the end of the snapshot.
func (p *progress) end() {
	chunks, rows := 0, int64(0)
	for _, t := range p.byName {
		chunks += t.Chunks
		rows += t.Rows
	}
	p.log.Info(p.source+": snapshot read", "tables", len(p.byName), "chunks", chunks, "rows", rows)
}

// tables returns the progress of every table, ordered by id.
func (p *progress) tables() []TableProgress {
	out := make([]TableProgress, 0, len(p.byName))
	for _, name := range slices.Sorted(maps.Keys(p.byName)) {
		out = append(out, p.byName[name].TableProgress)
	}
	return out
}

// appendCounts appends the number of chunks of each table.
func (p *progress) appendCounts(b []byte) []byte {
	names := slices.Sorted(maps.Keys(p.byName))
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, name := range names {
		b = AppendString(b, name)
		b = binary.AppendUvarint(b, uint64(p.byName[name].Chunks))
	}
	return b
}

// readCounts reads what appendCounts wrote.
func (p *progress) readCounts(d *Decoder) {
	n := d.Uvarint()
	for i := uint64(0); i < n && d.Err == nil; i++ {
		t := p.table(d.String())
		t.Chunks = d.Int()
	}
}

// restoreLeft counts a restored chunk not handed out.
func (p *progress) restoreLeft(c Chunk) { p.table(c.Table()).left++ }

// restoreRead counts a restored chunk read.
func (p *progress) restoreRead(c Chunk) {
	t := p.table(c.Table())
	t.Read++
	t.Rows += c.Rows()
}
