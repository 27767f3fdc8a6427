package postgrescdc

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc"
	"github.com/eddystream/eddy/sql/types"
)

// Events between the enumerator and the readers, besides those of the
// chunks (cdc.EventChunkDone, cdc.EventChunkAck).
const (
	// eventNeedSnapshot, from a reader: it holds a chunk whose snapshot
	// this run of the job did not export (one restored from a checkpoint).
	eventNeedSnapshot = 'S'
	// eventSnapshot, from the enumerator: the snapshot chunks are read in
	// during this run, its consistent point (8 bytes) and its name.
	eventSnapshot = 'N'
)

// enumerator finds the tables, creates the publication and the slot,
// splits the tables into chunks and hands them out on request with the
// snapshot they are read in, collects the finished chunks, and then hands
// out the stream split, which starts at the lowest of their consistent
// points.
//
// The snapshot a chunk is read in is exported by the creation of a
// replication slot, on a replication connection that the enumerator keeps
// open and idle until every chunk is read: the main slot on the first
// start, a temporary one when the main slot already exists or when a
// restored job has chunks left to read (the snapshot of an earlier run is
// gone with its connection). With 'scan.startup.mode' = 'snapshot' there
// is no slot: the snapshot is that of a transaction the enumerator holds
// open (pg_export_snapshot).
type enumerator struct {
	ctx    connector.EnumeratorContext
	cfg    *config
	schema *types.RowType

	// chunks keeps the snapshot's chunks and hands out the splits; the
	// stream split waits for the snapshot's rows to be downstream.
	chunks *cdc.Chunks[*chunk]
	// start is the stream's start, for startup modes without a snapshot;
	// it travels in checkpoints with chunks.
	start uint64
	// tables are, in a pipeline, the captured tables as discovery found
	// them, before the stream's start: the stream split carries them, so
	// that its reader decodes the stream from there with the tables as
	// they were then, not as they are when it opens (or is restored).
	// They travel in checkpoints with start.
	tables []*tableInfo

	snapWaiting []int // readers that asked for the live snapshot
	// The snapshot of this run, and the connection that keeps it valid.
	live      string
	liveLSN   uint64
	holder    *pgconn.PgConn
	exporting bool

	// async guards the hand-over of snapshot connections from discover and
	// export, which run on goroutines of their own: the host drops the
	// result of a call that ends after the job stopped, so a connection
	// not yet taken by discovered or exported is closed by Close, or at
	// once if the enumerator is already closed.
	async struct {
		sync.Mutex
		closed bool
		held   []*pgconn.PgConn
	}
}

// errClosed is the error of a discovery or export that ended after the
// enumerator was closed.
var errClosed = errors.New("postgres-cdc: the enumerator was closed")

// hold keeps a snapshot connection that an asynchronous call opened until
// its handler takes it (take) or the enumerator closes.
func (e *enumerator) hold(conn *pgconn.PgConn) error {
	e.async.Lock()
	defer e.async.Unlock()
	if e.async.closed {
		conn.Close(context.Background())
		return errClosed
	}
	e.async.held = append(e.async.held, conn)
	return nil
}

// take takes a held connection over on the enumerator's goroutine.
func (e *enumerator) take(conn *pgconn.PgConn) {
	e.async.Lock()
	defer e.async.Unlock()
	e.async.held = slices.DeleteFunc(e.async.held, func(c *pgconn.PgConn) bool { return c == conn })
}

// discoverHeld runs discover and holds the snapshot's connection.
func (e *enumerator) discoverHeld() (any, error) {
	return e.held(e.discover())
}

// exportHeld runs export and holds the snapshot's connection.
func (e *enumerator) exportHeld() (any, error) {
	return e.held(e.export())
}

func (e *enumerator) held(result any, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	if d := result.(discovery); d.holder != nil {
		if err := e.hold(d.holder); err != nil {
			return nil, err
		}
	}
	return result, nil
}

