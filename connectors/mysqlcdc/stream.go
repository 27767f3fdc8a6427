package mysqlcdc

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// stream reads the server's binary log from a position, following the
// files as they rotate, and tells where each event starts.
type stream struct {
	syncer   *replication.BinlogSyncer
	streamer *replication.BinlogStreamer
	cur      position // where the next event starts
}

// openStream starts reading the binary log at from, as the replica
// serverID: by its GTID set if it has one that is not empty (at the first
// transaction not in it), otherwise at its file and offset.
func (c *config) openStream(serverID uint32, flavor string, from position, log *slog.Logger) (*stream, error) {
	cfg := replication.BinlogSyncerConfig{
		ServerID: serverID, Flavor: flavor, Host: c.host, Port: uint16(c.port), User: c.user, Password: c.password,
		TimestampStringLocation: time.UTC, HeartbeatPeriod: c.heartbeat, Logger: slog.New(quietHandler{log.Handler()}),
		MaxReconnectAttempts: max(c.retries, 1),
	}
	if flavor == mysql.MariaDBFlavor {
		cfg.DumpCommandFlag = replication.BINLOG_SEND_ANNOTATE_ROWS_EVENT
	}
	if cfg.HeartbeatPeriod > 0 {
		cfg.ReadTimeout = 3 * cfg.HeartbeatPeriod
	}
	s := replication.NewBinlogSyncer(cfg)
	var st *replication.BinlogStreamer
	var err error
	if from.byGTID() {
		var set mysql.GTIDSet
		if set, err = parseGTIDs(flavor, from.GTIDs); err != nil {
			s.Close()
			return nil, fmt.Errorf("mysql-cdc: the GTID set '%s' is not one of the server's flavour (%s): %w", from.GTIDs, flavor, err)
		}
		st, err = s.StartSyncGTID(set)
	} else {
		st, err = s.StartSync(mysql.Position{Name: from.File, Pos: from.Pos})
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("mysql-cdc: reading the binary log at %s as replica server id %d (the user needs REPLICATION SLAVE): %w", from, serverID, err)
	}
	return &stream{syncer: s, streamer: st, cur: from}, nil
}

// next returns the next event, where it starts and where the next one
// starts, or a nil event when ctx ends first. Events the server makes up
// (the rotate and format description at the start of a stream, heartbeats)
// take no room in the log: they start and end at the current position.
func (s *stream) next(ctx context.Context) (*replication.BinlogEvent, position, position, error) {
	ev, err := s.streamer.GetEvent(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, position{}, position{}, nil
		}
		return nil, position{}, position{}, fmt.Errorf("mysql-cdc: reading the binary log at %s: %w", s.cur, err)
	}
	h := ev.Header
	if r, ok := ev.Event.(*replication.RotateEvent); ok {
		s.cur = position{File: string(r.NextLogName), Pos: uint32(r.Position)}
		return ev, s.cur, s.cur, nil
	}
	if h.LogPos == 0 || h.LogPos < h.EventSize || h.EventType == replication.HEARTBEAT_EVENT || h.EventType == replication.HEARTBEAT_LOG_EVENT_V2 {
		return ev, s.cur, s.cur, nil
	}
	start := position{File: s.cur.File, Pos: h.LogPos - h.EventSize}
	s.cur = position{File: s.cur.File, Pos: h.LogPos}
	return ev, start, s.cur, nil
}

func (s *stream) close() { s.syncer.Close() }

// quietHandler passes on the records of the binlog client at warning level
// and above: its informational records (each connection and rotation) would
// drown the job's log.
type quietHandler struct{ slog.Handler }

func (h quietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

func (h quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return quietHandler{h.Handler.WithAttrs(as)}
}

func (h quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{h.Handler.WithGroup(name)}
}
