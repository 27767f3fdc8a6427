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
// runs, after its low position or snapshot is taken.
var chunkQueryHook func(table string)

// consistentSnapshot tells whether a table read as one chunk is read in a
// transaction WITH CONSISTENT SNAPSHOT rather than buffered and brought up
// to date with the binary log: on MariaDB, which tells the binary log's
// position of the transaction's snapshot, and for InnoDB tables, which the
// snapshot holds.
func (r *reader[T]) consistentSnapshot(t *tableInfo) bool {
	return t.chunkKey < 0 && r.flavor == mysql.MariaDBFlavor && strings.EqualFold(t.engine, "InnoDB")
}

// readConsistentChunk reads a table that is read as one chunk, on
// MariaDB, in a transaction WITH CONSISTENT SNAPSHOT: its rows are those
// at the binary log's position of the snapshot (Binlog_snapshot_file and
// Binlog_snapshot_position), the chunk's low and high, so that no change
// of the binary log is applied to them. They are emitted as the server
// sends them, none kept, in one Read, so that a checkpoint holds all of
// them or none; a failure before their end reads them again after a
// restore.
func (r *reader[T]) readConsistentChunk(out connector.Output[T], t *tableInfo, c *chunk) (rows int64, err error) {
	conn, err := r.cfg.connect(context.Background())
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	for _, q := range []string{"SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ", "START TRANSACTION WITH CONSISTENT SNAPSHOT"} {
		if _, err := conn.Execute(q); err != nil {
			return 0, fmt.Errorf("mysql-cdc: reading table %s in one transaction (%s): %w", t.id(), q, err)
		}
	}
	high, err := snapshotPosition(conn)
	if err != nil {
		return 0, fmt.Errorf("mysql-cdc: reading table %s in one transaction: %w", t.id(), err)
	}
	if chunkQueryHook != nil {
		chunkQueryHook(t.id())
	}
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
	if err != nil {
		return 0, fmt.Errorf("mysql-cdc: reading table %s at binlog %s: %w", t.id(), high, err)
	}
	if _, err := conn.Execute("COMMIT"); err != nil {
		return 0, fmt.Errorf("mysql-cdc: ending the transaction that read table %s: %w", t.id(), err)
	}
	c.high = high
	return rows, nil
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
