package mysqlcdc

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc"
	"github.com/eddystream/eddy/pipeline"
	"github.com/eddystream/eddy/sql/types"
)

// reader reads the chunks and the binlog split a subtask is given.
type reader[T any] struct {
	ctx connector.ReaderContext
	cfg *config
	// schema is the SQL table's columns, nil in a pipeline, whose tables
	// have each their own (tableInfo.rt).
	schema *types.RowType
	rt     *types.RowType
	w      *types.RowWriter
	meta   cdc.MetaColumns
	// record makes the record of a change of a table's row.
	record func(t *tableInfo, kind changelog.Kind, row types.Row) T
	// schemaEvent, in a pipeline, makes the record of a schema event; nil
	// for a SQL table, whose columns are fixed.
	schemaEvent func(e pipeline.Event) T

	conn   *client.Conn
	flavor string
	// snapConn is the connection of the chunks read in consistent
	// snapshots (readConsistentChunk), open while the reader reads them.
	snapConn *client.Conn
	tables   map[string]*tableInfo // by db.table, once discovered
	// facts are what the source knows of the server to apply statements
	// to tables, read the first time one is.
	facts *serverFacts

	chunks *cdc.ReaderChunks[*chunk]
	binlog *binlogReader[T]
	// chunksRead and chunkRows count the snapshot chunks the reader read
	// and their rows, for Status.
	chunksRead int
	chunkRows  int64
}

// AddSplits takes chunks and the binlog split.
func (r *reader[T]) AddSplits(splits []connector.Split) error {
	return r.chunks.AddSplits(splits, 'b', func(d *cdc.Decoder) {
		r.binlog = &binlogReader[T]{r: r, split: readBinlogSplit(d)}
	})
}

// NoMoreSplits notes that the enumerator has no more splits for the reader,
// whose connection of consistent snapshots is then no longer needed (a chunk
// still to read opens it again).
func (r *reader[T]) NoMoreSplits() {
	r.chunks.NoMoreSplits()
	r.closeSnapshotConnection()
}

// HandleEvent takes the enumerator's acknowledgements.
func (r *reader[T]) HandleEvent(event []byte) error {
	if !r.chunks.HandleAck(event) {
		return fmt.Errorf("mysql-cdc: unknown enumerator event %q", event)
	}
	return nil
}

// Read reads the next chunk, or the changes of the binlog available now.
func (r *reader[T]) Read(out connector.Output[T]) error {
	r.chunks.FinishAcked(func(id string) { out.Split(id).Finish() })
	if out.Room() <= 0 {
		return nil
	}
	if c, ok := r.chunks.Next(); ok {
		rows, err := r.readChunk(out, c)
		if err != nil {
			return err
		}
		c.done, c.rows = true, rows
		r.chunks.Read(c)
		r.chunksRead++
		r.chunkRows += rows
		return nil
	}
	if r.binlog != nil {
		r.closeSnapshotConnection() // the snapshot is read
		return r.binlog.read(out)
	}
	r.chunks.Idle()
	return nil
}

// SnapshotState returns the chunks the reader holds and the binlog's
// position.
func (r *reader[T]) SnapshotState(int64) ([]connector.Split, error) {
	out := r.chunks.Splits()
	if r.binlog != nil {
		out = append(out, encodeBinlogSplit(r.binlog.state()))
	}
	return out, nil
}

// Status reports the snapshot chunks the reader read and, once it reads
// the binary log, where it is and how far behind the server (binlogStatus).
func (r *reader[T]) Status() map[string]any {
	m := map[string]any{"snapshotChunksRead": r.chunksRead, "snapshotRecords": r.chunkRows}
	if r.binlog != nil {
		r.binlog.status(m, time.Now())
	}
	return m
}

func (r *reader[T]) Close() error {
	if r.binlog != nil {
		r.binlog.close()
	}
	r.closeSnapshotConnection()
	if r.conn != nil {
		r.conn.Close()
	}
	return nil
}

