package mysqlcdc

import (
	"math"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/eddystream/eddy/connector"
)

// TestTransactionSentAgain reads a transaction the server sends again
// after the binlog client reconnected by GTID: the rows read of the one
// being read are skipped when it comes again, from its start, and one
// already committed is skipped whole.
func TestTransactionSentAgain(t *testing.T) {
	const uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	sid := []byte{0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62}
	orders := &tableInfo{db: "shop", name: "orders", cols: []column{{name: "id", dataType: "int"}}}
	b := &binlogReader[connector.TableRecord]{
		r: &reader[connector.TableRecord]{tables: map[string]*tableInfo{"shop.orders": orders}},
		// Every row is older than the start: counted, never emitted.
		split: &binlogSplit{fromMillis: math.MaxInt64},
	}
	b.gtids.start(mysql.MySQLFlavor, position{GTIDs: uuid + ":1-5", HasGTIDs: true})
	at := func(pos uint32) position { return position{File: "binlog.000001", Pos: pos} }
	ev := func(e replication.Event) *replication.BinlogEvent {
		return &replication.BinlogEvent{Header: &replication.EventHeader{}, Event: e}
	}
	rows := func(n int) *replication.BinlogEvent {
		e := &replication.RowsEvent{Table: &replication.TableMapEvent{Schema: []byte("shop"), Table: []byte("orders"), ColumnCount: 1,
			ColumnType: []byte{mysql.MYSQL_TYPE_LONG}, ColumnMeta: []uint16{0}}, ColumnCount: 1}
		for i := 0; i < n; i++ {
			e.Rows = append(e.Rows, []any{int32(i)})
		}
		return &replication.BinlogEvent{Header: &replication.EventHeader{EventType: replication.WRITE_ROWS_EVENTv2}, Event: e}
	}
	step := func(e *replication.BinlogEvent, start, next uint32) {
		t.Helper()
		if err := b.event(nil, nil, e, at(start), at(next)); err != nil {
			t.Fatal(err)
		}
	}
	step(ev(&replication.GTIDEvent{SID: sid, GNO: 6}), 100, 180)
	step(ev(&replication.QueryEvent{Query: []byte("BEGIN")}), 180, 250)
	step(rows(3), 250, 300)
	// The connection drops; the transaction comes again from its start.
	step(ev(&replication.GTIDEvent{SID: sid, GNO: 6}), 100, 180)
	if b.skip != 3 || b.rows != 0 || b.txStart.Pos != 100 || b.txGTID != uuid+":6" {
		t.Fatalf("transaction 6 sent again: skip %d, rows %d, start %v, GTID %q; want its 3 rows read skipped, from 100",
			b.skip, b.rows, b.txStart, b.txGTID)
	}
	step(ev(&replication.QueryEvent{Query: []byte("BEGIN")}), 180, 250)
	step(rows(4), 250, 320)
	if b.rows != 4 || b.skip != 3 {
		t.Fatalf("rows %d, skip %d; want 4 read, the first 3 skipped", b.rows, b.skip)
	}
	step(ev(&replication.XIDEvent{}), 320, 350)
	// The connection drops after the commit: the transaction comes again.
	step(ev(&replication.GTIDEvent{SID: sid, GNO: 6}), 100, 180)
	step(ev(&replication.QueryEvent{Query: []byte("BEGIN")}), 180, 250)
	step(rows(4), 250, 320)
	if b.rows > b.skip {
		t.Fatalf("transaction 6 sent again after its commit: %d rows read, %d skipped; want all skipped", b.rows, b.skip)
	}
	// A DDL statement sent again is not read again either.
	step(ev(&replication.XIDEvent{}), 320, 350)
	step(ev(&replication.GTIDEvent{SID: sid, GNO: 6}), 100, 180)
	if err := b.event(nil, nil, ev(&replication.QueryEvent{Schema: []byte("shop"), Query: []byte("ALTER TABLE orders ADD COLUMN note TEXT")}), at(180), at(350)); err != nil {
		t.Fatalf("a statement sent again was read again: %v", err)
	}
	step(ev(&replication.GTIDEvent{SID: sid, GNO: 7}), 350, 430)
	step(rows(2), 430, 480)
	if b.skip != 0 || b.rows != 2 || b.txStart.Pos != 350 {
		t.Fatalf("the next transaction: skip %d, rows %d, start %v; want none skipped, 2 rows, from 350", b.skip, b.rows, b.txStart)
	}
}

// TestRestoreStart: a restore resumes by GTID set, but at the file and
// offset when rows of a transaction without GTID are to be skipped (only
// its place names it) or snapshot chunks are compared with the changes.
func TestRestoreStart(t *testing.T) {
	const set = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5"
	pos := position{File: "binlog.000002", Pos: 800, GTIDs: set, HasGTIDs: true}
	for _, c := range []struct {
		name   string
		sp     binlogSplit
		chunks bool
		byGTID bool
	}{
		{"between transactions", binlogSplit{pos: pos}, false, true},
		{"in a transaction with a GTID", binlogSplit{pos: pos, skipped: map[string]int{"3e11fa47-71ca-11e1-9e33-c80aa9429562:6": 2}}, false, true},
		{"in an anonymous transaction", binlogSplit{pos: pos, skip: 2}, false, false},
		{"with snapshot chunks", binlogSplit{pos: pos}, true, false},
	} {
		from := streamStart(&c.sp, c.chunks)
		if from.byGTID() != c.byGTID || from.File != pos.File || from.Pos != pos.Pos {
			t.Errorf("%s: a restore reads from %+v, by GTID %v; want by GTID %v at %v", c.name, from, from.byGTID(), c.byGTID, pos)
		}
	}
}
