package mysqlcdc

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/pingcap/tidb/pkg/parser"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc"
)

// binlogReader reads the binlog split: every change of the captured tables
// in commit order. Its position is the start of the transaction being read
// and the number of rows of the captured tables read in it, so that a
// restore re-reads the transaction and skips them: transactions are never
// split across a checkpoint's position. The position carries the GTID set
// executed before the transaction, where known: a restore then resumes by
// it, on the server or on any replica that has the same transactions, and
// skips the rows of that transaction, known by its GTID.
type binlogReader[T any] struct {
	r     *reader[T]
	split *binlogSplit
	s     *stream

	txStart position // where the transaction being read starts
	txGTID  string   // its GTID, "" if it has none or none is known
	rows    int      // rows of captured tables read in it
	skip    int      // rows of it to skip, read before a restore
	inTx    bool
	// gtids is the GTID set executed before the position being read.
	gtids gtidTracker
	// pending are, after a restore by GTID, the rows already read of the
	// transactions read in part, by GTID, until they come again: on
	// another server, other transactions may come first.
	pending map[string]int
	// xa is set in an XA transaction: its rows are written to the binary
	// log when it is prepared, before it commits or rolls back.
	xa bool
	// chunks are the snapshot's chunks by table, sorted by start, while
	// the binlog is before maxHigh.
	chunks  map[string][]*chunk
	maxHigh position
	timeout time.Duration
	// announced is set once a pipeline's source has announced its tables.
	announced bool
	// parser parses the statements that change tables (applyDDL).
	parser *parser.Parser
	// mapped are, by table, the table map event last checked against the
	// table the source holds (checkTableMap), and that table.
	mapped map[string]mappedTable

	// What Status reports: the events read, the timestamp (Unix
	// milliseconds) of the last one the server wrote, and whether the
	// reader has caught up with the server since (it found no event
	// waiting, or the server sent a heartbeat).
	events     int64
	lastMillis int64
	caughtUp   bool
	// log reads where the server writes its binary log, for lagBytes, on
	// a connection of its own, in the background; streaming is set while
	// the stream is open.
	log       *cdc.Probe[serverLog]
	logConn   *logConn
	streaming bool
}

func (b *binlogReader[T]) open() error {
	conn, err := b.r.connection()
	if err != nil {
		return err
	}
	id, err := b.r.serverID()
	if err != nil {
		return err
	}
	sp := b.split
	if len(sp.chunks) > 0 && !sp.pos.HasGTIDs {
		// After a snapshot, the lowest high position of its chunks, of
		// which MariaDB tells the GTID set now, once; the chunks' high
		// positions are compared as files and offsets only.
		if sp.pos, err = gtidsAt(conn, sp.pos); err != nil {
			return err
		}
	}
	if len(sp.tables) > 0 {
		// The tables as they were at the split's position, not as they
		// are now: the binary log from there holds their changes.
		b.r.tables = map[string]*tableInfo{}
		for _, t := range sp.tables {
			t.toRow = make([]int, len(t.cols))
			if err := b.r.cfg.pipelineTable(t, t.version); err != nil {
				return err
			}
			b.r.tables[t.id()] = t
		}
	}
	b.txStart, b.skip = sp.pos, sp.skip
	b.gtids.start(b.r.flavor, sp.pos)
	b.pending = map[string]int{}
	for g, n := range sp.skipped {
		b.pending[g] = n
	}
	b.chunks = map[string][]*chunk{}
	for _, c := range sp.chunks {
		b.chunks[c.table] = append(b.chunks[c.table], c)
		if c.high.compare(b.maxHigh) > 0 {
			b.maxHigh = c.high
		}
	}
	for _, cs := range b.chunks {
		sortChunks(cs)
		for _, c := range cs {
			c.high.GTIDs, c.high.HasGTIDs = "", false
		}
	}
	b.s, err = b.r.cfg.openStream(id, b.r.flavor, streamStart(sp, len(b.chunks) > 0), b.r.ctx.Log())
	b.timeout = 5 * time.Millisecond
	if err != nil {
		return err
	}
	if b.log == nil {
		b.logConn = &logConn{cfg: b.r.cfg}
		b.log = cdc.NewProbe[serverLog](time.Second, b.r.ctx.Log(),
			"mysql-cdc: the server's binary log position (SHOW MASTER STATUS), which lagBytes measures the lag against,", b.logConn.close)
	}
	b.streaming = true
	return nil
}

