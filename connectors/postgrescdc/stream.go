package postgrescdc

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc"
	"github.com/eddystream/eddy/pipeline"
)

// streamReader reads the stream split: every change of the captured tables
// from the slot, in commit order.
//
// Its position is the commit LSN of the transaction being read (the final
// LSN of pgoutput's BEGIN, where the transaction's commit record starts)
// and the number of changes of captured tables read in it, so that a
// restore reads the transaction again and skips them; between
// transactions it is the end of the last commit, or, while the captured
// tables are idle, the server's WAL position from keepalives. Logical
// decoding sends a slot's reader exactly the transactions whose commit
// record starts at or after the slot's start (SnapBuildXactNeedsSkip in
// PostgreSQL's snapbuild.c compares that LSN with start_decoding_at: the
// consistent point of a new slot, later its confirmed_flush_lsn), and the
// snapshot a slot exports at its creation holds exactly the transactions
// that committed before its consistent point. So a transaction whose
// commit LSN is below a chunk's consistent point is already in the chunk's
// rows and its changes of them are skipped, and a transaction below the
// position was read before the checkpoint. The slot's confirmed_flush_lsn
// advances only to positions of completed checkpoints: the server keeps
// every transaction a restore may need.
type streamReader[T any] struct {
	r     *reader[T]
	split *streamSplit
	conn  *pgconn.PgConn
	rels  map[uint32]*tableInfo // by relation id; nil for tables not captured

	pos    uint64 // commit LSN of the transaction being read, or where the next one starts
	skip   int    // changes of the transaction at pos to skip, read before a restore
	rows   int    // changes of captured tables read in the transaction
	inTx   bool
	skipTx bool // the transaction is before pos
	txLSN  uint64
	txTime int64 // commit time, milliseconds since the epoch

	// chunks are the snapshot's chunks by table, sorted by start, while the
	// stream is before maxLSN.
	chunks map[string][]*chunk
	maxLSN uint64

	// announced is set once a pipeline's source has announced its tables.
	announced bool
	// txTables are, in a pipeline, the tables as they were when the
	// transaction being read began, kept once a schema change in it
	// changes them (nil before): a checkpoint in the transaction holds
	// them, since a restore reads the transaction again from its start.
	txTables map[string]*tableInfo

	confirmed uint64 // the slot's confirmed_flush_lsn as last sent

	// What Status reports: the WAL messages received, the LSN of the last
	// one, the WAL end the server's last keepalive reported, the commit
	// time of the last transaction begun, and whether the reader has
	// caught up with the server since (it found no message waiting, or a
	// keepalive came between transactions).
	events     int64
	received   uint64
	serverEnd  uint64
	lastCommit int64
	caughtUp   bool
	ckpts      []ckptPos
	needStatus bool
	lastStatus time.Time
	// wal asks the server for its current WAL position, for lagBytes, on
	// a connection of its own, in the background; keepalive is set when
	// it is ahead of the reader, which has caught up: the next keepalive,
	// asked for at once, tells how far the server sent the slot's WAL.
	wal       *cdc.Probe[uint64]
	walConn   *walConn
	keepalive bool
}

// walConn is the ordinary connection on which a stream reader's probe
// reads the server's current WAL position; only the probe's goroutine
// uses it.
type walConn struct {
	cfg  *config
	conn *pgconn.PgConn
}

// walLSNQuery is the server's current WAL position: where it writes, or on
// a standby (which decodes logical replication from PostgreSQL 16) where
// it has received the primary's WAL to.
const walLSNQuery = "SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_receive_lsn() ELSE pg_current_wal_lsn() END"

// lsn reads the server's current WAL position, connecting first if need
// be; after an error the connection is closed and opened again next time.
func (w *walConn) lsn(ctx context.Context) (uint64, error) {
	if w.conn == nil {
		conn, err := w.cfg.connect(ctx, false)
		if err != nil {
			return 0, err
		}
		w.conn = conn
	}
	rows, err := query(ctx, w.conn, walLSNQuery)
	if err == nil && (len(rows) != 1 || len(rows[0]) != 1 || rows[0][0] == nil) {
		err = fmt.Errorf("%s returned no WAL position (%d rows, or NULL)", walLSNQuery, len(rows))
	}
	if err != nil {
		w.close()
		return 0, fmt.Errorf("postgres-cdc: reading the server's WAL position at %s: %w", w.cfg.addr(), err)
	}
	lsn, err := pglogrepl.ParseLSN(string(rows[0][0]))
	if err != nil {
		return 0, fmt.Errorf("postgres-cdc: the server's WAL position %q at %s: %w", rows[0][0], w.cfg.addr(), err)
	}
	return uint64(lsn), nil
}

