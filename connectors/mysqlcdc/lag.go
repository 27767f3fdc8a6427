package mysqlcdc

import (
	"context"
	"fmt"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// serverLog is where the server writes its binary log, and the sizes of
// its files from the one a reader was reading up to that one, when it is
// a later one (nil otherwise), as a probe read them.
type serverLog struct {
	end   position
	sizes map[string]uint64
}

// logConn is the connection on which a binlog reader's probe reads the
// server's binary log position, apart from the binlog stream; only the
// probe's goroutine uses it.
type logConn struct {
	cfg  *config
	conn *client.Conn
	// show is the statement that shows the position on the server, once
	// one worked.
	show string
}

// showLogStatus are the statements that show where the server writes its
// binary log: MySQL 8.4 has only the second, which MySQL 8.2 introduced;
// MariaDB 10.5 calls it the third and keeps the first.
var showLogStatus = []string{"SHOW MASTER STATUS", "SHOW BINARY LOG STATUS", "SHOW BINLOG STATUS"}

// read reads where the server writes its binary log and, if that is a
// file after from, the sizes of the files from from on (SHOW BINARY LOGS),
// connecting first if need be; after an error the connection is closed
// and opened again next time.
func (l *logConn) read(ctx context.Context, from string) (serverLog, error) {
	if l.conn == nil {
		conn, err := l.cfg.connect(ctx)
		if err != nil {
			return serverLog{}, err
		}
		l.conn = conn
	}
	if d, ok := ctx.Deadline(); ok {
		_ = l.conn.SetDeadline(d)
	}
	s, err := l.position()
	if err == nil && from != "" && mysql.CompareBinlogFileName(s.end.File, from) > 0 {
		s.sizes, err = l.sizes(from, s.end.File)
	}
	if err != nil {
		l.close()
		return serverLog{}, err
	}
	return s, nil
}

// position reads where the server writes its binary log.
func (l *logConn) position() (serverLog, error) {
	shows := showLogStatus
	if l.show != "" {
		shows = []string{l.show}
	}
	var r *mysql.Result
	var err error
	for _, q := range shows {
		if r, err = l.conn.Execute(q); err == nil {
			l.show = q
			break
		}
	}
	if err != nil {
		l.show = ""
		return serverLog{}, fmt.Errorf("mysql-cdc: reading the server's binary log position at %s (%s; the user needs REPLICATION CLIENT, on MariaDB BINLOG MONITOR): %w", l.cfg.addr(), shows[0], err)
	}
	defer r.Close()
	if r.RowNumber() == 0 {
		return serverLog{}, fmt.Errorf("mysql-cdc: the server at %s shows no binary log position (%s is empty): is its binary log still on?", l.cfg.addr(), l.show)
	}
	pos, err := r.GetUint(0, 1)
	if err != nil {
		return serverLog{}, fmt.Errorf("mysql-cdc: the server's binary log position at %s (%s): %w", l.cfg.addr(), l.show, err)
	}
	return serverLog{end: position{File: text(r, 0, 0), Pos: uint32(pos)}}, nil
}

// sizes reads the sizes of the binary log files from from to to.
func (l *logConn) sizes(from, to string) (map[string]uint64, error) {
	r, err := l.conn.Execute("SHOW BINARY LOGS")
	if err != nil {
		return nil, fmt.Errorf("mysql-cdc: listing the binary logs at %s (SHOW BINARY LOGS; the user needs REPLICATION CLIENT): %w", l.cfg.addr(), err)
	}
	defer r.Close()
	sizes := map[string]uint64{}
	for i := 0; i < r.RowNumber(); i++ {
		f := text(r, i, 0)
		if mysql.CompareBinlogFileName(f, from) < 0 || mysql.CompareBinlogFileName(f, to) > 0 {
			continue
		}
		n, err := r.GetUint(i, 1)
		if err != nil {
			return nil, fmt.Errorf("mysql-cdc: the size of binary log %s at %s (SHOW BINARY LOGS): %w", f, l.cfg.addr(), err)
		}
		sizes[f] = n
	}
	return sizes, nil
}

func (l *logConn) close() {
	if l.conn != nil {
		l.conn.Close()
		l.conn = nil
	}
}

// lagBytes returns the bytes of binary log from cur to the end of the
// server's, and whether they are known: not when cur's file is not known
// yet (reading by GTID set, before the server named the file) or is
// before the server's and the server did not list its size (s.sizes).
// It is 0 when cur is past s, read before cur.
func lagBytes(cur position, s serverLog) (int64, bool) {
	if cur.File == "" || s.end.File == "" {
		return 0, false
	}
	switch c := mysql.CompareBinlogFileName(cur.File, s.end.File); {
	case c > 0:
		return 0, true
	case c == 0:
		return int64(s.end.Pos) - int64(min(cur.Pos, s.end.Pos)), true
	}
	size, ok := s.sizes[cur.File]
	if !ok {
		return 0, false
	}
	lag := int64(size) - int64(min(uint64(cur.Pos), size)) + int64(s.end.Pos)
	for f, n := range s.sizes {
		if mysql.CompareBinlogFileName(f, cur.File) > 0 && mysql.CompareBinlogFileName(f, s.end.File) < 0 {
			lag += int64(n)
		}
	}
	return lag, true
}

// lagStatus adds to a status report where the server writes its binary
// log (serverBinlogFile, serverBinlogPosition) and the bytes of it from
// the reader's position there (lagBytes), as far as known: the probe
// reads the server's position in the background, at most once a second.
func (b *binlogReader[T]) lagStatus(m map[string]any, now time.Time) {
	if b.log == nil {
		return
	}
	var s serverLog
	var ok bool
	if b.streaming {
		from := b.s.cur.File
		s, ok = b.log.Poll(now, func(ctx context.Context) (serverLog, error) { return b.logConn.read(ctx, from) })
	} else {
		s, ok = b.log.Latest(now)
	}
	if !ok {
		return
	}
	m["serverBinlogFile"] = s.end.File
	m["serverBinlogPosition"] = s.end.Pos
	if lag, ok := lagBytes(b.s.cur, s); ok {
		m["lagBytes"] = lag
	}
}