// newEnumerator returns the enumerator of a source, restored from a
// checkpoint's state if it has one.
func newEnumerator(ctx connector.EnumeratorContext, cfg *config, schema *types.RowType, restored []byte) (*enumerator, error) {
	e := &enumerator{ctx: ctx, cfg: cfg, schema: schema}
	splits := cdc.Splits[*chunk]{Codec: chunkCodec, Ready: e.ready}
	if cfg.startup != "snapshot" {
		splits.Stream = func() connector.Split { return encodeStreamSplit(e.streamSplit()) }
	}
	e.chunks = cdc.NewChunks(ctx, splits)
	if restored == nil {
		return e, nil
	}
	d, err := e.chunks.Restore(restored)
	if err != nil {
		return nil, err
	}
	e.start = d.Uvarint()
	if d.More() {
		n := d.Uvarint()
		for i := uint64(0); i < n && d.Err == nil; i++ {
			e.tables = append(e.tables, readTable(d))
		}
	}
	if d.Err != nil {
		return nil, d.Err
	}
	for _, t := range e.tables {
		if err := cfg.pipelineTable(t, t.version); err != nil {
			return nil, err
		}
	}
	return e, nil
}

func (e *enumerator) snapshot() bool {
	return e.cfg.startup == "initial" || e.cfg.startup == "snapshot"
}

// SnapshotState returns the enumerator's state: the chunks, where the
// stream starts and, in a pipeline, the tables there.
func (e *enumerator) SnapshotState(id int64) ([]byte, error) {
	e.chunks.Snapshot(id)
	b := binary.AppendUvarint(e.chunks.AppendState(), e.start)
	if len(e.tables) > 0 {
		b = binary.AppendUvarint(b, uint64(len(e.tables)))
		for _, t := range e.tables {
			b = appendTable(b, t)
		}
	}
	return b, nil
}

// AddReader starts the discovery with the first reader.
func (e *enumerator) AddReader(int) error {
	e.chunks.Discover(e.discoverHeld, e.discovered)
	return nil
}

type discovery struct {
	chunks  []*chunk
	tables  []*tableInfo // a pipeline's
	start   uint64
	live    string
	liveLSN uint64
	holder  *pgconn.PgConn
}

// discover finds the tables, sets up the publication and the slot, and
// splits the tables into chunks, or finds where the stream starts.
func (e *enumerator) discover() (result any, err error) {
	ctx := context.Background()
	c := e.cfg
	conn, err := c.connect(ctx, false)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	var d discovery
	defer func() {
		if err != nil && d.holder != nil {
			d.holder.Close(context.Background())
		}
	}()
	if c.startup == "snapshot" {
		tables, err := c.discover(ctx, conn, e.schema, nil, false)
		if err != nil {
			return nil, err
		}
		if d.holder, d.live, err = c.exportTransaction(ctx); err != nil {
			return nil, err
		}
		return d, e.split(ctx, conn, tables, &d)
	}
	if err := c.checkServer(ctx, conn); err != nil {
		return nil, err
	}
	tables, err := c.discover(ctx, conn, e.schema, e.ctx.Log(), true)
	if err != nil {
		return nil, err
	}
	if c.pipeline {
		d.tables = tables
	}
	if err := c.ensurePublication(ctx, conn, tables); err != nil {
		return nil, err
	}
	// Before the slot: every DDL after its start writes its message.
	if err := c.ensureDDLCapture(ctx, conn); err != nil {
		return nil, err
	}
	s, err := slot(ctx, conn, c.slot)
	// After a crash the server may not have noticed yet that the slot's
	// last reader is gone: wait for it as long as for a connection.
	for deadline := time.Now().Add(c.connectTimeout); err == nil && s.active && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		s, err = slot(ctx, conn, c.slot)
	}
	if err != nil {
		return nil, err
	}
	if s.exists {
		if err := c.checkSlot(s); err != nil {
			return nil, err
		}
	}
	if c.startup == "initial" {
		if d.holder, err = c.connect(ctx, true); err != nil {
			return nil, err
		}
		name, temporary := c.slot, false
		if s.exists {
			// The slot's position is older than any snapshot that can be
			// exported now: a temporary slot exports one, and the stream
			// skips, per chunk, what the snapshot holds.
			name, temporary = tempSlotName(c.slot), true
		}
		cs, err := c.createSlot(ctx, d.holder, name, temporary, true)
		if err != nil {
			return nil, err
		}
		d.live, d.liveLSN = cs.snapshot, cs.lsn
		if !s.exists {
			e.ctx.Log().Info("postgres-cdc: created replication slot", "slot", c.slot, "lsn", pglogrepl.LSN(cs.lsn))
		}
		return d, e.split(ctx, conn, tables, &d)
	}
	// latest-offset and committed-offset: no snapshot.
	if !s.exists {
		rep, err := c.connect(ctx, true)
		if err != nil {
			return nil, err
		}
		cs, err := c.createSlot(ctx, rep, c.slot, false, false)
		rep.Close(context.Background())
		if err != nil {
			return nil, err
		}
		s.confirmedFlush = cs.lsn
		e.ctx.Log().Info("postgres-cdc: created replication slot", "slot", c.slot, "lsn", pglogrepl.LSN(cs.lsn))
	}
	d.start = s.confirmedFlush
	if c.startup == "latest-offset" {
		rows, err := query(ctx, conn, "SELECT pg_current_wal_insert_lsn()")
		if err != nil {
			return nil, fmt.Errorf("postgres-cdc: reading the current WAL position: %w", err)
		}
		cur, err := pglogrepl.ParseLSN(string(rows[0][0]))
		if err != nil {
			return nil, fmt.Errorf("postgres-cdc: the current WAL position %q: %w", rows[0][0], err)
		}
		d.start = max(d.start, uint64(cur))
	}
	return d, nil
}