func (w *walConn) close() {
	if w.conn != nil {
		w.conn.Close(context.Background())
		w.conn = nil
	}
}

// ckptPos is the stream's position in a checkpoint.
type ckptPos struct {
	id  int64
	lsn uint64
}

func (s *streamReader[T]) open() error {
	r := s.r
	qc, err := r.connection()
	if err != nil {
		return err
	}
	ctx := context.Background()
	c := r.cfg
	sl, err := slot(ctx, qc, c.slot)
	// After a crash the server may not have noticed yet that the slot's
	// last reader is gone: wait for it as long as for a connection.
	for deadline := time.Now().Add(c.connectTimeout); err == nil && sl.active && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		sl, err = slot(ctx, qc, c.slot)
	}
	if err != nil {
		return err
	}
	if err := c.ensureDDLCapture(ctx, qc); err != nil {
		return err
	}
	s.pos, s.skip = s.split.pos, s.split.skip
	if len(s.split.tables) > 0 {
		// The tables as they were at the split's position, not as they
		// are now: the stream from there holds their changes, and their
		// relations say when they change.
		r.tables = map[string]*tableInfo{}
		for _, t := range s.split.tables {
			if err := c.pipelineTable(t, t.version); err != nil {
				return err
			}
			r.tables[t.id()] = t
		}
	}
	switch {
	case !sl.exists:
		return fmt.Errorf("postgres-cdc: replication slot '%s' ('slot.name') does not exist: it was dropped after the job started, and the changes since are lost to it; start the job afresh (without its checkpoints) to read a new snapshot",
			c.slot)
	case sl.active:
		return c.slotInUse(sl.pid)
	case s.pos != 0 && sl.confirmedFlush > s.pos:
		return fmt.Errorf("postgres-cdc: replication slot '%s' has confirmed changes up to %s, past the position %s the job restores: the changes between are gone from it (was the job restored from an older checkpoint or savepoint, or the slot shared?); start the job afresh to read a new snapshot",
			c.slot, pglogrepl.LSN(sl.confirmedFlush), pglogrepl.LSN(s.pos))
	}
	if s.pos == 0 {
		s.pos = sl.confirmedFlush
	}
	s.confirmed = s.pos
	s.chunks = map[string][]*chunk{}
	for _, ch := range s.split.chunks {
		s.chunks[ch.table] = append(s.chunks[ch.table], ch)
		s.maxLSN = max(s.maxLSN, ch.lsn)
	}
	for _, cs := range s.chunks {
		sortChunks(cs)
	}
	if s.conn, err = c.connect(ctx, true); err != nil {
		return err
	}
	args := []string{"proto_version '1'", "publication_names " + quoteLiteral(quoteIdent(c.publication))}
	if c.ddlTrigger {
		// The event triggers' messages (PostgreSQL 14 and later).
		args = append(args, "messages 'true'")
	}
	err = pglogrepl.StartReplication(ctx, s.conn, c.slot, pglogrepl.LSN(s.pos), pglogrepl.StartReplicationOptions{
		Mode:       pglogrepl.LogicalReplication,
		PluginArgs: args,
	})
	if err != nil {
		s.conn.Close(ctx)
		s.conn = nil
		switch pgCode(err) {
		case "55006":
			return c.slotInUse("unknown")
		}
		return fmt.Errorf("postgres-cdc: starting replication from slot '%s' at %s: %w", c.slot, pglogrepl.LSN(s.pos), err)
	}
	s.rels = map[uint32]*tableInfo{}
	s.lastStatus = time.Now()
	if s.wal == nil {
		s.walConn = &walConn{cfg: c}
		s.wal = cdc.NewProbe[uint64](time.Second, r.ctx.Log(),
			"postgres-cdc: the server's WAL position (pg_current_wal_lsn()), which lagBytes measures the lag against,", s.walConn.close)
	}
	r.ctx.Log().Info("postgres-cdc: streaming changes", "slot", c.slot, "from", pglogrepl.LSN(s.pos), "skip", s.skip)
	return nil
}

