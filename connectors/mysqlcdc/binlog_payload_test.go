package mysqlcdc

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/eddystream/eddy/connector"
)

// TestCompressedTransaction reads MySQL's compressed transactions
// (binlog_transaction_compression): the events in the payload are read as
// if they stood in the binary log, at the payload's place. A transaction
// commits inside its payload, and a statement in one is seen.
func TestCompressedTransaction(t *testing.T) {
	const uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	sid := []byte{0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62}
	b := &binlogReader[connector.TableRecord]{r: &reader[connector.TableRecord]{tables: map[string]*tableInfo{"shop.orders": {db: "shop", name: "orders"}}}}
	b.gtids.start(mysql.MySQLFlavor, position{GTIDs: uuid + ":1-5", HasGTIDs: true})
	at := func(pos uint32) position { return position{File: "binlog.000001", Pos: pos} }
	ev := func(e replication.Event) *replication.BinlogEvent {
		return &replication.BinlogEvent{Header: &replication.EventHeader{}, Event: e}
	}
	if err := b.event(nil, nil, ev(&replication.GTIDEvent{SID: sid, GNO: 6}), at(100), at(180)); err != nil {
		t.Fatal(err)
	}
	payload := &replication.TransactionPayloadEvent{Events: []*replication.BinlogEvent{
		ev(&replication.QueryEvent{Query: []byte("BEGIN")}),
		ev(&replication.XIDEvent{}),
	}}
	if err := b.event(nil, nil, ev(payload), at(180), at(400)); err != nil {
		t.Fatal(err)
	}
	if b.inTx || b.txStart.Pos != 400 || !b.gtids.contains(uuid+":6") {
		t.Fatalf("after the compressed transaction: in a transaction %v, next at %v, GTID set %q; want it committed, next at 400, with %s:6",
			b.inTx, b.txStart, b.gtids.text, uuid)
	}
	ddl := &replication.TransactionPayloadEvent{Events: []*replication.BinlogEvent{
		ev(&replication.QueryEvent{Schema: []byte("shop"), Query: []byte("ALTER TABLE orders ADD COLUMN note TEXT")}),
	}}
	if err := b.event(nil, nil, ev(ddl), at(400), at(500)); err == nil {
		t.Fatal("a captured table's DDL in a compressed transaction was not seen")
	}
}

// TestCompressedTransactionTimestamps reads the TIMESTAMP values of a
// compressed transaction in UTC, as those of the binary log, though the
// binlog client decodes a payload's events in the local time zone.
func TestCompressedTransactionTimestamps(t *testing.T) {
	local := time.Local
	time.Local = time.FixedZone("UTC+5:30", 5*3600+1800)
	defer func() { time.Local = local }()
	orders := &tableInfo{db: "shop", name: "orders", cols: []column{{name: "id", dataType: "int"}, {name: "at", dataType: "timestamp"}, {name: "due", dataType: "datetime"}}}
	b := &binlogReader[connector.TableRecord]{
		r: &reader[connector.TableRecord]{tables: map[string]*tableInfo{"shop.orders": orders}},
		// Every row is older than the start: read, never emitted.
		split: &binlogSplit{fromMillis: math.MaxInt64},
	}
	rows := &replication.RowsEvent{Table: &replication.TableMapEvent{Schema: []byte("shop"), Table: []byte("orders"), ColumnCount: 3,
		ColumnType: []byte{mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_TIMESTAMP2, mysql.MYSQL_TYPE_DATETIME2}, ColumnMeta: []uint16{0, 0, 0}}, ColumnCount: 3,
		Rows: [][]any{
			{int32(1), "2024-03-01 17:30:00", "2024-03-01 17:30:00"},
			{int32(2), "2024-03-01 05:00:00.123", nil},
			{int32(3), "0000-00-00 00:00:00", nil},
			{int32(4), nil, nil},
		}}
	payload := &replication.TransactionPayloadEvent{Events: []*replication.BinlogEvent{
		{Header: &replication.EventHeader{}, Event: &replication.QueryEvent{Query: []byte("BEGIN")}},
		{Header: &replication.EventHeader{EventType: replication.WRITE_ROWS_EVENTv2}, Event: rows},
		{Header: &replication.EventHeader{}, Event: &replication.XIDEvent{}},
	}}
	at := position{File: "binlog.000001", Pos: 100}
	if err := b.event(nil, nil, &replication.BinlogEvent{Header: &replication.EventHeader{}, Event: payload}, at, at); err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{int32(1), "2024-03-01 12:00:00", "2024-03-01 17:30:00"},
		{int32(2), "2024-02-29 23:30:00.123", nil},
		{int32(3), "0000-00-00 00:00:00", nil},
		{int32(4), nil, nil},
	}
	if !reflect.DeepEqual(rows.Rows, want) {
		t.Fatalf("rows of a compressed transaction %v, want TIMESTAMP values in UTC: %v", rows.Rows, want)
	}
}
