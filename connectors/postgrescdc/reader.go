package postgrescdc

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc"
	"github.com/eddystream/eddy/pipeline"
	"github.com/eddystream/eddy/sql/types"
)

// reader reads the chunks and the stream split a subtask is given. T is
// the record: a SQL table's connector.TableRecord, or a pipeline's Event.
type reader[T any] struct {
	ctx connector.ReaderContext
	cfg *config
	// schema is the SQL table's columns, nil in a pipeline, whose tables
	// have each their own (tableInfo.rt).
	schema *types.RowType
	rt     *types.RowType
	w      *types.RowWriter
	conv   converter
	meta   cdc.MetaColumns
	// record makes the record of a change of a table's row.
	record func(t *tableInfo, kind changelog.Kind, row types.Row) T
	// schemaEvent, in a pipeline, makes the record of a schema event; nil
	// for a SQL table, whose columns are fixed.
	schemaEvent func(e pipeline.Event) T

	conn   *pgconn.PgConn
	tables map[string]*tableInfo // by schema.table, once discovered

	chunks *cdc.ReaderChunks[*chunk]
	// live holds the snapshots this run of the job exported, by name, with
	// their consistent points; newest is the last the enumerator sent.
	live      map[string]uint64
	newest    string
	askedLive bool
	stream    *streamReader[T]
	failed    bool // Read returned an error
	// chunksRead and chunkRows count the snapshot chunks the reader read
	// and their rows, for Status.
	chunksRead int
	chunkRows  int64
}

// newReader returns a reader of a SQL table's rows, or for a pipeline
// (table nil) of each captured table's own; record makes the records.
func newReader[T any](ctx connector.ReaderContext, cfg *config, table *connector.Table,
	record func(t *tableInfo, kind changelog.Kind, row types.Row) T) *reader[T] {
	r := &reader[T]{ctx: ctx, cfg: cfg, meta: cdc.NoMetaColumns, record: record, live: map[string]uint64{},
		chunks: cdc.NewReaderChunks(ctx, chunkCodec)}
	if table != nil {
		r.schema, r.rt, r.meta = table.Schema, table.RowType(), cdc.MetaColumnsOf(table)
		r.w = types.NewRowWriter(r.rt, types.NewArena(64<<10))
	}
	return r
}

// AddSplits takes chunks and the stream split.
func (r *reader[T]) AddSplits(splits []connector.Split) error {
	return r.chunks.AddSplits(splits, 's', func(d *cdc.Decoder) {
		r.stream = &streamReader[T]{r: r, split: readStreamSplit(d)}
	})
}

// NoMoreSplits notes that the enumerator has no more splits for the reader.
func (r *reader[T]) NoMoreSplits() { r.chunks.NoMoreSplits() }

// HandleEvent takes the enumerator's acknowledgements and snapshots.
func (r *reader[T]) HandleEvent(event []byte) error {
	switch {
	case len(event) > 9 && event[0] == eventSnapshot:
		name := string(event[9:])
		r.live[name] = binary.BigEndian.Uint64(event[1:9])
		r.newest, r.askedLive = name, false
		return nil
	case r.chunks.HandleAck(event):
		return nil
	}
	return fmt.Errorf("postgres-cdc: unknown enumerator event %q", event)
}

// Read reads the next chunk, or the changes of the stream available now.
func (r *reader[T]) Read(out connector.Output[T]) error {
	err := r.read(out)
	if err != nil {
		r.failed = true
	}
	return err
}