// newReader returns a reader of a SQL table's rows, or for a pipeline
// (table nil) of each captured table's own; record makes the records.
func newReader[T any](ctx connector.ReaderContext, cfg *config, table *connector.Table,
	record func(t *tableInfo, kind changelog.Kind, row types.Row) T) *reader[T] {
	r := &reader[T]{ctx: ctx, cfg: cfg, meta: cdc.NoMetaColumns, record: record,
		chunks: cdc.NewReaderChunks(ctx, chunkCodec)}
	if table != nil {
		r.schema, r.rt, r.meta = table.Schema, table.RowType(), cdc.MetaColumnsOf(table)
		r.w = types.NewRowWriter(r.rt, types.NewArena(64<<10))
	}
	return r
}

// connection returns the reader's connection to the server, and the
// captured tables, opening and discovering them the first time.
func (r *reader[T]) connection() (*client.Conn, error) {
	if r.conn != nil {
		return r.conn, nil
	}
	conn, err := r.cfg.connect(context.Background())
	if err != nil {
		return nil, err
	}
	// A pipeline's binlog split restored from a checkpoint holds its
	// tables as they were there, which may all be gone from the server.
	held := r.binlog != nil && len(r.binlog.split.tables) > 0
	tables, err := r.cfg.discover(conn, r.schema, held)
	if err != nil {
		conn.Close()
		return nil, err
	}
	r.tables = map[string]*tableInfo{}
	for _, t := range tables {
		r.tables[t.id()] = t
	}
	r.conn, r.flavor = conn, flavor(conn)
	return conn, nil
}

// serverID returns the replica server id of the subtask's binlog reads.
func (r *reader[T]) serverID() (uint32, error) {
	id := r.cfg.serverID(r.ctx.Subtask())
	if id > r.cfg.serverIDHi || id < r.cfg.serverIDLo {
		return 0, fmt.Errorf("mysql-cdc: 'server-id' = '%d-%d' has %d ids and the source runs %d readers: give it a range of at least %d ids",
			r.cfg.serverIDLo, r.cfg.serverIDHi, r.cfg.serverIDHi-r.cfg.serverIDLo+1, r.ctx.Parallelism(), r.ctx.Parallelism())
	}
	return id, nil
}

// rowImage is a row as the server gave it, one value per column.
type rowImage []any

// keyOf renders the primary key of a row (all its columns for a table
// without one) as a string, the same for a snapshot's and the binlog's
// values.
func keyOf(t *tableInfo, row rowImage) string {
	var b strings.Builder
	cols := t.pk
	if len(cols) == 0 {
		cols = make([]int, len(t.cols))
		for i := range cols {
			cols[i] = i
		}
	}
	for _, j := range cols {
		b.WriteString(valueText(&t.cols[j], row[j]))
		b.WriteByte(0)
	}
	return b.String()
}

// nullText is the text of NULL in keys and chunk keys.
const nullText = "\x01NULL"