// split cuts the tables into chunks read in the discovery's snapshot.
func (e *enumerator) split(ctx context.Context, conn *pgconn.PgConn, tables []*tableInfo, d *discovery) error {
	for _, t := range tables {
		cs, err := e.cfg.splitTable(ctx, conn, t)
		if err != nil {
			return err
		}
		d.chunks = append(d.chunks, cs...)
	}
	return nil
}

// tempSlotName names a temporary slot that exports a snapshot.
func tempSlotName(slot string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return slot[:min(len(slot), 48)] + "_snap_" + hex.EncodeToString(b[:])
}

// exportTransaction opens a repeatable read transaction and exports its
// snapshot, valid while the returned connection keeps it open.
func (c *config) exportTransaction(ctx context.Context) (*pgconn.PgConn, string, error) {
	conn, err := c.connect(ctx, false)
	if err != nil {
		return nil, "", err
	}
	if err := exec(ctx, conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		conn.Close(context.Background())
		return nil, "", fmt.Errorf("postgres-cdc: starting the snapshot transaction: %w", err)
	}
	rows, err := query(ctx, conn, "SELECT pg_export_snapshot()")
	if err != nil {
		conn.Close(context.Background())
		return nil, "", fmt.Errorf("postgres-cdc: exporting the snapshot: %w", err)
	}
	return conn, string(rows[0][0]), nil
}

// export exports a new snapshot for the chunks a restored job still has to
// read: from a temporary slot, or with 'snapshot' startup a transaction.
func (e *enumerator) export() (any, error) {
	ctx := context.Background()
	c := e.cfg
	var d discovery
	var err error
	if c.startup == "snapshot" {
		d.holder, d.live, err = c.exportTransaction(ctx)
		return d, err
	}
	if d.holder, err = c.connect(ctx, true); err != nil {
		return nil, err
	}
	cs, err := c.createSlot(ctx, d.holder, tempSlotName(c.slot), true, true)
	if err != nil {
		d.holder.Close(context.Background())
		return nil, err
	}
	d.live, d.liveLSN = cs.snapshot, cs.lsn
	return d, nil
}

func (e *enumerator) discovered(result any, err error) error {
	if err != nil {
		return err
	}
	d := result.(discovery)
	e.take(d.holder)
	e.chunks.Start(d.chunks)
	e.start, e.tables = d.start, d.tables
	e.holder, e.live, e.liveLSN = d.holder, d.live, d.liveLSN
	e.ctx.Log().Info("postgres-cdc: source discovered", "chunks", len(d.chunks), "startup", e.cfg.startup)
	e.serveWaiting()
	return nil
}