func (r *reader[T]) read(out connector.Output[T]) error {
	r.chunks.FinishAcked(func(id string) { out.Split(id).Finish() })
	if out.Room() <= 0 {
		return nil
	}
	if c, ok := r.chunks.Next(); ok {
		if _, ok := r.live[c.snapshot]; !ok {
			if r.newest == "" {
				// A chunk restored from a checkpoint: its snapshot is gone.
				if !r.askedLive {
					r.askedLive = true
					r.ctx.SendEvent([]byte{eventNeedSnapshot})
				}
				time.Sleep(2 * time.Millisecond)
				return nil
			}
			c.snapshot, c.lsn = r.newest, r.live[r.newest]
		}
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
	if r.stream != nil {
		return r.stream.read(out)
	}
	r.chunks.Idle()
	return nil
}

// SnapshotState returns the chunks the reader holds and the stream's
// position.
func (r *reader[T]) SnapshotState(id int64) ([]connector.Split, error) {
	out := r.chunks.Splits()
	if r.stream != nil {
		out = append(out, encodeStreamSplit(r.stream.state(id)))
	}
	return out, nil
}

// NotifyCheckpointComplete lets the slot's confirmed_flush_lsn advance to
// the stream's position in the completed checkpoint.
func (r *reader[T]) NotifyCheckpointComplete(id int64) error {
	if r.stream != nil {
		r.stream.checkpointComplete(id)
	}
	return nil
}

// Status reports the snapshot chunks the reader read and, once it reads
// the stream, where it is and how far behind the server (streamReader.status).
func (r *reader[T]) Status() map[string]any {
	m := map[string]any{"snapshotChunksRead": r.chunksRead, "snapshotRecords": r.chunkRows}
	if r.stream != nil {
		r.stream.status(m, time.Now())
	}
	return m
}

// Close closes the reader's connections; with 'debezium.slot.drop.on.stop'
// the stream's reader drops the slot unless it failed.
func (r *reader[T]) Close() error {
	var err error
	if r.stream != nil {
		r.stream.close()
		if r.cfg.dropOnStop && !r.failed {
			ctx, cancel := context.WithTimeout(context.Background(), r.cfg.connectTimeout+10*time.Second)
			err = r.cfg.dropSlot(ctx)
			cancel()
		}
	}
	if r.conn != nil {
		r.conn.Close(context.Background())
	}
	return err
}

// connection returns the reader's connection to the database, and the
// captured tables, opening and discovering them the first time.
func (r *reader[T]) connection() (*pgconn.PgConn, error) {
	if r.conn != nil {
		return r.conn, nil
	}
	ctx := context.Background()
	conn, err := r.cfg.connect(ctx, false)
	if err != nil {
		return nil, err
	}
	tables, err := r.cfg.discover(ctx, conn, r.schema, nil, false)
	if err != nil {
		conn.Close(ctx)
		return nil, err
	}
	r.tables = map[string]*tableInfo{}
	for _, t := range tables {
		r.tables[t.id()] = t
	}
	r.conn = conn
	return conn, nil
}

// writer returns the writer of t's rows and their type: the table's own in
// a pipeline, the SQL table's otherwise.
func (r *reader[T]) writer(t *tableInfo) (*types.RowWriter, *types.RowType) {
	if t.rt != nil {
		return t.w, t.rt
	}
	return r.w, r.rt
}

// setMeta sets the metadata columns of a row of t.
func (r *reader[T]) setMeta(t *tableInfo, kind changelog.Kind, opTS int64) {
	r.meta.Set(r.w, r.cfg.database, t.namespace, t.name, opTS, kind)
}

// badRecord reports a row that could not be converted.
func (r *reader[T]) badRecord(out connector.Output[T], t *tableInfo, where string, values [][]byte, cols []int, err error) error {
	var raw []string
	for k, v := range values {
		name := ""
		if cols != nil {
			name = t.cols[cols[k]].name + "="
		} else if k < len(t.cols) {
			name = t.cols[k].name + "="
		}
		if v == nil {
			raw = append(raw, name+"NULL")
		} else {
			raw = append(raw, name+strconv.Quote(string(v)))
		}
	}
	w, _ := r.writer(t)
	w.Reset()
	return out.BadRecord(connector.DeadLetter{Source: r.ctx.SourceName(), Location: t.id() + " at " + where,
		Raw: strings.Join(raw, ", "), Error: err.Error()})
}

// snapshotColumns returns the columns a chunk query selects (those the SQL
// table declares) and the query's select list.
func snapshotColumns(t *tableInfo) ([]int, string) {
	var cols []int
	var names []string
	for j, c := range t.cols {
		if t.toRow[j] >= 0 {
			cols = append(cols, j)
			names = append(names, quoteIdent(c.name))
		}
	}
	if len(names) == 0 {
		return nil, "1"
	}
	return cols, strings.Join(names, ", ")
}

// chunkQuery returns the statements that read a chunk in its snapshot.
func chunkQuery(t *tableInfo, c *chunk) (string, []int) {
	cols, list := snapshotColumns(t)
	q := "SELECT " + list + " FROM " + t.quoted()
	if t.chunkKey >= 0 {
		k := quoteIdent(t.cols[t.chunkKey].name)
		var where []string
		if c.hasStart {
			where = append(where, k+" >= "+strconv.FormatInt(c.start, 10))
		}
		if c.hasEnd {
			if !c.hasStart {
				// NULL keys are in no range: the first chunk holds them.
				where = append(where, "("+k+" < "+strconv.FormatInt(c.end, 10)+" OR "+k+" IS NULL)")
			} else {
				where = append(where, k+" < "+strconv.FormatInt(c.end, 10))
			}
		}
		if len(where) > 0 {
			q += " WHERE " + strings.Join(where, " AND ")
		}
	}
	tx := "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; "
	if c.snapshot != "" {
		tx += "SET TRANSACTION SNAPSHOT " + quoteLiteral(c.snapshot) + "; "
	}
	return tx + q + "; COMMIT", cols
}

// readChunk reads a chunk of a table's snapshot in the chunk's exported
// snapshot, without locks, and emits its rows as inserts in one Read, so
// that a checkpoint holds all of them or none.
func (r *reader[T]) readChunk(out connector.Output[T], c *chunk) (rows int64, err error) {
	conn, err := r.connection()
	if err != nil {
		return 0, err
	}
	t := r.tables[c.table]
	if t == nil {
		return 0, fmt.Errorf("postgres-cdc: table %s of snapshot chunk %s is gone from the server", c.table, c.ID())
	}
	q, cols := chunkQuery(t, c)
	split := out.Split(c.ID())
	where := "snapshot chunk " + strconv.Itoa(c.index)
	mrr := conn.Exec(context.Background(), q)
	var emitErr error
	for mrr.NextResult() {
		rr := mrr.ResultReader()
		for rr.NextRow() && emitErr == nil {
			vals := rr.Values()
			if len(vals) != len(cols) && cols != nil {
				continue
			}
			emitErr = r.emitSnapshotRow(out, split, t, cols, vals, where)
			rows++
		}
		if _, err := rr.Close(); err != nil && emitErr == nil {
			emitErr = err
		}
	}
	if err := mrr.Close(); err != nil && emitErr == nil {
		emitErr = err
	}
	if emitErr != nil {
		// The connection is in a failed transaction: a new one serves the
		// next chunk.
		conn.Close(context.Background())
		r.conn = nil
		return 0, fmt.Errorf("postgres-cdc: reading chunk %d of %s in snapshot %s: %w", c.index, t.id(), c.snapshot, emitErr)
	}
	return rows, nil
}

func (r *reader[T]) emitSnapshotRow(out connector.Output[T], split connector.SplitOutput[T],
	t *tableInfo, cols []int, vals [][]byte, where string) error {
	w, rt := r.writer(t)
	for k, j := range cols {
		i := t.toRow[j]
		if err := r.conv.setField(w, i, rt.Field(i).Type, &t.cols[j], vals[k]); err != nil {
			return r.badRecord(out, t, where, vals, cols, fmt.Errorf("column %s (%s): %w", t.cols[j].name, t.cols[j].typeName, err))
		}
	}
	r.setMeta(t, changelog.Insert, 0)
	split.Emit(r.record(t, changelog.Insert, w.Finish()))
	return nil
}