// valueText renders a value for keys and chunk bounds.
func valueText(c *column, v any) string {
	if v == nil {
		return nullText
	}
	v = padBinary(c, v)
	if n, ok := types.Int64Of(v); ok {
		if c.unsigned {
			if u, ok := unsignedOf(c, v, n).(uint64); ok {
				return strconv.FormatUint(u, 10)
			}
		}
		return strconv.FormatInt(n, 10)
	}
	switch x := v.(type) {
	case uint64:
		return strconv.FormatUint(x, 10)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		if c.dataType == "float" {
			return strconv.FormatFloat(x, 'g', -1, 32)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []byte:
		return string(x)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// chunkKeyOf returns the chunk key of a row, as valueText renders it, or
// that it is NULL.
func chunkKeyOf(t *tableInfo, row rowImage) (k string, null bool) {
	if t.chunkKey < 0 || t.chunkKey >= len(row) || row[t.chunkKey] == nil {
		return "", true
	}
	return valueText(&t.cols[t.chunkKey], row[t.chunkKey]), false
}

// inChunk tells whether a row of the binary log is in chunk c of its
// table: by its chunk key, compared as the server orders it; every row is
// in the one chunk of a table read as one.
func inChunk(t *tableInfo, c *chunk, row rowImage) bool {
	if t.chunkKey < 0 {
		return true
	}
	k, null := chunkKeyOf(t, row)
	return c.contains(t.order, k, null)
}

// buildRow writes a row of the SQL table from a row image.
func (r *reader[T]) buildRow(t *tableInfo, row rowImage, kind changelog.Kind, opTS int64) (types.Row, error) {
	w, rt := r.w, r.rt
	if t.rt != nil {
		w, rt = t.w, t.rt
	}
	w.Reset()
	for j := range t.cols {
		i := t.toRow[j]
		if i < 0 {
			continue
		}
		var v any
		if j < len(row) {
			v = row[j]
		}
		if err := setValue(w, i, rt.Field(i).Type, &t.cols[j], v, r.cfg.values); err != nil {
			return types.Row{}, fmt.Errorf("column %s (%s): %w", t.cols[j].name, t.cols[j].columnType, err)
		}
	}
	r.meta.Set(w, t.db, "", t.name, opTS, kind)
	return w.Finish(), nil
}

// emit emits a change of a row, or reports it as a bad record.
func (r *reader[T]) emit(out connector.Output[T], split connector.SplitOutput[T],
	t *tableInfo, row rowImage, kind changelog.Kind, opTS int64, where string) error {
	v, err := r.buildRow(t, row, kind, opTS)
	if err != nil {
		return out.BadRecord(connector.DeadLetter{Source: r.ctx.SourceName(), Location: t.id() + " at " + where,
			Raw: fmt.Sprint([]any(row)), Error: err.Error()})
	}
	split.Emit(r.record(t, kind, v))
	return nil
}

// readChunk reads a chunk of a table's snapshot without locks: the rows
// the query returns, brought up to date with the changes the binary log
// holds between the positions before and after the query (the chunk's low
// and high), are the chunk's rows at its high position. They are emitted
// in one Read, so that a checkpoint holds all of them or none. A chunk of
// an InnoDB table on MariaDB is read in a consistent snapshot instead
// (readConsistentChunk): the binary log's end is no low position for it
// (consistentSnapshot). A chunk of a table without transactions (MyISAM,
// Aria, ...) is read under a table read lock (readLockedChunk): other
// sessions see its changes at other times than the binary log has them.
func (r *reader[T]) readChunk(out connector.Output[T], c *chunk) (rows int64, err error) {
	conn, err := r.connection() // discovers the tables
	if err != nil {
		return 0, err
	}
	t := r.tables[c.table]
	if t == nil {
		return 0, fmt.Errorf("mysql-cdc: table %s of snapshot chunk %s is gone from the server", c.table, c.ID())
	}
	if t.chunkKey < 0 && (c.start != "" || c.end != "") {
		// The chunk was planned on a key the table no longer splits on (its
		// type or collation changed): read without bounds it would be the
		// whole table, once per chunk.
		return 0, fmt.Errorf("mysql-cdc: table %s changed while its snapshot was read: chunk %d has key bounds, but the table's chunk key is no longer one it splits on (its type or collation changed); start the job again without its checkpoint to snapshot the table anew", t.id(), c.index)
	}
	if r.consistentSnapshot(t) {
		return r.readConsistentChunk(out, t, c)
	}
	if !transactional(t.engine) {
		return r.readLockedChunk(out, t, c)
	}
	low, err := binlogEnd(conn, r.ctx.Log())
	if err != nil {
		return 0, err
	}
	if chunkQueryHook != nil {
		chunkQueryHook(t.id())
	}
	q := chunkQuery(t, c)
	res, err := conn.Execute(q)
	if err != nil {
		return 0, fmt.Errorf("mysql-cdc: reading chunk %d of %s: %w", c.index, t.id(), err)
	}
	defer res.Close()
	// A file and offset: the binlog split's start, the lowest of the
	// chunks' high positions, has its GTID set read once, when the binary
	// log is read from there.
	high, err := binlogEnd(conn, r.ctx.Log())
	if err != nil {
		return 0, err
	}
	buf := newChunkBuffer(res.RowNumber())
	for i := range res.Values {
		row := make(rowImage, len(res.Values[i]))
		for j := range row {
			row[j] = res.Values[i][j].Value()
		}
		buf.put(keyOf(t, row), row)
	}
	if low.compare(high) < 0 {
		if err := r.backfill(t, c, low, high, buf); err != nil {
			return 0, err
		}
	}
	split := out.Split(c.ID())
	for _, k := range buf.order {
		if row, ok := buf.rows[k]; ok {
			if err := r.emit(out, split, t, row, changelog.Insert, 0, "snapshot chunk "+strconv.Itoa(c.index)); err != nil {
				return 0, err
			}
			rows++
		}
	}
	c.high = high
	return rows, nil
}

func chunkQuery(t *tableInfo, c *chunk) string {
	cols := make([]string, len(t.cols))
	for i, col := range t.cols {
		cols[i] = quote(col.name)
		if col.dataType == "float" {
			// The text of a FLOAT has six digits; that of a double the
			// FLOAT's value in full.
			cols[i] += " + 0e0"
		}
	}
	q := "SELECT " + strings.Join(cols, ", ") + " FROM " + quote(t.db) + "." + quote(t.name)
	var where []string
	if t.chunkKey >= 0 {
		col := &t.cols[t.chunkKey]
		k := quote(col.name)
		if c.start != "" {
			where = append(where, k+" >= "+keyLiteral(col, t.order, c.start))
		}
		if c.end != "" {
			end := keyLiteral(col, t.order, c.end)
			if c.start == "" {
				// NULL keys are in no range: the first chunk holds them.
				where = append(where, "("+k+" < "+end+" OR "+k+" IS NULL)")
			} else {
				where = append(where, k+" < "+end)
			}
		}
	}
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	return q
}

// chunkBuffer holds a chunk's rows by key, in the order they came.
type chunkBuffer struct {
	order []string
	seen  map[string]bool
	rows  map[string]rowImage
}

func newChunkBuffer(n int) *chunkBuffer {
	return &chunkBuffer{order: make([]string, 0, n), seen: make(map[string]bool, n), rows: make(map[string]rowImage, n)}
}

func (b *chunkBuffer) put(k string, row rowImage) {
	if !b.seen[k] {
		b.seen[k] = true
		b.order = append(b.order, k)
	}
	b.rows[k] = row
}

func (b *chunkBuffer) remove(k string) { delete(b.rows, k) }

// backfill applies to a chunk's rows the changes of the binary log from
// low to high.
func (r *reader[T]) backfill(t *tableInfo, c *chunk, low, high position, buf *chunkBuffer) error {
	id, err := r.serverID()
	if err != nil {
		return err
	}
	s, err := r.cfg.openStream(id, r.flavor, position{File: low.File, Pos: low.Pos}, r.ctx.Log())
	if err != nil {
		return err
	}
	defer s.close()
	ctx, cancel := context.WithTimeout(context.Background(), max(r.cfg.connectTimeout, 30*time.Second))
	defer cancel()
	for {
		ev, _, next, err := s.next(ctx)
		if err != nil {
			return err
		}
		if ev == nil {
			return fmt.Errorf("mysql-cdc: the binary log did not reach %s, where chunk %d of %s ends, within %v", high, c.index, t.id(), max(r.cfg.connectTimeout, 30*time.Second))
		}
		if e, ok := ev.Event.(*replication.RowsEvent); ok && string(e.Table.Schema) == t.db && string(e.Table.Table) == t.name {
			applyToChunk(t, c, e, buf)
		}
		if next.compare(high) >= 0 {
			return nil
		}
	}
}

// applyToChunk applies a rows event to the rows of a chunk.
func applyToChunk(t *tableInfo, c *chunk, e *replication.RowsEvent, buf *chunkBuffer) {
	in := func(row rowImage) bool { return inChunk(t, c, row) }
	switch e.Type() {
	case replication.EnumRowsEventTypeInsert:
		for _, row := range e.Rows {
			if in(row) {
				buf.put(keyOf(t, row), row)
			}
		}
	case replication.EnumRowsEventTypeUpdate:
		for i := 0; i+1 < len(e.Rows); i += 2 {
			before, after := rowImage(e.Rows[i]), rowImage(e.Rows[i+1])
			if in(before) {
				buf.remove(keyOf(t, before))
			}
			if in(after) {
				buf.put(keyOf(t, after), after)
			}
		}
	case replication.EnumRowsEventTypeDelete:
		for _, row := range e.Rows {
			if in(row) {
				buf.remove(keyOf(t, row))
			}
		}
	}
}
