package iceberg

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy/connector"
)

// maintenanceOptions configure the table maintenance the committer runs
// while the job does: snapshot expiry and orphan-file removal.
var maintenanceOptions = []connector.Option{
	{Key: "maintenance.interval", Type: connector.Duration, Default: "10 min",
		Description: "How often the committer expires old snapshots and removes orphan files, in the background after a commit; '0 s' turns maintenance off."},
	{Key: "history.expire.max-snapshot-age-ms", Type: connector.Int, Default: "432000000",
		Description: "Snapshots older than this many milliseconds are expired (Iceberg's table property of the same name; 5 days by default). A streaming job commits one snapshot per checkpoint, so a lower age keeps the table's metadata small.",
		Check:       connector.NonNegative},
	{Key: "history.expire.min-snapshots-to-keep", Type: connector.Int, Default: "1",
		Description: "The number of newest snapshots kept whatever their age.",
		Check: func(v string) error {
			if v == "0" || (len(v) > 0 && v[0] == '-') {
				return fmt.Errorf("want at least 1: the table's current snapshot is always kept")
			}
			return nil
		}},
	{Key: "maintenance.orphan-files.older-than", Type: connector.Duration, Default: "3 d",
		Description: "Files under the table's location that no snapshot references and that are older than this are removed: files of attempts that failed before their checkpoint. Keep it well above the checkpoint interval, since the files of a checkpoint are unreferenced until it commits; '0 s' turns orphan removal off."},
}

// maintenanceConfig is the maintenance part of the sink's configuration.
type maintenanceConfig struct {
	interval       time.Duration
	maxSnapshotAge time.Duration
	minSnapshots   int
	orphansAfter   time.Duration
}

func newMaintenanceConfig(o connector.Options) maintenanceConfig {
	return maintenanceConfig{
		interval:       o.Duration("maintenance.interval"),
		maxSnapshotAge: time.Duration(o.Int("history.expire.max-snapshot-age-ms")) * time.Millisecond,
		minSnapshots:   int(o.Int("history.expire.min-snapshots-to-keep")),
		orphansAfter:   o.Duration("maintenance.orphan-files.older-than"),
	}
}

// maintainer runs the table's maintenance in the background, one run at a
// time, at most once per interval. A run that fails is logged and tried
// again at the next interval: maintenance never stops the stream.
type maintainer struct {
	where string
	load  func(context.Context) (*table.Table, error)
	log   *slog.Logger
	cfg   maintenanceConfig
	// now is the clock (a test's fake one).
	now     func() time.Time
	last    time.Time
	running sync.WaitGroup
	busy    bool
	mu      sync.Mutex // guards busy
	ctx     context.Context
	cancel  context.CancelFunc
}

// newMaintainer returns the maintainer of the table load loads; where
// names it in logs.
func newMaintainer(where string, cfg maintenanceConfig, log *slog.Logger, load func(context.Context) (*table.Table, error)) *maintainer {
	ctx, cancel := context.WithCancel(context.Background())
	return &maintainer{where: where, load: load, log: log, cfg: cfg, now: time.Now, ctx: ctx, cancel: cancel}
}

// afterCommit starts a maintenance run if one is due and none is running.
func (m *maintainer) afterCommit() {
	if m.cfg.interval <= 0 {
		return
	}
	now := m.now()
	if !m.last.IsZero() && now.Sub(m.last) < m.cfg.interval {
		return
	}
	m.mu.Lock()
	if m.busy {
		m.mu.Unlock()
		return
	}
	m.busy = true
	m.mu.Unlock()
	m.last = now
	m.running.Add(1)
	go func() {
		defer m.running.Done()
		if err := m.run(m.ctx); err != nil && m.ctx.Err() == nil {
			m.log.Warn("iceberg table maintenance failed; it runs again at the next interval", "table", m.where, "error", err)
		}
		m.mu.Lock()
		m.busy = false
		m.mu.Unlock()
	}()
}

// run expires snapshots and removes orphan files, on a table of its own.
func (m *maintainer) run(ctx context.Context) error {
	tbl, err := m.load(ctx)
	if err != nil {
		return err
	}
	before := len(tbl.Metadata().Snapshots())
	tx := tbl.NewTransaction()
	if err := tx.ExpireSnapshots(table.WithOlderThan(m.cfg.maxSnapshotAge), table.WithRetainLast(m.cfg.minSnapshots)); err != nil {
		return fmt.Errorf("expiring snapshots: %w", err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		return fmt.Errorf("committing the expiry of snapshots: %w", err)
	}
	if n := before - len(tbl.Metadata().Snapshots()); n > 0 {
		m.log.Info("iceberg snapshots expired", "table", m.where, "expired", n)
	}
	if m.cfg.orphansAfter <= 0 {
		return nil
	}
	res, err := tbl.DeleteOrphanFiles(ctx, table.WithFilesOlderThan(m.cfg.orphansAfter))
	if err != nil {
		return fmt.Errorf("removing orphan files: %w", err)
	}
	if n := len(res.DeletedFiles); n > 0 {
		m.log.Info("iceberg orphan files removed", "table", m.where, "files", n)
	}
	return nil
}

// close stops a running maintenance run and waits for it.
func (m *maintainer) close() {
	m.cancel()
	m.running.Wait()
}
