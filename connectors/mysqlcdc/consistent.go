package mysqlcdc

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// chunkQueryHook, when set (by tests), is called before a chunk's query
// runs, after its low position or snapshot is taken; for a table without
// transactions, before the table is locked (readLockedChunk).
var chunkQueryHook func(table string)

// consistentSnapshot tells whether the chunks of a table are read in
// transactions WITH CONSISTENT SNAPSHOT rather than between two positions of
// the binary log, brought up to date with its changes between them: on
// MariaDB, which tells the binary log's position of the transaction's
// snapshot, and for InnoDB tables, which the snapshot holds.
//
// The binary log's end (SHOW MASTER STATUS) is no low position for an InnoDB
// table's chunk: the server writes a transaction to the binary log before
// InnoDB commits it, so a query that starts after the end is read may still
// not see a transaction before it. The chunk would hold that transaction's
// rows as they were before it, its changes being before low, and the binary
// log split would skip them as before the chunk's high: a deleted row kept
// for good, an update lost. The snapshot's position is where the snapshot
// is: the server takes it under the lock that orders the commits of the
// binary log and of InnoDB. MySQL tells no such position: its InnoDB tables
// are still read between positions, open to that race.
func (r *reader[T]) consistentSnapshot(t *tableInfo) bool {
	return r.flavor == mysql.MariaDBFlavor && strings.EqualFold(t.engine, "InnoDB")
}

// readConsistentChunk reads a chunk of a table, on MariaDB, in a
// transaction WITH CONSISTENT SNAPSHOT (consistentSnapshot): its rows are
// those at the binary log's position of the snapshot (Binlog_snapshot_file
// and Binlog_snapshot_position), the chunk's low and high, so that no change
// of the binary log is applied to them. They are emitted as the server
// sends them, none kept, in one Read, so that a checkpoint holds all of
// them or none; a failure before their end reads them again after a
// restore.
func (r *reader[T]) readConsistentChunk(out connector.Output[T], t *tableInfo, c *chunk) (rows int64, err error) {
	conn, err := r.snapshotConnection()
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			// A transaction or a result may be left open on it.
			r.closeSnapshotConnection()
		}
	}()
	if _, err := conn.Execute("START TRANSACTION WITH CONSISTENT SNAPSHOT"); err != nil {
		return 0, fmt.Errorf("mysql-cdc: reading chunk %d of table %s in one transaction: %w", c.index, t.id(), err)
	}
	high, err := snapshotPosition(conn)
	if err != nil {
		return 0, fmt.Errorf("mysql-cdc: reading chunk %d of table %s in one transaction: %w", c.index, t.id(), err)
	}
	if chunkQueryHook != nil {
		chunkQueryHook(t.id())
	}
	rows, err = r.streamChunk(conn, out, t, c)
	if err != nil {
		return 0, fmt.Errorf("mysql-cdc: reading chunk %d of table %s at binlog %s: %w", c.index, t.id(), high, err)
	}
	if _, err := conn.Execute("COMMIT"); err != nil {
		return 0, fmt.Errorf("mysql-cdc: ending the transaction that read chunk %d of table %s: %w", c.index, t.id(), err)
	}
	c.high = high
	return rows, nil
}

// snapshotConnection returns the connection the reader reads chunks on in
// consistent snapshots, in REPEATABLE READ, opening it the first time.
func (r *reader[T]) snapshotConnection() (*client.Conn, error) {
	if r.snapConn != nil {
		return r.snapConn, nil
	}
	conn, err := r.cfg.connect(context.Background())
	if err != nil {
		return nil, err
	}
	const q = "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ"
	if _, err := conn.Execute(q); err != nil {
		conn.Close()
		return nil, fmt.Errorf("mysql-cdc: opening the connection of the snapshot's transactions (%s): %w", q, err)
	}
	r.snapConn = conn
	return conn, nil
}

// closeSnapshotConnection closes the connection of the consistent
// snapshots, if open.
func (r *reader[T]) closeSnapshotConnection() {
	if r.snapConn != nil {
		r.snapConn.Close()
		r.snapConn = nil
	}
}

// snapshotPosition returns the binary log's position of the snapshot of
// the connection's transaction WITH CONSISTENT SNAPSHOT, as MariaDB tells
// it.
func snapshotPosition(conn *client.Conn) (position, error) {
	r, err := conn.Execute("SHOW STATUS LIKE 'binlog_snapshot_%'")
	if err != nil {
		return position{}, fmt.Errorf("reading the snapshot's binlog position (SHOW STATUS LIKE 'binlog_snapshot_%%'): %w", err)
	}
	defer r.Close()
	var p position
	for i := 0; i < r.RowNumber(); i++ {
		switch v := text(r, i, 1); strings.ToLower(text(r, i, 0)) {
		case "binlog_snapshot_file":
			p.File = v
		case "binlog_snapshot_position":
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil {
				return position{}, fmt.Errorf("the snapshot's binlog position %q is not a number: %w", v, err)
			}
			p.Pos = uint32(n)
		}
	}
	if p.File == "" || p.Pos == 0 {
		return position{}, fmt.Errorf("the server tells no binlog position of the snapshot (Binlog_snapshot_file and Binlog_snapshot_position): start it with --log-bin")
	}
	return p, nil
}

// streamChunk runs the query of chunk c of table t on conn and emits its
// rows as the server sends them, none kept, as insertions of the chunk's
// split; the caller holds them at one position of the binary log (a
// consistent snapshot, a table lock).
func (r *reader[T]) streamChunk(conn *client.Conn, out connector.Output[T], t *tableInfo, c *chunk) (rows int64, err error) {
	split := out.Split(c.ID())
	where := "snapshot chunk " + strconv.Itoa(c.index)
	var res mysql.Result
	img := make(rowImage, len(t.cols))
	err = conn.ExecuteSelectStreaming(chunkQuery(t, c), &res, func(row []mysql.FieldValue) error {
		for j := range img {
			img[j] = nil
			if j < len(row) {
				img[j] = row[j].Value()
			}
		}
		if err := r.emit(out, split, t, img, changelog.Insert, 0, where); err != nil {
			return err
		}
		rows++
		return nil
	}, nil)
	return rows, err
}