// state returns the split as a checkpoint holds it, and notes the position
// to confirm to the server once checkpoint id completes.
func (s *streamReader[T]) state(id int64) *streamSplit {
	if s.conn == nil {
		return s.split
	}
	st := &streamSplit{pos: s.pos, skip: s.skip}
	if s.inTx && !s.skipTx {
		st.skip = max(s.rows, s.skip)
	}
	for _, cs := range s.chunks {
		st.chunks = append(st.chunks, cs...)
	}
	if s.r.schemaEvent != nil {
		tables := s.r.tables
		if s.inTx && s.txTables != nil {
			tables = s.txTables
		}
		st.tables = sortedTables(tables)
	}
	s.ckpts = append(s.ckpts, ckptPos{id, s.pos})
	return st
}

// checkpointComplete lets the slot advance to the position of checkpoint
// id: transactions that commit at or after it are sent again after a
// restart.
func (s *streamReader[T]) checkpointComplete(id int64) {
	n := 0
	for _, p := range s.ckpts {
		if p.id <= id {
			if p.lsn > s.confirmed {
				s.confirmed, s.needStatus = p.lsn, true
			}
			continue
		}
		s.ckpts[n] = p
		n++
	}
	s.ckpts = s.ckpts[:n]
}

// sendStatus tells the server the position the slot may advance to; with
// reply, it asks for a keepalive with the server's WAL position.
func (s *streamReader[T]) sendStatus(reply bool) error {
	lsn := pglogrepl.LSN(s.confirmed)
	err := pglogrepl.SendStandbyStatusUpdate(context.Background(), s.conn, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: pglogrepl.LSN(max(s.pos, s.confirmed)), WALFlushPosition: lsn, WALApplyPosition: lsn, ReplyRequested: reply,
	})
	if err != nil {
		return fmt.Errorf("postgres-cdc: sending the stream's position to the server: %w", err)
	}
	s.lastStatus, s.needStatus = time.Now(), false
	return nil
}

func (s *streamReader[T]) close() {
	if s.wal != nil {
		s.wal.Close()
	}
	if s.conn != nil {
		s.conn.Close(context.Background())
		s.conn = nil
	}
}

