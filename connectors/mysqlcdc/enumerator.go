package mysqlcdc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc"
	"github.com/eddystream/eddy/sql/types"
)

// enumerator splits the tables into chunks, hands them out on request,
// collects the finished chunks with their high positions, and then hands
// out the binlog split, which starts at the lowest of them.
type enumerator struct {
	ctx    connector.EnumeratorContext
	cfg    *config
	schema *types.RowType

	// chunks keeps the snapshot's chunks and hands out the splits; the
	// binlog split waits for the snapshot's rows to be downstream.
	chunks *cdc.Chunks[*chunk]
	// The binlog's start, for startup modes without a snapshot; travels
	// in checkpoints with chunks.
	start      position
	fromMillis int64
}

// newEnumerator returns the enumerator of a source, restored from a
// checkpoint's state if it has one.
func newEnumerator(ctx connector.EnumeratorContext, cfg *config, schema *types.RowType, restored []byte) (*enumerator, error) {
	e := &enumerator{ctx: ctx, cfg: cfg, schema: schema}
	splits := cdc.Splits[*chunk]{Codec: chunkCodec}
	if cfg.startup != "snapshot" {
		splits.Stream = func() connector.Split { return encodeBinlogSplit(e.binlogSplit()) }
	}
	e.chunks = cdc.NewChunks(ctx, splits)
	if restored == nil {
		return e, nil
	}
	d, err := e.chunks.Restore(restored)
	if err != nil {
		return nil, err
	}
	e.start = readPosition(d)
	e.fromMillis = int64(d.Uvarint())
	return e, d.Err
}

func (e *enumerator) snapshot() bool {
	return e.cfg.startup == "initial" || e.cfg.startup == "snapshot"
}

// SnapshotState returns the enumerator's state: the chunks and where the
// binlog starts.
func (e *enumerator) SnapshotState(id int64) ([]byte, error) {
	e.chunks.Snapshot(id)
	b := appendPosition(e.chunks.AppendState(), e.start)
	return binary.AppendUvarint(b, uint64(e.fromMillis)), nil
}

// AddReader starts the discovery with the first reader.
func (e *enumerator) AddReader(int) error {
	e.chunks.Discover(e.discover, e.discovered)
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
	for attempt := 1; ; attempt++ {
		d, err := e.discoverOnce()
		if err == nil || attempt == discoverAttempts || !errors.Is(err, mysql.ErrBadConn) {
			return d, err
		}
		// Discovery only reads: a connection the server dropped under it
		// is worth another one.
		e.ctx.Log().Warn("mysql-cdc: the connection was lost while discovering the tables; discovering again", "attempt", attempt, "error", err)
	}
}

// discoverAttempts is how many times discover tries over connections the
// server drops.
const discoverAttempts = 3

// discoverOnce lists the tables and plans the chunks or the start over one
// connection.
func (e *enumerator) discoverOnce() (any, error) {
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
	tables, err := e.cfg.discover(conn, e.schema, false)
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
		d.start, err = currentPosition(conn, e.ctx.Log())
	case "earliest-offset":
		d.start, err = earliestPosition(conn)
	case "timestamp":
		d.start, err = earliestPosition(conn)
		d.fromMillis = e.cfg.startupTS
	case "specific-offset":
		if e.cfg.specificGTIDs != "" {
			d.start, err = specificGTIDs(conn, e.cfg.specificGTIDs)
			break
		}
		d.start = position{File: e.cfg.specificFile, Pos: e.cfg.specificPos}
		var files []string
		if files, err = binlogFiles(conn); err == nil && !slices.Contains(files, d.start.File) {
			err = fmt.Errorf("mysql-cdc: 'scan.startup.specific-offset.file' = '%s' is not a binary log of the server; it has %v", d.start.File, files)
		}
		if err == nil {
			d.start, err = gtidsAt(conn, d.start)
		}
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

// specificGTIDs returns the start of 'specific-offset' by a GTID set, which
// must be of the server's flavour.
func specificGTIDs(conn *client.Conn, set string) (position, error) {
	fl := flavor(conn)
	if want, _ := gtidSetFlavor(set); want != fl {
		return position{}, fmt.Errorf("mysql-cdc: 'scan.startup.specific-offset.gtid-set' = '%s' is a %s GTID set, and the server is %s", set, want, fl)
	}
	parsed, err := parseGTIDs(fl, set)
	if err != nil {
		return position{}, fmt.Errorf("mysql-cdc: 'scan.startup.specific-offset.gtid-set' = '%s': %w", set, err)
	}
	if m, ok := parsed.(*mysql.MariadbGTIDSet); ok {
		for domain, ids := range m.Sets {
			if len(ids) > 1 {
				return position{}, fmt.Errorf("mysql-cdc: 'scan.startup.specific-offset.gtid-set' = '%s' has %d GTIDs of domain %d: a MariaDB position has one of each domain, its last (as @@gtid_binlog_pos shows it)", set, len(ids), domain)
			}
		}
	}
	return position{GTIDs: parsed.String(), HasGTIDs: true}, nil
}

func (e *enumerator) discovered(result any, err error) error {
	if err != nil {
		return err
	}
	d := result.(discovery)
	e.chunks.Start(d.chunks)
	e.start, e.fromMillis = d.start, d.fromMillis
	e.ctx.Log().Info("mysql-cdc: source discovered", "chunks", len(d.chunks), "startup", e.cfg.startup)
	e.chunks.ServeWaiting()
	return nil
}

// HandleSplitRequest answers a reader's request for a split.
func (e *enumerator) HandleSplitRequest(subtask int) error {
	e.chunks.Request(subtask)
	return nil
}

// binlogSplit returns the binlog split: after a snapshot, from the lowest
// high position of its chunks, skipping for each chunk the changes before
// its own.
func (e *enumerator) binlogSplit() *binlogSplit {
	if !e.snapshot() {
		return &binlogSplit{pos: e.start, fromMillis: e.fromMillis}
	}
	s := &binlogSplit{chunks: e.chunks.Finished()}
	for _, c := range s.chunks {
		if s.pos.isZero() || c.high.compare(s.pos) < 0 {
			s.pos = c.high
		}
	}
	return s
}

// HandleEvent records the chunks the readers report read.
func (e *enumerator) HandleEvent(subtask int, event []byte) error {
	_, err := e.chunks.HandleEvent(subtask, event)
	return err
}

// NotifyCheckpointComplete opens the gate of the binlog split once the
// checkpoint taken after the last chunk's report has completed.
func (e *enumerator) NotifyCheckpointComplete(id int64) error {
	e.chunks.CheckpointComplete(id)
	return nil
}

// Status reports the snapshot's progress and the phase: "discovering",
// "snapshot", "binlog" (or "done" after a snapshot-only startup).
func (e *enumerator) Status() map[string]any {
	m := map[string]any{"startup": e.cfg.startup}
	e.chunks.AddStatus(m, "binlog")
	return m
}

// Close does nothing: the enumerator holds no connection.
func (e *enumerator) Close() error { return nil }
