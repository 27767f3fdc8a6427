package mysqlcdc

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc"
	"github.com/eddystream/eddy/sql/types"
)

// Events between the enumerator and the readers.
const (
	// eventChunkDone, from a reader: a chunk's rows are emitted (the
	// chunk's split state follows).
	eventChunkDone = 'D'
	// eventChunkAck, from the enumerator: the chunk whose id follows is
	// recorded; the reader lets go of it.
	eventChunkAck = 'A'
)

// enumerator splits the tables into chunks, hands them out on request,
// collects the finished chunks with their high positions, and then hands
// out the binlog split, which starts at the lowest of them.
type enumerator struct {
	ctx    connector.EnumeratorContext
	cfg    *config
	schema *types.RowType

	// The state that travels in checkpoints.
	started        bool     // the chunks (or the binlog's start) are known
	remaining      []*chunk // chunks not handed out
	total          int      // chunks in all
	finished       map[string]*chunk
	binlogAssigned bool
	start          position // the binlog's start, for startup modes without a snapshot
	fromMillis     int64

	starting bool
	waiting  []int // readers that asked for a split and got none yet
	// tableChunks and tableDone count, per table, its chunks and those
	// read, for the snapshot's progress in the log.
	tableChunks, tableDone map[string]int
	lastProgress           time.Time
	// gate holds back the binlog split until the snapshot's rows are
	// downstream.
	gate cdc.StreamGate
}

func (e *enumerator) snapshot() bool {
	return e.cfg.startup == "initial" || e.cfg.startup == "snapshot"
}

func (e *enumerator) restore(b []byte) error {
	if len(b) < 1 || b[0] != splitVersion {
		return fmt.Errorf("mysql-cdc: the enumerator state has an encoding this version does not read")
	}
	d := &decoder{b: b[1:]}
	e.started = d.uvarint() == 1
	e.binlogAssigned = d.uvarint() == 1
	e.total = int(d.uvarint())
	n := d.uvarint()
	for i := uint64(0); i < n && d.err == nil; i++ {
		e.remaining = append(e.remaining, d.chunk())
	}
	n = d.uvarint()
	for i := uint64(0); i < n && d.err == nil; i++ {
		c := d.chunk()
		e.finished[c.id()] = c
	}
	e.start = d.position()
	e.fromMillis = int64(d.uvarint())
	return d.err
}

func (e *enumerator) SnapshotState(id int64) ([]byte, error) {
	e.gate.Snapshot(id)
	b := []byte{splitVersion}
	flag := func(v bool) uint64 {
		if v {
			return 1
		}
		return 0
	}
	b = binary.AppendUvarint(b, flag(e.started))
	b = binary.AppendUvarint(b, flag(e.binlogAssigned))
	b = binary.AppendUvarint(b, uint64(e.total))
	b = binary.AppendUvarint(b, uint64(len(e.remaining)))
	for _, c := range e.remaining {
		b = appendChunk(b, c)
	}
	b = binary.AppendUvarint(b, uint64(len(e.finished)))
	for _, id := range e.finishedIDs() {
		b = appendChunk(b, e.finished[id])
	}
	b = appendPosition(b, e.start)
	return binary.AppendUvarint(b, uint64(e.fromMillis)), nil
}

