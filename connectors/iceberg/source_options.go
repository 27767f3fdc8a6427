package iceberg

import (
	"strings"
	"time"

	"github.com/eddystream/eddy/connector"
)

// Starting strategies of a streaming read ('starting-strategy').
const (
	startTableScanThenIncremental = "TABLE_SCAN_THEN_INCREMENTAL"
	startFromLatestSnapshot       = "INCREMENTAL_FROM_LATEST_SNAPSHOT"
	startFromEarliestSnapshot     = "INCREMENTAL_FROM_EARLIEST_SNAPSHOT"
	startFromSnapshotID           = "INCREMENTAL_FROM_SNAPSHOT_ID"
	startFromSnapshotTimestamp    = "INCREMENTAL_FROM_SNAPSHOT_TIMESTAMP"
)

// sourceOptions are the options of reading a table, with the names of
// Flink's Iceberg connector.
var sourceOptions = []connector.Option{
	{Key: "streaming", Type: connector.Bool, Default: "false",
		Description: "Reading: 'false' reads one snapshot of the table and ends; 'true' follows the table, reading what every new snapshot appends, every 'monitor-interval'."},
	{Key: "streaming-changelog", Type: connector.Bool, Default: "false",
		Description: "Reading with 'streaming' = 'true': 'true' reads the table as a changelog, emitting the rows each snapshot adds as insertions and the rows it deletes as deletions, so that tables with updates and deletes can be followed; " +
			"a table whose DDL declares a PRIMARY KEY is always read so. 'false' reads the rows snapshots append, and a snapshot that deletes rows stops the read."},
	{Key: "snapshot-id", Type: connector.Int,
		Description: "Reading in batch: the id of the snapshot to read (time travel); by default the current one."},
	{Key: "as-of-timestamp", Type: connector.Int,
		Description: "Reading in batch: read the snapshot that was current at this time, in milliseconds since the epoch (time travel).",
		Check:       connector.NonNegative},
	{Key: "monitor-interval", Type: connector.Duration, Default: "10 s",
		Description: "Reading with 'streaming' = 'true': how often the source looks for new snapshots."},
	{Key: "starting-strategy", Type: connector.Enum, Default: startTableScanThenIncremental,
		Values: []string{startTableScanThenIncremental, startFromLatestSnapshot, startFromEarliestSnapshot, startFromSnapshotID, startFromSnapshotTimestamp},
		Description: "Reading with 'streaming' = 'true': where to start. TABLE_SCAN_THEN_INCREMENTAL reads the current snapshot in full, then what later snapshots append; " +
			"INCREMENTAL_FROM_LATEST_SNAPSHOT, INCREMENTAL_FROM_EARLIEST_SNAPSHOT, INCREMENTAL_FROM_SNAPSHOT_ID ('start-snapshot-id') and INCREMENTAL_FROM_SNAPSHOT_TIMESTAMP ('start-snapshot-timestamp') read what each snapshot appended from that snapshot on, inclusive."},
	{Key: "start-snapshot-id", Type: connector.Int,
		Description: "Reading with 'starting-strategy' = 'INCREMENTAL_FROM_SNAPSHOT_ID': the first snapshot whose appended rows are read."},
	{Key: "start-snapshot-timestamp", Type: connector.Int,
		Description: "Reading with 'starting-strategy' = 'INCREMENTAL_FROM_SNAPSHOT_TIMESTAMP': rows appended by the snapshots committed at or after this time (milliseconds since the epoch) are read.",
		Check:       connector.NonNegative},
}

// sourceConfig is the configuration of reading a table.
type sourceConfig struct {
	*config
	streaming         bool
	snapshotID        int64 // 0: not set
	asOfTimestamp     int64 // -1: not set
	monitorInterval   time.Duration
	startingStrategy  string
	startSnapshotID   int64 // 0: not set
	startSnapshotTime int64 // -1: not set
	// changelog is set when a streaming read emits the rows snapshots
	// delete too ('streaming-changelog', or a primary key; see newSource).
	changelog bool
}