// streamStart returns where a restore reads the binary log of a split
// from: by the position's GTID set where it has one, otherwise, and while
// snapshot chunks are compared with it, at its file and offset. The chunks'
// high positions are files and offsets of the server they were read on,
// and rows of a transaction without GTID to skip are known by its place
// only: on another server, another transaction may come first.
func streamStart(sp *binlogSplit, chunks bool) position {
	from := sp.pos
	if chunks || sp.skip > 0 {
		from.HasGTIDs = false
	}
	return from
}

// state returns the split as a checkpoint holds it.
func (b *binlogReader[T]) state() *binlogSplit {
	if b.s == nil {
		return b.split
	}
	s := &binlogSplit{pos: b.txStart, fromMillis: b.split.fromMillis}
	if rows := max(b.rows, b.skip); b.inTx && b.txGTID != "" {
		s.skipped = map[string]int{b.txGTID: rows}
	} else {
		s.skip = rows
	}
	for g, n := range b.pending {
		if s.skipped == nil {
			s.skipped = map[string]int{}
		}
		s.skipped[g] = max(s.skipped[g], n)
	}
	if b.r.schemaEvent != nil {
		s.tables = sortedTables(b.r.tables)
	}
	for _, cs := range b.chunks {
		s.chunks = append(s.chunks, cs...)
	}
	return s
}

func (b *binlogReader[T]) close() {
	if b.log != nil {
		b.log.Close()
	}
	b.streaming = false
	if b.s != nil {
		b.s.close()
	}
}