func (e *enumerator) finishedIDs() []string {
	ids := make([]string, 0, len(e.finished))
	for id := range e.finished {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (e *enumerator) AddReader(int) error {
	if !e.started && !e.starting {
		e.starting = true
		e.ctx.CallAsync(e.discover, e.discovered)
	}
	return nil
}

type discovery struct {
	chunks     []*chunk
	start      position
	fromMillis int64
}

// discover finds the tables and splits them into chunks, or finds where
// the binlog starts.
func (e *enumerator) discover() (any, error) {
	conn, err := e.cfg.connect(context.Background())
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if e.cfg.startup != "snapshot" {
		if err := checkServer(conn); err != nil {
			return nil, err
		}
	}
	tables, err := e.cfg.discover(conn, e.schema)
	if err != nil {
		return nil, err
	}
	var d discovery
	switch e.cfg.startup {
	case "initial", "snapshot":
		for _, t := range tables {
			cs, err := e.cfg.splitTable(conn, t)
			if err != nil {
				return nil, err
			}
			d.chunks = append(d.chunks, cs...)
		}
	case "latest-offset":
		d.start, err = currentPosition(conn)
	case "earliest-offset":
		d.start, err = earliestPosition(conn)
	case "timestamp":
		d.start, err = earliestPosition(conn)
		d.fromMillis = e.cfg.startupTS
	case "specific-offset":
		d.start = position{File: e.cfg.specificFile, Pos: e.cfg.specificPos}
		var files []string
		if files, err = binlogFiles(conn); err == nil && !slices.Contains(files, d.start.File) {
			err = fmt.Errorf("mysql-cdc: 'scan.startup.specific-offset.file' = '%s' is not a binary log of the server; it has %v", d.start.File, files)
		}
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

func (e *enumerator) discovered(result any, err error) error {
	e.starting = false
	if err != nil {
		return err
	}
	d := result.(discovery)
	e.started = true
	e.remaining, e.total = d.chunks, len(d.chunks)
	e.start, e.fromMillis = d.start, d.fromMillis
	e.ctx.Log().Info("mysql-cdc: source discovered", "chunks", e.total, "startup", e.cfg.startup)
	e.countChunks()
	e.serveWaiting()
	return nil
}

func (e *enumerator) HandleSplitRequest(subtask int) error {
	if !e.started {
		if !slices.Contains(e.waiting, subtask) {
			e.waiting = append(e.waiting, subtask)
		}
		return nil
	}
	e.serve(subtask)
	return nil
}

// serve answers a reader's request for a split.
func (e *enumerator) serve(subtask int) {
	switch {
	case len(e.remaining) > 0:
		c := e.remaining[0]
		e.remaining = e.remaining[1:]
		e.ctx.AssignSplits(subtask, encodeChunkSplit(c))
	case e.cfg.startup == "snapshot" || e.binlogAssigned:
		e.ctx.SignalNoMoreSplits(subtask)
	case len(e.finished) < e.total || !e.gate.Open():
		// The binlog split waits for the last chunks.
		if !slices.Contains(e.waiting, subtask) {
			e.waiting = append(e.waiting, subtask)
		}
	default:
		e.binlogAssigned = true
		e.ctx.AssignSplits(subtask, encodeBinlogSplit(e.binlogSplit()))
		e.ctx.SignalNoMoreSplits(subtask)
	}
}

// binlogSplit returns the binlog split: after a snapshot, from the lowest
// high position of its chunks, skipping for each chunk the changes before
// its own.
func (e *enumerator) binlogSplit() *binlogSplit {
	if !e.snapshot() {
		return &binlogSplit{pos: e.start, fromMillis: e.fromMillis}
	}
	s := &binlogSplit{}
	for _, id := range e.finishedIDs() {
		c := e.finished[id]
		if s.pos.isZero() || c.high.compare(s.pos) < 0 {
			s.pos = c.high
		}
		s.chunks = append(s.chunks, c)
	}
	return s
}

func (e *enumerator) HandleEvent(subtask int, event []byte) error {
	if len(event) == 0 || event[0] != eventChunkDone {
		return fmt.Errorf("mysql-cdc: unknown reader event %q", event)
	}
	c, _, err := decodeSplit(connector.Split{ID: "event", State: event[1:]})
	if err != nil || c == nil {
		return fmt.Errorf("mysql-cdc: bad chunk event: %v", err)
	}
	_, known := e.finished[c.id()]
	e.finished[c.id()] = c
	e.ctx.SendEvent(subtask, append([]byte{eventChunkAck}, c.id()...))
	if !known {
		e.progress(c.table)
	}
	if len(e.finished) == e.total && !known {
		if !e.binlogAssigned && e.gate.Shut(e.ctx) {
			return nil // until a checkpoint carries the chunks' rows
		}
		e.serveWaiting()
	}
	return nil
}

// countChunks counts the chunks of each table and those read, from the
// chunks the enumerator knows: a table's last chunk has no end.
func (e *enumerator) countChunks() {
	e.tableChunks, e.tableDone = map[string]int{}, map[string]int{}
	for _, c := range e.remaining {
		if c.end == "" {
			e.tableChunks[c.table] = c.index + 1
		}
	}
	for _, c := range e.finished {
		e.tableDone[c.table]++
		if c.end == "" {
			e.tableChunks[c.table] = c.index + 1
		}
	}
}

// progress logs the snapshot's progress when a chunk of table is read:
// the table once all its chunks are, and the whole every few seconds.
func (e *enumerator) progress(table string) {
	if e.tableDone == nil {
		e.countChunks()
	} else {
		e.tableDone[table]++
	}
	log := e.ctx.Log()
	if n := e.tableChunks[table]; n > 0 && e.tableDone[table] == n {
		log.Info("mysql-cdc: snapshot of a table read", "table", table, "chunks", n)
	}
	if len(e.finished) == e.total {
		log.Info("mysql-cdc: snapshot read", "tables", len(e.tableChunks), "chunks", e.total)
	} else if time.Since(e.lastProgress) >= 3*time.Second {
		e.lastProgress = time.Now()
		log.Info("mysql-cdc: snapshot progress", "read", len(e.finished), "chunks", e.total)
	}
}

// NotifyCheckpointComplete opens the gate of the binlog split.
func (e *enumerator) NotifyCheckpointComplete(id int64) error {
	if e.gate.Complete(id) {
		e.serveWaiting()
	}
	return nil
}

// serveWaiting serves the readers waiting for a split.
func (e *enumerator) serveWaiting() {
	waiting := e.waiting
	e.waiting = nil
	for _, r := range waiting {
		e.serve(r)
	}
}

func (e *enumerator) Close() error { return nil }
