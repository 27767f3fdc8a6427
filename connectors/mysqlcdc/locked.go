package mysqlcdc

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/eddystream/eddy/connector"
)

// transactional tells whether a storage engine, as the server names it,
// has transactions: InnoDB (XtraDB), RocksDB and TokuDB, whose chunks are
// read in consistent snapshots or between positions. The changes of a table
// of any other engine (MyISAM, Aria, MEMORY, ...) are written to the binary
// log at each statement's end, apart from when other sessions see them; an
// unknown engine ("") is taken to be one of those.
func transactional(engine string) bool {
	switch strings.ToLower(engine) {
	case "innodb", "xtradb", "rocksdb", "tokudb":
		return true
	}
	return false
}

// readLockedChunk reads a chunk of a table without transactions
// (transactional) under LOCK TABLES ... READ, on MariaDB and MySQL alike.
// The server grants the lock once the statements and transactions writing
// the table have ended, which is after their changes are in the binary
// log, and holds off every other writer until UNLOCK TABLES: the binary
// log's end, read while the lock is held, is the chunk's low and high both,
// and no change is applied to its rows. Between positions, such a table's
// changes are seen by other sessions at other times than they are written
// to the binary log: Aria shows a row inserted while the table is read
// only once its statement commits, after the binary log has it, so that a
// chunk's query could miss a row inserted before the chunk's low (and the
// binary log split then retract a row the changelog never had); and a
// change the query saw that came after the chunk's high would be emitted a
// second time.
//
// The rows are emitted as the server sends them, in one Read, so that a
// checkpoint holds all of them or none. The lock is taken on the
// connection of consistent snapshots; unless the chunk is read and the
// lock released without error, the connection is closed, which releases the
// lock, so that a connection kept is never left locked.
func (r *reader[T]) readLockedChunk(out connector.Output[T], t *tableInfo, c *chunk) (rows int64, err error) {
	if chunkQueryHook != nil {
		// Changes made here come before the lock, and so before the
		// chunk's high.
		chunkQueryHook(t.id())
	}
	conn, err := r.snapshotConnection()
	if err != nil {
		return 0, err
	}
	released := false
	defer func() {
		if !released {
			// The lock, or a result, may be left on it.
			r.closeSnapshotConnection()
		}
	}()
	if _, err := conn.Execute("LOCK TABLES " + quote(t.db) + "." + quote(t.name) + " READ"); err != nil {
		return 0, r.lockError(t, c, err)
	}
	high, err := binlogEnd(conn, r.ctx.Log())
	if err != nil {
		return 0, err
	}
	rows, err = r.streamChunk(conn, out, t, c)
	if err != nil {
		return 0, fmt.Errorf("mysql-cdc: reading chunk %d of table %s under LOCK TABLES ... READ at binlog %s: %w", c.index, t.id(), high, err)
	}
	if _, err := conn.Execute("UNLOCK TABLES"); err != nil {
		return 0, fmt.Errorf("mysql-cdc: unlocking table %s after reading its chunk %d (UNLOCK TABLES): %w", t.id(), c.index, err)
	}
	released = true
	c.high = high
	return rows, nil
}

// lockError says why LOCK TABLES ... READ of a table failed, and, for a
// user without the LOCK TABLES privilege, what to grant.
func (r *reader[T]) lockError(t *tableInfo, c *chunk, err error) error {
	var me *mysql.MyError
	if errors.As(err, &me) && (me.Code == mysql.ER_DBACCESS_DENIED_ERROR || me.Code == mysql.ER_TABLEACCESS_DENIED_ERROR ||
		me.Code == mysql.ER_SPECIFIC_ACCESS_DENIED_ERROR || me.Code == mysql.ER_ACCESS_DENIED_ERROR) {
		return fmt.Errorf("mysql-cdc: table %s (ENGINE = %s) has no transactions, so the snapshot reads each of its chunks under LOCK TABLES ... READ, and user '%s' lacks the LOCK TABLES privilege there: GRANT LOCK TABLES ON %s.* TO '%s' (at the user's host): %w",
			t.id(), t.engine, r.cfg.user, quote(t.db), r.cfg.user, err)
	}
	return fmt.Errorf("mysql-cdc: locking table %s to read its chunk %d (LOCK TABLES ... READ): %w", t.id(), c.index, err)
}