func (e *enumerator) exported(result any, err error) error {
	e.exporting = false
	if err != nil {
		return err
	}
	d := result.(discovery)
	e.take(d.holder)
	e.holder, e.live, e.liveLSN = d.holder, d.live, d.liveLSN
	e.ctx.Log().Info("postgres-cdc: exported a snapshot for the chunks left", "chunks", e.chunks.Unread(), "lsn", pglogrepl.LSN(e.liveLSN))
	e.serveWaiting()
	return nil
}

// ensureLive exports a snapshot if this run has none.
func (e *enumerator) ensureLive() {
	if e.live == "" && !e.exporting {
		e.exporting = true
		e.ctx.CallAsync(e.exportHeld, e.exported)
	}
}

func (e *enumerator) serveWaiting() {
	if e.live != "" {
		for _, r := range e.snapWaiting {
			e.sendSnapshot(r)
		}
		e.snapWaiting = nil
	}
	e.chunks.ServeWaiting()
}

func (e *enumerator) sendSnapshot(subtask int) {
	ev := binary.BigEndian.AppendUint64([]byte{eventSnapshot}, e.liveLSN)
	e.ctx.SendEvent(subtask, append(ev, e.live...))
}

// HandleSplitRequest answers a reader's request for a split.
func (e *enumerator) HandleSplitRequest(subtask int) error {
	e.chunks.Request(subtask)
	return nil
}

// ready has a chunk read in this run's snapshot; a reader asking for it
// waits while there is none, and one is exported.
func (e *enumerator) ready(c *chunk) bool {
	if e.live == "" {
		e.ensureLive()
		return false
	}
	c.snapshot, c.lsn = e.live, e.liveLSN
	return true
}

// streamSplit returns the stream split: after a snapshot, from the lowest
// consistent point of its chunks, skipping for each chunk the changes
// before its own.
func (e *enumerator) streamSplit() *streamSplit {
	if !e.snapshot() {
		return &streamSplit{pos: e.start, tables: e.tables}
	}
	s := &streamSplit{chunks: e.chunks.Finished(), tables: e.tables}
	for _, c := range s.chunks {
		if s.pos == 0 || c.lsn < s.pos {
			s.pos = c.lsn
		}
	}
	return s
}

// HandleEvent records finished chunks and answers requests for the
// snapshot.
func (e *enumerator) HandleEvent(subtask int, event []byte) error {
	if len(event) == 1 && event[0] == eventNeedSnapshot {
		if e.live != "" {
			e.sendSnapshot(subtask)
			return nil
		}
		e.snapWaiting = append(e.snapWaiting, subtask)
		e.ensureLive()
		return nil
	}
	last, err := e.chunks.HandleEvent(subtask, event)
	if last {
		// Every chunk is read: the snapshot is no longer needed.
		e.release()
	}
	return err
}

// NotifyCheckpointComplete opens the gate of the stream split once the
// checkpoint taken after the last chunk's report has completed.
func (e *enumerator) NotifyCheckpointComplete(id int64) error {
	e.chunks.CheckpointComplete(id)
	return nil
}

// release closes the connection that keeps the snapshot valid, once
// every chunk is read (a temporary slot goes with it).
func (e *enumerator) release() {
	if e.holder != nil {
		e.holder.Close(context.Background())
		e.holder = nil
	}
	e.live, e.liveLSN = "", 0
}

// Status reports the snapshot's progress and the phase: "discovering",
// "snapshot", "stream" (or "done" after a snapshot-only startup).
func (e *enumerator) Status() map[string]any {
	m := map[string]any{"startup": e.cfg.startup}
	e.chunks.AddStatus(m, "stream")
	return m
}

// Close releases the snapshot's connection, and those of discoveries
// and exports whose results will not be handled.
func (e *enumerator) Close() error {
	e.release()
	e.async.Lock()
	e.async.closed = true
	held := e.async.held
	e.async.held = nil
	e.async.Unlock()
	for _, c := range held {
		c.Close(context.Background())
	}
	return nil
}