// read emits the changes available now.
func (b *binlogReader[T]) read(out connector.Output[T]) error {
	if b.s == nil {
		if err := b.open(); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	split := out.Split(binlogSplitID)
	if !b.announced {
		b.announced = true
		b.announce(split)
	}
	for out.Room() > 0 {
		ev, start, next, err := b.s.next(ctx)
		if err != nil {
			return err
		}
		if ev == nil {
			b.caughtUp = true
			return nil
		}
		b.observe(ev)
		if err := b.event(out, split, ev, start, next); err != nil {
			return err
		}
	}
	return nil
}

// observe counts an event read for Status and notes its timestamp: a
// heartbeat, which the server sends when it has no event to send, means
// the reader has caught up.
func (b *binlogReader[T]) observe(ev *replication.BinlogEvent) {
	switch h := ev.Header; {
	case h.EventType == replication.HEARTBEAT_EVENT || h.EventType == replication.HEARTBEAT_LOG_EVENT_V2:
		b.caughtUp = true
	case h.Timestamp != 0:
		b.events++
		b.lastMillis = int64(h.Timestamp) * 1000
		b.caughtUp = false
	default:
		b.events++ // an event the server makes up at the start of a stream
	}
}

// status adds to a status report the binary log's position the reader is
// at (binlogFile, binlogPosition and the GTID set executed before the
// transaction being read, gtidSet), the events read (eventsRecords), the
// time the server wrote the last one (lastEventTime) and the lag behind
// the server (lagMillis): now less that time while events wait to be
// read, 0 once the reader has caught up; binary log timestamps are whole
// seconds. Then where the server writes its binary log and the bytes from
// the reader's position to it (lagStatus).
func (b *binlogReader[T]) status(m map[string]any, now time.Time) {
	m["phase"] = "binlog"
	if b.s == nil {
		return
	}
	m["binlogFile"] = b.s.cur.File
	m["binlogPosition"] = b.s.cur.Pos
	if b.txStart.HasGTIDs {
		m["gtidSet"] = b.txStart.GTIDs
	}
	m["eventsRecords"] = b.events
	if b.lastMillis > 0 {
		m["lastEventTime"] = time.UnixMilli(b.lastMillis).UTC().Format(time.RFC3339)
	}
	switch {
	case b.caughtUp:
		m["lagMillis"] = int64(0)
	case b.lastMillis > 0:
		m["lagMillis"] = max(now.UnixMilli()-b.lastMillis, 0)
	}
	b.lagStatus(m, now)
}

// event reads one event of the binary log, which starts at start and ends
// at next. A compressed transaction (MySQL's binlog_transaction_compression)
// is one event whose events are read in turn, each at its place.
func (b *binlogReader[T]) event(out connector.Output[T], split connector.SplitOutput[T], ev *replication.BinlogEvent, start, next position) error {
	switch e := ev.Event.(type) {
	case *replication.RotateEvent:
		if !b.inTx {
			b.txStart = b.gtids.at(next)
		}
	case *replication.MariadbGTIDEvent:
		g, _ := eventGTID(e)
		b.begin(start, g)
		b.xa = e.Flags&mariadbPreparedXA != 0
	case *replication.GTIDEvent, *replication.GtidTaggedLogEvent:
		g, _ := eventGTID(e)
		b.begin(start, g)
	case *replication.PreviousGTIDsEvent:
		// A MySQL binary log file starts with the GTID set executed
		// before it: where the start's set is not known, it is from
		// here on.
		// Where it is known, the file's set is merged into it: a set read
		// a little behind its position (SHOW MASTER STATUS shows the file
		// and offset and the executed set apart) is whole from the next
		// file on.
		switch {
		case !b.gtids.known() && !b.inTx && start != next && b.txStart.File == start.File:
			b.gtids.start(mysql.MySQLFlavor, position{GTIDs: e.GTIDSets, HasGTIDs: true})
			b.txStart = b.gtids.at(b.txStart)
			if _, err := parseGTIDs(mysql.MySQLFlavor, e.GTIDSets); err != nil && b.r.ctx != nil {
				warnGTIDsOff(b.r.ctx.Log(), e.GTIDSets, err)
			}
		case b.gtids.known() && b.gtids.flavor == mysql.MySQLFlavor:
			b.gtids.merge(e.GTIDSets)
			if !b.inTx {
				b.txStart = b.gtids.at(b.txStart)
			}
		}
	case *replication.QueryEvent:
		q := strings.TrimSpace(string(e.Query))
		switch {
		case len(q) >= 8 && strings.EqualFold(q[:8], "XA START"):
			b.xa = true
		case strings.EqualFold(q, "BEGIN"):
			if !b.inTx {
				b.begin(start, "")
			}
		case strings.EqualFold(q, "COMMIT"):
			b.commit(next)
		default:
			if b.skip == math.MaxInt {
				b.commit(next) // a statement read before, sent again
				break
			}
			if err := b.ddl(split, string(e.Schema), q, parseQueryStatus(e.StatusVars), start); err != nil {
				return err
			}
			b.commit(next)
		}
	case *replication.XIDEvent:
		b.commit(next)
	case *replication.TransactionPayloadEvent:
		for _, in := range e.Events {
			if re, ok := in.Event.(*replication.RowsEvent); ok {
				b.payloadTimestamps(re)
			}
			if err := b.event(out, split, in, start, next); err != nil {
				return err
			}
		}
	case *replication.RowsEvent:
		if err := b.rowsEvent(out, split, e, start, int64(ev.Header.Timestamp)*1000); err != nil {
			return err
		}
	}
	return nil
}

// payloadTimestamps makes the TIMESTAMP values of a rows event of a
// compressed transaction UTC text, as those of the binary log are: the
// binlog client decodes the events of a payload with a parser of its own,
// which writes them in the process's local time zone. A wall clock of the
// hour a daylight saving change repeats is read as its first instant.
func (b *binlogReader[T]) payloadTimestamps(e *replication.RowsEvent) {
	if time.Local == time.UTC || e.Table == nil {
		return
	}
	t := b.r.tables[string(e.Table.Schema)+"."+string(e.Table.Table)]
	if t == nil {
		return
	}
	for _, row := range e.Rows {
		for j, v := range row {
			if j >= len(t.cols) || t.cols[j].dataType != "timestamp" {
				continue
			}
			if s, ok := v.(string); ok {
				row[j] = localToUTC(s)
			}
		}
	}
}

// localToUTC rewrites the text of a TIMESTAMP value in the local time zone
// ('2006-01-02 15:04:05', with up to 6 digits of fraction) in UTC. A zero
// date, or text it does not read, stays as it is.
func localToUTC(s string) string {
	if strings.HasPrefix(s, "0000-00-00") {
		return s
	}
	layout := "2006-01-02 15:04:05"
	if dot := strings.IndexByte(s, '.'); dot >= 0 {
		layout += "." + strings.Repeat("0", len(s)-dot-1)
	}
	tm, err := time.ParseInLocation(layout, s, time.Local)
	if err != nil {
		return s
	}
	return tm.UTC().Format(layout)
}

// begin notes the start of a transaction, and its GTID if it has one.
//
// The binlog client reconnects by itself after a read error, by GTID from
// the set before the last transaction it saw start: the server then sends
// that transaction again, whether it was being read or already committed.
// The one being read starts again where it started, its rows read so far
// skipped; one already committed is skipped whole.
func (b *binlogReader[T]) begin(start position, gtid string) {
	switch {
	case gtid != "" && b.inTx && gtid == b.txGTID:
		b.skip, b.rows, b.xa = max(b.skip, b.rows), 0, false
		return
	case gtid != "" && b.gtids.contains(gtid):
		b.txStart, b.txGTID, b.rows, b.inTx, b.xa = b.gtids.at(start), gtid, 0, true, false
		b.skip = math.MaxInt // until it commits
		return
	}
	b.txStart, b.txGTID, b.rows, b.inTx, b.xa = b.gtids.at(start), gtid, 0, true, false
	if n, ok := b.pending[gtid]; ok && gtid != "" {
		b.skip = n
		delete(b.pending, gtid)
	}
}

// mariadbPreparedXA is the flag of a MariaDB GTID event that starts the
// prepared part of an XA transaction.
const mariadbPreparedXA = 0x40

// commit notes the end of the transaction being read: the next one starts
// at next, and the set executed before it holds this one.
func (b *binlogReader[T]) commit(next position) {
	if err := b.gtids.add(b.txGTID); err != nil && b.r.ctx != nil {
		warnGTIDsOff(b.r.ctx.Log(), b.txGTID, err)
	}
	b.txStart, b.txGTID, b.rows, b.skip, b.inTx = b.gtids.at(next), "", 0, 0, false
	for g := range b.pending {
		if b.gtids.contains(g) {
			delete(b.pending, g) // passed without coming again
		}
	}
}

// rowsEvent emits the changes of a rows event of a captured table.
func (b *binlogReader[T]) rowsEvent(out connector.Output[T], split connector.SplitOutput[T],
	e *replication.RowsEvent, start position, opTS int64) error {
	t := b.r.tables[string(e.Table.Schema)+"."+string(e.Table.Table)]
	if t == nil {
		return nil
	}
	if b.xa {
		return fmt.Errorf("mysql-cdc: an XA transaction changes table %s at binlog %s: the binary log holds its rows from XA PREPARE on, before it is known whether it commits or rolls back, and the source does not read XA transactions; change the table in ordinary transactions, or start the job after this one",
			t.id(), start)
	}
	if err := b.checkTableMap(t, e, start); err != nil {
		return err
	}
	// Binlog timestamps are in seconds: an event of the second the
	// startup timestamp falls in is not older than it.
	old := b.split.fromMillis > 0 && opTS < b.split.fromMillis/1000*1000
	where := "binlog " + start.String()
	emit := func(row rowImage, kind changelog.Kind) error {
		return b.r.emit(out, split, t, row, kind, opTS, where)
	}
	step := 1
	if e.Type() == replication.EnumRowsEventTypeUpdate {
		step = 2
	}
	for i := 0; i+step <= len(e.Rows); i += step {
		b.rows++
		if b.rows <= b.skip || old {
			continue
		}
		var err error
		switch e.Type() {
		case replication.EnumRowsEventTypeInsert:
			if row := rowImage(e.Rows[i]); !b.covered(t, row, start) {
				err = emit(row, changelog.Insert)
			}
		case replication.EnumRowsEventTypeDelete:
			if row := rowImage(e.Rows[i]); !b.covered(t, row, start) {
				err = emit(row, changelog.Delete)
			}
		case replication.EnumRowsEventTypeUpdate:
			before, after := rowImage(e.Rows[i]), rowImage(e.Rows[i+1])
			bc, ac := b.covered(t, before, start), b.covered(t, after, start)
			switch {
			case bc && ac:
			case bc:
				err = emit(after, changelog.Insert)
			case ac:
				err = emit(before, changelog.Delete)
			case len(t.pk) > 0 && keyOf(t, before) != keyOf(t, after):
				// A new key is a new row: upsert sinks key by it.
				if err = emit(before, changelog.Delete); err == nil {
					err = emit(after, changelog.Insert)
				}
			default:
				if err = emit(before, changelog.UpdateBefore); err == nil {
					err = emit(after, changelog.UpdateAfter)
				}
			}
		}
		if err != nil {
			return err
		}
	}
	if b.chunks != nil && start.compare(b.maxHigh) >= 0 {
		b.chunks = nil // past every chunk's high position
	}
	return nil
}

// covered tells whether the snapshot already holds a change at start of a
// row: the change is before the high position of the row's chunk.
func (b *binlogReader[T]) covered(t *tableInfo, row rowImage, start position) bool {
	cs := b.chunks[t.id()]
	if len(cs) == 0 {
		return false
	}
	k, null := chunkKeyOf(t, row)
	for _, c := range cs {
		if t.chunkKey < 0 || c.contains(t.order, k, null) {
			return start.compare(c.high) < 0
		}
	}
	return false
}

func sortChunks(cs []*chunk) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].index < cs[j-1].index; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}
