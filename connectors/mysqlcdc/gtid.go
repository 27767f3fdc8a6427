package mysqlcdc

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// parseGTIDs parses a GTID set in the text of a flavour; white space (MySQL
// breaks long sets across lines) is ignored.
func parseGTIDs(flavor, s string) (mysql.GTIDSet, error) {
	return mysql.ParseGTIDSet(flavor, strings.Join(strings.Fields(s), ""))
}

// gtidSetFlavor returns the flavour whose syntax a GTID set has: MySQL's
// 'uuid:1-100,...' or MariaDB's 'domain-server-sequence,...'.
func gtidSetFlavor(s string) (string, error) {
	s = strings.Join(strings.Fields(s), "")
	if s == "" {
		return "", fmt.Errorf("want a GTID set, such as MySQL's '3e11fa47-71ca-11e1-9e33-c80aa9429562:1-100' or MariaDB's '0-1-42'; it is empty")
	}
	if _, err := mysql.ParseMariadbGTIDSet(s); err == nil {
		return mysql.MariaDBFlavor, nil
	}
	if strings.Contains(s, ":") {
		if _, err := mysql.ParseMysqlGTIDSet(s); err != nil {
			return "", fmt.Errorf("not a MySQL GTID set ('uuid:1-100,...'): %w", err)
		}
		return mysql.MySQLFlavor, nil
	}
	return "", fmt.Errorf("not a GTID set: want MySQL's 'uuid:1-100,...' or MariaDB's 'domain-server-sequence,...' (such as '0-1-42')")
}

// checkGTIDSet checks 'scan.startup.specific-offset.gtid-set'.
func checkGTIDSet(v string) error { _, err := gtidSetFlavor(v); return err }

// eventGTID returns the GTID of the transaction a GTID event starts, "" for
// a transaction without one (MySQL's anonymous transactions, without
// gtid_mode), and whether the event is a GTID event.
func eventGTID(ev replication.Event) (string, bool) {
	switch e := ev.(type) {
	case *replication.MariadbGTIDEvent:
		return fmt.Sprintf("%d-%d-%d", e.GTID.DomainID, e.GTID.ServerID, e.GTID.SequenceNumber), true
	case *replication.GTIDEvent:
		return mysqlGTID(e.SID, "", e.GNO), true
	case *replication.GtidTaggedLogEvent:
		return mysqlGTID(e.SID, e.Tag, e.GNO), true
	}
	return "", false
}

func mysqlGTID(sid []byte, tag string, gno int64) string {
	if len(sid) != 16 || bytes.Equal(sid, make([]byte, 16)) {
		return ""
	}
	h := hex.EncodeToString(sid)
	u := h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	if tag != "" {
		return u + ":" + tag + ":" + strconv.FormatInt(gno, 10)
	}
	return u + ":" + strconv.FormatInt(gno, 10)
}

// gtidTracker follows the GTID set the server has executed at the binary
// log position being read, transaction by transaction. A MariaDB set holds
// the last GTID of each replication domain, as @@gtid_binlog_pos does and as
// a replica asks for it; a MySQL set every transaction.
type gtidTracker struct {
	flavor string
	set    mysql.GTIDSet // nil when the set is not known
	text   string
}

// start starts tracking at a position: from its GTID set if it has one,
// otherwise not at all.
func (g *gtidTracker) start(flavor string, p position) {
	g.flavor, g.set, g.text = flavor, nil, ""
	if p.HasGTIDs {
		g.reset(p.GTIDs)
	}
}

// reset tracks from a set; one that does not parse stops the tracking.
func (g *gtidTracker) reset(text string) {
	set, err := parseGTIDs(g.flavor, text)
	if err != nil {
		g.set, g.text = nil, ""
		return
	}
	g.set, g.text = set, set.String()
}

// known tells whether the set is known.
func (g *gtidTracker) known() bool { return g.set != nil }

// at returns p with the current set.
func (g *gtidTracker) at(p position) position {
	p.GTIDs, p.HasGTIDs = g.text, g.set != nil
	return p
}

// add adds the GTID of a committed transaction. One the set does not take
// (MySQL 8.3's tagged GTIDs) stops the tracking, with the error.
func (g *gtidTracker) add(gtid string) error {
	if g.set == nil || gtid == "" {
		return nil
	}
	switch set := g.set.(type) {
	case *mysql.MariadbGTIDSet:
		id, err := mysql.ParseMariadbGTID(gtid)
		if err != nil {
			g.set, g.text = nil, ""
			return fmt.Errorf("the GTID %s: %w", gtid, err)
		}
		set.Sets[id.DomainID] = map[uint32]*mysql.MariadbGTID{id.ServerID: id}
	default:
		if err := g.set.Update(gtid); err != nil {
			g.set, g.text = nil, ""
			return fmt.Errorf("the GTID %s: %w", gtid, err)
		}
	}
	g.text = g.set.String()
	return nil
}

// merge adds a MySQL GTID set's transactions to the set; one that does not
// parse is passed over.
func (g *gtidTracker) merge(text string) {
	set, ok := g.set.(*mysql.MysqlGTIDSet)
	if !ok {
		return
	}
	more, err := parseGTIDs(mysql.MySQLFlavor, text)
	if err != nil {
		return
	}
	for _, u := range more.(*mysql.MysqlGTIDSet).Sets {
		set.AddSet(u)
	}
	g.text = set.String()
}

// contains tells whether the set holds a transaction's GTID: for MariaDB,
// whether its domain is at or past its sequence number.
func (g *gtidTracker) contains(gtid string) bool {
	if g.set == nil {
		return false
	}
	switch set := g.set.(type) {
	case *mysql.MariadbGTIDSet:
		id, err := mysql.ParseMariadbGTID(gtid)
		if err != nil {
			return false
		}
		for _, last := range set.Sets[id.DomainID] {
			if last.SequenceNumber >= id.SequenceNumber {
				return true
			}
		}
		return false
	default:
		one, err := mysql.ParseMysqlGTIDSet(gtid)
		return err == nil && g.set.Contain(one)
	}
}
