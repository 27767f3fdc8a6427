package mysqlcdc

import (
	"bytes"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/eddystream/eddy/connector"
)

// TestPositionEncodingRoundTrip: a binlog split's position, with a GTID set
// of either flavour or none, and the rows read of transactions by GTID come
// back from its encoding as they were, as do chunks' high positions.
func TestPositionEncodingRoundTrip(t *testing.T) {
	splits := []*binlogSplit{
		{pos: position{File: "binlog.000003", Pos: 1234, GTIDs: "0-1-42,1-7-9", HasGTIDs: true},
			skipped: map[string]int{"0-1-43": 2, "1-7-10": 5}},
		{pos: position{File: "mysql-bin.000012", Pos: 77,
			GTIDs: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-100,5e11fa47-71ca-11e1-9e33-c80aa9429562:1-3", HasGTIDs: true},
			skipped: map[string]int{"3e11fa47-71ca-11e1-9e33-c80aa9429562:101": 3}},
		{pos: position{GTIDs: "0-1-42", HasGTIDs: true}},
		{pos: position{File: "binlog.000001", Pos: 4, HasGTIDs: true}, skip: 3, fromMillis: 1700000000000},
		{pos: position{File: "binlog.000001", Pos: 400}, skip: 1,
			chunks: []*chunk{{table: "db.t", index: 1, start: "10", done: true, rows: 4,
				high: position{File: "binlog.000001", Pos: 380, GTIDs: "0-1-5", HasGTIDs: true}}}},
	}
	for _, s := range splits {
		c, got, err := decodeSplit(encodeBinlogSplit(s))
		if err != nil || c != nil || got == nil {
			t.Fatalf("decoding the split of %v: %v, %v, %v", s.pos, c, got, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("round trip of %+v gave %+v", s, got)
		}
	}
	c := &chunk{table: "db.t", index: 2, end: "99", done: true, rows: 7,
		high: position{File: "binlog.000002", Pos: 99, GTIDs: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", HasGTIDs: true}}
	got, _, err := decodeSplit(encodeChunkSplit(c))
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("round trip of chunk %+v gave %+v (%v)", c, got, err)
	}
}

// TestGTIDTracker: the set before each transaction follows the commits; a
// MariaDB set keeps the last GTID of each domain, whichever server wrote
// it, and a MySQL set every transaction.
func TestGTIDTracker(t *testing.T) {
	var g gtidTracker
	g.start(mysql.MariaDBFlavor, position{File: "binlog.000001", Pos: 4, GTIDs: "0-1-5", HasGTIDs: true})
	g.add("0-1-6")
	g.add("2-2-1")
	g.add("0-3-7")
	if p := g.at(position{}); p.GTIDs != "0-3-7,2-2-1" || !p.HasGTIDs {
		t.Errorf("MariaDB set %+v, want 0-3-7,2-2-1", p)
	}
	if !g.contains("0-1-7") || g.contains("0-1-8") || g.contains("5-1-1") {
		t.Error("the MariaDB set contains the wrong GTIDs")
	}

	const a = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	g.start(mysql.MySQLFlavor, position{GTIDs: a + ":1-5", HasGTIDs: true})
	g.add(a + ":6")
	g.add(a + ":8")
	if p := g.at(position{}); p.GTIDs != a+":1-6:8" {
		t.Errorf("MySQL set %q, want %s:1-6:8", p.GTIDs, a)
	}
	if !g.contains(a+":8") || g.contains(a+":7") {
		t.Error("the MySQL set contains the wrong GTIDs")
	}

	g.start(mysql.MySQLFlavor, position{File: "binlog.000001", Pos: 4})
	g.add(a + ":1")
	if p := g.at(position{}); p.HasGTIDs || g.known() {
		t.Errorf("a set tracked from an unknown one is %+v", p)
	}
}

// TestEventGTID: the GTIDs of the events that start transactions, none for
// MySQL's anonymous transactions.
func TestEventGTID(t *testing.T) {
	sid := []byte{0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62}
	cases := []struct {
		ev   replication.Event
		want string
	}{
		{&replication.MariadbGTIDEvent{GTID: mysql.MariadbGTID{DomainID: 0, ServerID: 1, SequenceNumber: 42}}, "0-1-42"},
		{&replication.GTIDEvent{SID: sid, GNO: 7}, "3e11fa47-71ca-11e1-9e33-c80aa9429562:7"},
		{&replication.GTIDEvent{SID: make([]byte, 16), GNO: 0}, ""},
	}
	for _, c := range cases {
		if got, ok := eventGTID(c.ev); !ok || got != c.want {
			t.Errorf("eventGTID(%T) = %q, %v; want %q", c.ev, got, ok, c.want)
		}
	}
	if _, ok := eventGTID(&replication.XIDEvent{}); ok {
		t.Error("an XID event has a GTID")
	}
}

// TestGTIDSetFlavor: the option's sets of either flavour are told apart,
// and others refused.
func TestGTIDSetFlavor(t *testing.T) {
	for set, want := range map[string]string{
		"0-1-42":       mysql.MariaDBFlavor,
		"0-1-42,1-2-3": mysql.MariaDBFlavor,
		"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-100,\n5e11fa47-71ca-11e1-9e33-c80aa9429562:1-3": mysql.MySQLFlavor,
	} {
		if got, err := gtidSetFlavor(set); got != want || err != nil {
			t.Errorf("gtidSetFlavor(%q) = %q, %v; want %q", set, got, err, want)
		}
	}
	for _, bad := range []string{"", "abc", "0-1", "0-1-x", "nouuid:1-5"} {
		if _, err := gtidSetFlavor(bad); err == nil {
			t.Errorf("gtidSetFlavor(%q) accepted it", bad)
		}
	}
}

// TestPreviousGTIDsMerged merges the GTID set a MySQL binary log file
// starts with into the tracked set: one read a little behind its position
// is whole from the next file on.
func TestPreviousGTIDsMerged(t *testing.T) {
	const a, c = "3e11fa47-71ca-11e1-9e33-c80aa9429562", "4f22ab58-82db-22f2-af44-d91bb0530673"
	b := &binlogReader[connector.TableRecord]{r: &reader[connector.TableRecord]{tables: map[string]*tableInfo{}}}
	// Transactions a:6 and c:1 were written before the position, but the
	// set was read without them.
	b.gtids.start(mysql.MySQLFlavor, position{GTIDs: a + ":1-5", HasGTIDs: true})
	ev := func(e replication.Event) *replication.BinlogEvent {
		return &replication.BinlogEvent{Header: &replication.EventHeader{}, Event: e}
	}
	next := position{File: "binlog.000002", Pos: 4}
	if err := b.event(nil, nil, ev(&replication.RotateEvent{NextLogName: []byte(next.File), Position: 4}), next, next); err != nil {
		t.Fatal(err)
	}
	prev := &replication.PreviousGTIDsEvent{GTIDSets: a + ":1-6,\n" + c + ":1"}
	if err := b.event(nil, nil, ev(prev), position{File: next.File, Pos: 126}, position{File: next.File, Pos: 197}); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{a + ":6", c + ":1", a + ":3"} {
		if !b.gtids.contains(g) {
			t.Errorf("after the next file's previous GTIDs, the set %q lacks %s", b.gtids.text, g)
		}
	}
	if b.txStart.GTIDs != b.gtids.text || !b.txStart.HasGTIDs {
		t.Errorf("the position %v does not carry the merged set %q", b.txStart, b.gtids.text)
	}
	// A set that does not parse leaves the tracked one as it is.
	before := b.gtids.text
	if err := b.event(nil, nil, ev(&replication.PreviousGTIDsEvent{GTIDSets: "nonsense"}), position{File: next.File, Pos: 197}, position{File: next.File, Pos: 230}); err != nil {
		t.Fatal(err)
	}
	if !b.gtids.known() || b.gtids.text != before {
		t.Errorf("a set that does not parse changed the tracked set to %q (known %v), want %q", b.gtids.text, b.gtids.known(), before)
	}
}

// TestTaggedGTIDs: MySQL's tagged GTIDs ('uuid:tag:n') are not read: a
// position whose executed set has one carries no GTID set, a restore then
// resumes by file and offset, and a tagged transaction stops the tracking.
// Either is logged once, as a warning.
func TestTaggedGTIDs(t *testing.T) {
	const a = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	gtidsOff = sync.Once{}
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	p := withExecutedGTIDs(position{File: "binlog.000003", Pos: 900}, a+":1-5,\n"+a+":etl:1-2", log)
	if p.HasGTIDs || p.GTIDs != "" || p.byGTID() || p.File != "binlog.000003" || p.Pos != 900 {
		t.Errorf("a position with tagged GTIDs is %+v, want binlog.000003:900 without a GTID set", p)
	}
	if p := withExecutedGTIDs(position{File: "binlog.000003", Pos: 900}, a+":1-5", log); !p.HasGTIDs || p.GTIDs != a+":1-5" {
		t.Errorf("a position with plain GTIDs is %+v, want its set", p)
	}
	withExecutedGTIDs(position{File: "binlog.000003", Pos: 950}, a+":etl:1-3", log)
	if n := strings.Count(logged.String(), "level=WARN"); n != 1 || !strings.Contains(logged.String(), "tagged GTIDs") {
		t.Errorf("logged %q, want one warning about tagged GTIDs", logged.String())
	}

	var g gtidTracker
	g.start(mysql.MySQLFlavor, position{GTIDs: a + ":1-5", HasGTIDs: true})
	if err := g.add(a + ":etl:1"); err == nil || g.known() {
		t.Errorf("a tagged GTID gave %v and the set known %v, want an error and the tracking stopped", err, g.known())
	}
}