func optionError(key, problem string) error {
	return &connector.OptionError{Connector: "iceberg", Key: key, Problem: problem}
}

func newSourceConfig(name string, o connector.Options) (*sourceConfig, error) {
	c, err := newConfig(name, o)
	if err != nil {
		return nil, err
	}
	sc := &sourceConfig{config: c, streaming: o.Bool("streaming"), asOfTimestamp: -1, startSnapshotTime: -1,
		monitorInterval: o.Duration("monitor-interval"), startingStrategy: strings.ToUpper(o.String("starting-strategy")),
		changelog: o.Bool("streaming-changelog")}
	if o.IsSet("snapshot-id") {
		sc.snapshotID = o.Int("snapshot-id")
	}
	if o.IsSet("as-of-timestamp") {
		sc.asOfTimestamp = o.Int("as-of-timestamp")
	}
	if o.IsSet("start-snapshot-id") {
		sc.startSnapshotID = o.Int("start-snapshot-id")
	}
	if o.IsSet("start-snapshot-timestamp") {
		sc.startSnapshotTime = o.Int("start-snapshot-timestamp")
	}
	switch {
	case sc.streaming && sc.monitorInterval <= 0:
		return nil, optionError("monitor-interval", "must be positive: how often a streaming read looks for new snapshots, such as '10 s'")
	case sc.changelog && !sc.streaming:
		return nil, optionError("streaming-changelog", "applies to streaming reads only: set 'streaming' = 'true' too (a batch read returns the rows of one snapshot, with its deletes applied)")
	case o.IsSet("snapshot-id") && o.IsSet("as-of-timestamp"):
		return nil, optionError("as-of-timestamp", "is set with 'snapshot-id': choose the snapshot by one of them")
	case sc.streaming && o.IsSet("snapshot-id"):
		return nil, optionError("snapshot-id", "chooses the snapshot of a batch read; a streaming read starts per 'starting-strategy' (INCREMENTAL_FROM_SNAPSHOT_ID with 'start-snapshot-id')")
	case sc.streaming && o.IsSet("as-of-timestamp"):
		return nil, optionError("as-of-timestamp", "chooses the snapshot of a batch read; a streaming read starts per 'starting-strategy' (INCREMENTAL_FROM_SNAPSHOT_TIMESTAMP with 'start-snapshot-timestamp')")
	case sc.streaming && sc.startingStrategy == startFromSnapshotID && !o.IsSet("start-snapshot-id"):
		return nil, optionError("start-snapshot-id", "is required by 'starting-strategy' = 'INCREMENTAL_FROM_SNAPSHOT_ID': give the id of the first snapshot to read")
	case sc.streaming && sc.startingStrategy == startFromSnapshotTimestamp && !o.IsSet("start-snapshot-timestamp"):
		return nil, optionError("start-snapshot-timestamp", "is required by 'starting-strategy' = 'INCREMENTAL_FROM_SNAPSHOT_TIMESTAMP': give a time in milliseconds since the epoch")
	case o.IsSet("start-snapshot-id") && sc.startingStrategy != startFromSnapshotID:
		return nil, optionError("start-snapshot-id", "applies to 'starting-strategy' = 'INCREMENTAL_FROM_SNAPSHOT_ID' of a streaming read only: set both with 'streaming' = 'true', or use 'snapshot-id' for a batch read")
	case o.IsSet("start-snapshot-timestamp") && sc.startingStrategy != startFromSnapshotTimestamp:
		return nil, optionError("start-snapshot-timestamp", "applies to 'starting-strategy' = 'INCREMENTAL_FROM_SNAPSHOT_TIMESTAMP' of a streaming read only: set both with 'streaming' = 'true', or use 'as-of-timestamp' for a batch read")
	}
	return sc, nil
}