// read emits the changes available now.
func (s *streamReader[T]) read(out connector.Output[T]) error {
	if s.conn == nil {
		if err := s.open(); err != nil {
			return err
		}
	}
	since := time.Since(s.lastStatus)
	if due := since >= s.r.cfg.heartbeat || (s.keepalive && since >= time.Second); s.needStatus || due {
		s.keepalive = s.keepalive && !due
		if err := s.sendStatus(due); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	split := out.Split(streamSplitID)
	if !s.announced {
		s.announced = true
		s.announce(split)
	}
	for out.Room() > 0 {
		msg, err := s.conn.ReceiveMessage(ctx)
		if err != nil {
			if pgconn.Timeout(err) || ctx.Err() != nil {
				s.caughtUp = true
				return nil
			}
			return fmt.Errorf("postgres-cdc: reading slot '%s' at %s: %w", s.r.cfg.slot, pglogrepl.LSN(s.pos), err)
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			if len(m.Data) == 0 {
				continue
			}
			switch m.Data[0] {
			case pglogrepl.PrimaryKeepaliveMessageByteID:
				k, err := pglogrepl.ParsePrimaryKeepaliveMessage(m.Data[1:])
				if err != nil {
					return fmt.Errorf("postgres-cdc: a keepalive from the server: %w", err)
				}
				s.serverEnd = max(s.serverEnd, uint64(k.ServerWALEnd))
				if !s.inTx {
					s.caughtUp = true
				}
				if !s.inTx && uint64(k.ServerWALEnd) > s.pos {
					// Every transaction that commits before it was sent.
					s.pos, s.skip = uint64(k.ServerWALEnd), 0
				}
				if k.ReplyRequested {
					if err := s.sendStatus(false); err != nil {
						return err
					}
				}
			case pglogrepl.XLogDataByteID:
				x, err := pglogrepl.ParseXLogData(m.Data[1:])
				if err != nil {
					return fmt.Errorf("postgres-cdc: a WAL message from the server: %w", err)
				}
				s.events++
				s.received = max(s.received, uint64(x.WALStart))
				if err := s.message(out, split, x.WALData); err != nil {
					return err
				}
			}
		case *pgproto3.ErrorResponse:
			return fmt.Errorf("postgres-cdc: slot '%s' at %s: %w", s.r.cfg.slot, pglogrepl.LSN(s.pos), pgconn.ErrorResponseToPgError(m))
		}
	}
	return nil
}

// readTo returns how far the reader has read the WAL: the LSN of the last
// message received in a transaction, otherwise the end of the last
// transaction or, if later, the WAL end of the server's last keepalive,
// up to which the server sent every transaction.
func (s *streamReader[T]) readTo() uint64 {
	if s.inTx {
		return s.received
	}
	return max(s.received, s.pos)
}

// status adds to a status report the stream's position (positionLsn: the
// commit LSN of the transaction being read, or where the next one starts),
// the LSN of the last WAL message received (receivedLsn), the slot's
// confirmed_flush_lsn as last sent (confirmedFlushLsn) and the WAL read
// past it (unconfirmedBytes: what the server keeps for a restore until the
// next checkpoint completes), the WAL end of the server's last keepalive
// (serverWalEnd), the server's current WAL position (serverWalLsn, read
// in the background at most once a second) and the WAL from what the
// reader has read to it (lagBytes; both left out while the position is
// unknown), the WAL messages received (eventsRecords), the commit time of
// the last transaction read (lastEventTime) and the lag behind the server
// (lagMillis): now less that time while messages wait to be read, 0 once
// the reader has caught up.
func (s *streamReader[T]) status(m map[string]any, now time.Time) {
	m["phase"] = "stream"
	m["slot"] = s.r.cfg.slot
	if s.conn == nil && s.events == 0 {
		return
	}
	m["positionLsn"] = pglogrepl.LSN(s.pos).String()
	m["receivedLsn"] = pglogrepl.LSN(s.received).String()
	m["confirmedFlushLsn"] = pglogrepl.LSN(s.confirmed).String()
	m["eventsRecords"] = s.events
	read := s.readTo()
	m["unconfirmedBytes"] = int64(read - min(s.confirmed, read))
	if s.serverEnd > 0 {
		m["serverWalEnd"] = pglogrepl.LSN(s.serverEnd).String()
	}
	if s.wal != nil {
		var lsn uint64
		var ok bool
		if s.conn != nil {
			lsn, ok = s.wal.Poll(now, s.walConn.lsn)
		} else {
			lsn, ok = s.wal.Latest(now)
		}
		if ok {
			m["serverWalLsn"] = pglogrepl.LSN(lsn).String()
			m["lagBytes"] = int64(lsn - min(lsn, read))
			// The server may have written WAL the slot does not publish
			// (other tables, other databases) and sent it: a keepalive
			// tells.
			s.keepalive = lsn > read && s.caughtUp && !s.inTx
		}
	}
	if s.lastCommit > 0 {
		m["lastEventTime"] = time.UnixMilli(s.lastCommit).UTC().Format(time.RFC3339Nano)
	}
	switch {
	case s.caughtUp:
		m["lagMillis"] = int64(0)
	case s.lastCommit > 0:
		m["lagMillis"] = max(now.UnixMilli()-s.lastCommit, 0)
	}
}

// message handles a pgoutput message.
func (s *streamReader[T]) message(out connector.Output[T], split connector.SplitOutput[T], data []byte) error {
	if len(data) == 0 {
		return nil
	}
	switch pglogrepl.MessageType(data[0]) {
	case pglogrepl.MessageTypeBegin:
		var b pglogrepl.BeginMessage
		if err := b.Decode(data[1:]); err != nil {
			return fmt.Errorf("postgres-cdc: a BEGIN message: %w", err)
		}
		s.txLSN, s.txTime = uint64(b.FinalLSN), b.CommitTime.UnixMilli()
		s.lastCommit, s.caughtUp = s.txTime, false
		s.inTx, s.rows, s.txTables = true, 0, nil
		s.skipTx = s.txLSN < s.pos
		if s.txLSN > s.pos {
			s.pos, s.skip = s.txLSN, 0
		}
		if s.chunks != nil && s.txLSN >= s.maxLSN {
			s.chunks = nil // past every chunk's consistent point
		}
		return nil
	case pglogrepl.MessageTypeCommit:
		var c pglogrepl.CommitMessage
		if err := c.Decode(data[1:]); err != nil {
			return fmt.Errorf("postgres-cdc: a COMMIT message: %w", err)
		}
		s.inTx = false
		if end := uint64(c.TransactionEndLSN); end > s.pos {
			s.pos, s.skip = end, 0
		}
		return nil
	case pglogrepl.MessageTypeRelation:
		var rel pglogrepl.RelationMessage
		if err := rel.Decode(data[1:]); err != nil {
			return fmt.Errorf("postgres-cdc: a RELATION message: %w", err)
		}
		if s.r.schemaEvent != nil {
			return s.pipelineRelation(split, &rel)
		}
		return s.relation(&rel)
	case pglogrepl.MessageTypeMessage:
		return s.logicalMessage(split, data)
	case pglogrepl.MessageTypeInsert, pglogrepl.MessageTypeUpdate, pglogrepl.MessageTypeDelete:
		return s.change(out, split, data)
	case pglogrepl.MessageTypeTruncate:
		var tr pglogrepl.TruncateMessage
		if err := tr.Decode(data[1:]); err != nil {
			return fmt.Errorf("postgres-cdc: a TRUNCATE message: %w", err)
		}
		if s.skipTx {
			return nil
		}
		if s.r.schemaEvent != nil {
			return s.truncate(split, &tr)
		}
		for _, id := range tr.RelationIDs {
			if t := s.rels[id]; t != nil {
				return fmt.Errorf("postgres-cdc: table %s was truncated (commit %s): a TRUNCATE removes rows without a change for each, which a changelog cannot carry; start the job afresh with a new snapshot (a new 'slot.name', without its checkpoints)",
					t.id(), pglogrepl.LSN(s.txLSN))
			}
		}
	}
	return nil
}

// relation maps a relation of the stream to a captured table, and checks
// that its columns are still those the job started with, and its name.
func (s *streamReader[T]) relation(rel *pglogrepl.RelationMessage) error {
	id := rel.Namespace + "." + rel.RelationName
	t := s.r.tables[id]
	if t != nil && t.oid != 0 && t.oid != rel.RelationID {
		// Another table has the name now: its changes are not the
		// table's, and skipping them would lose them unseen.
		return fmt.Errorf("postgres-cdc: table %s was dropped or renamed, and another table took its name (seen at commit %s): a SQL table's source reads the table it found at the start; start the job afresh for the new table (a new 'slot.name', without its checkpoints)",
			id, pglogrepl.LSN(s.txLSN))
	}
	if old := s.r.tableByOID(rel.RelationID); t == nil && old != nil {
		return fmt.Errorf("postgres-cdc: table %s was renamed to %s (seen at commit %s): a SQL table's source reads the tables it found at the start; make 'schema-name' and 'table-name' match the new name and start the job again from a savepoint",
			old.id(), id, pglogrepl.LSN(s.txLSN))
	}
	s.rels[rel.RelationID] = t
	if t == nil {
		return nil
	}
	same := len(rel.Columns) == len(t.cols)
	for i := 0; same && i < len(rel.Columns); i++ {
		same = rel.Columns[i].Name == t.cols[i].name
	}
	if !same {
		names := make([]string, len(rel.Columns))
		for i, c := range rel.Columns {
			names[i] = c.Name
		}
		return fmt.Errorf("postgres-cdc: table %s has columns (%v) at %s and had (%s) when the job started: a SQL table's columns are fixed when the job starts; declare the new columns and start the job again from a savepoint",
			t.id(), names, pglogrepl.LSN(s.txLSN), t.columnNames())
	}
	return nil
}

// covered tells whether the snapshot already holds the change of the
// transaction being read to a row (its tuple): the transaction committed
// before the consistent point of the row's chunk.
func (s *streamReader[T]) covered(t *tableInfo, tup *pglogrepl.TupleData) (bool, error) {
	cs := s.chunks[t.id()]
	if len(cs) == 0 {
		return false, nil
	}
	c := cs[0]
	if t.chunkKey >= 0 && len(cs) > 1 && tup != nil && t.chunkKey < len(tup.Columns) {
		col := tup.Columns[t.chunkKey]
		var data []byte
		if col.DataType == pglogrepl.TupleDataTypeText {
			data = col.Data
		}
		k, ok, err := chunkKeyOf(data)
		if err != nil {
			return false, fmt.Errorf("postgres-cdc: table %s: %w", t.id(), err)
		}
		if ok {
			i := sort.Search(len(cs), func(i int) bool { return cs[i].hasStart && cs[i].start > k })
			c = cs[max(i-1, 0)]
		}
	}
	return s.txLSN < c.lsn, nil
}

// change emits the change of an INSERT, UPDATE or DELETE message.
func (s *streamReader[T]) change(out connector.Output[T], split connector.SplitOutput[T], data []byte) error {
	if s.skipTx {
		return nil
	}
	msg, err := pglogrepl.Parse(data)
	if err != nil {
		return fmt.Errorf("postgres-cdc: a change message at %s: %w", pglogrepl.LSN(s.txLSN), err)
	}
	var relID uint32
	switch m := msg.(type) {
	case *pglogrepl.InsertMessage:
		relID = m.RelationID
	case *pglogrepl.UpdateMessage:
		relID = m.RelationID
	case *pglogrepl.DeleteMessage:
		relID = m.RelationID
	}
	t := s.rels[relID]
	if t == nil {
		return nil
	}
	s.rows++
	if s.rows <= s.skip {
		return nil
	}
	// A pipeline's table without REPLICA IDENTITY FULL has its updates
	// without their old rows, and its deletes with the key alone.
	upsert := s.r.cfg.upsert || (s.r.schemaEvent != nil && !t.full)
	emit := func(tup, old *pglogrepl.TupleData, kind changelog.Kind) error {
		return s.emit(out, split, t, tup, old, kind)
	}
	switch m := msg.(type) {
	case *pglogrepl.InsertMessage:
		if cov, err := s.covered(t, m.Tuple); err != nil || cov {
			return err
		}
		return emit(m.Tuple, nil, changelog.Insert)
	case *pglogrepl.DeleteMessage:
		if m.OldTuple == nil || (!upsert && m.OldTupleType != pglogrepl.DeleteMessageTupleTypeOld) {
			return s.noOldRow(t, "delete")
		}
		if cov, err := s.covered(t, m.OldTuple); err != nil || cov {
			return err
		}
		return emit(m.OldTuple, nil, changelog.Delete)
	case *pglogrepl.UpdateMessage:
		old := m.OldTuple
		if !upsert && (old == nil || m.OldTupleType != pglogrepl.UpdateMessageTupleTypeOld) {
			return s.noOldRow(t, "update")
		}
		before := old
		if before == nil {
			before = m.NewTuple // the key did not change
		}
		bc, err := s.covered(t, before)
		if err != nil {
			return err
		}
		ac, err := s.covered(t, m.NewTuple)
		if err != nil {
			return err
		}
		full := old
		if m.OldTupleType != pglogrepl.UpdateMessageTupleTypeOld {
			full = nil // a key tuple holds no other column
		}
		switch {
		case bc && ac:
			return nil
		case bc:
			return emit(m.NewTuple, full, changelog.Insert)
		case ac:
			return emit(old, nil, changelog.Delete)
		case old != nil && keyChanged(t, old, m.NewTuple):
			// A new key is a new row: upsert sinks key by it.
			if err := emit(old, nil, changelog.Delete); err != nil {
				return err
			}
			return emit(m.NewTuple, full, changelog.Insert)
		case upsert:
			return emit(m.NewTuple, full, changelog.UpdateAfter)
		}
		if err := emit(old, nil, changelog.UpdateBefore); err != nil {
			return err
		}
		return emit(m.NewTuple, full, changelog.UpdateAfter)
	}
	return nil
}

// keyChanged tells whether an update changed the primary key.
func keyChanged(t *tableInfo, old, new *pglogrepl.TupleData) bool {
	for _, j := range t.pk {
		if j >= len(old.Columns) || j >= len(new.Columns) {
			return false
		}
		a, b := old.Columns[j], new.Columns[j]
		if b.DataType == pglogrepl.TupleDataTypeToast {
			continue // unchanged
		}
		if a.DataType != b.DataType || string(a.Data) != string(b.Data) {
			return true
		}
	}
	return false
}

func (s *streamReader[T]) noOldRow(t *tableInfo, what string) error {
	return fmt.Errorf("postgres-cdc: a %s of table %s (commit %s) carries no old row: the table's REPLICA IDENTITY is no longer FULL, which 'changelog-mode' = 'all' needs; run ALTER TABLE %s REPLICA IDENTITY FULL and restart the job, or use 'changelog-mode' = 'upsert'",
		what, t.id(), pglogrepl.LSN(s.txLSN), t.quoted())
}

// emit emits a change of a row from its tuple; a column the tuple leaves
// unchanged out of line (TOAST) is taken from old, the old row, if there
// is one.
func (s *streamReader[T]) emit(out connector.Output[T], split connector.SplitOutput[T],
	t *tableInfo, tup, old *pglogrepl.TupleData, kind changelog.Kind) error {
	r := s.r
	w, rt := r.writer(t)
	if len(tup.Columns) != len(t.cols) {
		return fmt.Errorf("postgres-cdc: a change of table %s (commit %s) has %d columns and the table had %d when the job started: its schema changed; start the job again with the new columns",
			t.id(), pglogrepl.LSN(s.txLSN), len(tup.Columns), len(t.cols))
	}
	for j, col := range tup.Columns {
		i := t.toRow[j]
		if i < 0 {
			continue
		}
		var data []byte
		switch col.DataType {
		case pglogrepl.TupleDataTypeText:
			data = col.Data
		case pglogrepl.TupleDataTypeToast:
			if old == nil || j >= len(old.Columns) || old.Columns[j].DataType != pglogrepl.TupleDataTypeText {
				w.Reset()
				return fmt.Errorf("postgres-cdc: an update of table %s (commit %s) leaves column %q unchanged and stored out of line (TOAST), and does not carry its value, which the table's replica identity leaves out: run ALTER TABLE %s REPLICA IDENTITY FULL (then updates carry the old row) and start the job again from a new snapshot",
					t.id(), pglogrepl.LSN(s.txLSN), t.cols[j].name, t.quoted())
			}
			data = old.Columns[j].Data
		}
		if err := r.conv.setField(w, i, rt.Field(i).Type, &t.cols[j], data); err != nil {
			vals := make([][]byte, len(tup.Columns))
			for k, c := range tup.Columns {
				if c.DataType == pglogrepl.TupleDataTypeText {
					vals[k] = c.Data
				}
			}
			return r.badRecord(out, t, "commit "+pglogrepl.LSN(s.txLSN).String()+" change "+strconv.Itoa(s.rows), vals, nil,
				fmt.Errorf("column %s (%s): %w", t.cols[j].name, t.cols[j].typeName, err))
		}
	}
	r.setMeta(t, kind, s.txTime)
	split.Emit(r.record(t, kind, w.Finish()))
	return nil
}

// truncate emits, in a pipeline, a TruncateTable event for each captured
// table a TRUNCATE empties. It counts as one change of the transaction, so
// that a restore within the transaction does not emit it again.
func (s *streamReader[T]) truncate(split connector.SplitOutput[T], tr *pglogrepl.TruncateMessage) error {
	for _, id := range tr.RelationIDs {
		t := s.rels[id]
		if t == nil {
			continue
		}
		s.schemaChange(split, pipeline.Event{Kind: pipeline.TruncateTable, Table: t.tableID(), Schema: t.schema, DDL: "TRUNCATE " + t.quoted()})
	}
	return nil
}
