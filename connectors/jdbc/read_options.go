package jdbc

import (
	"fmt"
	"strings"
	"time"

	"github.com/eddystream/eddy/connector"
)

// readOptions are the options of the scan and lookup sources, with the
// names of Flink's JDBC connector.
var readOptions = []connector.Option{
	{Key: "scan.partition.column", Type: connector.String,
		Description: "Scan: the column the table is split on into 'scan.partition.num' ranges read in parallel; a numeric, DATE or TIMESTAMP column. The four 'scan.partition.*' options go together."},
	{Key: "scan.partition.num", Type: connector.Int,
		Description: "Scan: the number of ranges (splits) of the partition column.", Check: connector.Positive},
	{Key: "scan.partition.lower-bound", Type: connector.String,
		Description: "Scan: the smallest value of the first range: an integer, or for a DATE or TIMESTAMP column its literal ('2024-01-01', '2024-01-01 00:00:00') or an integer of milliseconds since the epoch. As in Flink, rows whose partition column is below it, above the upper bound or NULL are not read."},
	{Key: "scan.partition.upper-bound", Type: connector.String,
		Description: "Scan: the largest value of the last range, as the lower bound."},
	{Key: "scan.fetch-size", Type: connector.Int, Default: "0",
		Description: "Scan: the rows fetched per round trip; PostgreSQL reads through a cursor in batches of that many rows, 0 streams the whole result of one query (MySQL and MariaDB always stream: their driver has no fetch size).", Check: connector.NonNegative},
	{Key: "scan.auto-commit", Type: connector.Bool, Default: "true",
		Description: "Accepted for compatibility: a scan runs read-only queries, in one read-only transaction per cursor."},
	{Key: "lookup.cache", Type: connector.Enum, Default: "NONE", Values: []string{"NONE", "PARTIAL"},
		Description: "Lookup joins: 'NONE' queries the database for every key; 'PARTIAL' keeps the rows of keys looked up, as the 'lookup.partial-cache.*' options say (the rows found may then be stale)."},
	{Key: "lookup.partial-cache.max-rows", Type: connector.Int,
		Description: "With 'PARTIAL': the most rows the cache holds (a key that finds nothing counts as one); the least recently used keys go first.", Check: connector.Positive},
	{Key: "lookup.partial-cache.expire-after-write", Type: connector.Duration,
		Description: "With 'PARTIAL': how long the rows of a key stay cached after they were read."},
	{Key: "lookup.partial-cache.expire-after-access", Type: connector.Duration,
		Description: "With 'PARTIAL': how long the rows of a key stay cached after they were last used."},
	{Key: "lookup.partial-cache.cache-missing-key", Type: connector.Bool, Default: "true",
		Description: "With 'PARTIAL': whether a key that finds no row is cached as such."},
	{Key: "lookup.max-retries", Type: connector.Int, Default: "3",
		Description: "Lookup joins: how many times a failed lookup is retried, on a new connection, before the job fails.", Check: connector.NonNegative},
	{Key: "lookup.cache.max-rows", Type: connector.Int, Default: "-1",
		Description: "Deprecated (Flink's older name): with 'lookup.cache.ttl', a positive number turns on a partial cache of that many rows, whatever 'lookup.cache' says."},
	{Key: "lookup.cache.ttl", Type: connector.Duration, Default: "10 s",
		Description: "Deprecated: the expire-after-write time of the cache 'lookup.cache.max-rows' turns on."},
	{Key: "lookup.cache.caching-missing-key", Type: connector.Bool, Default: "true",
		Description: "Deprecated: whether the cache 'lookup.cache.max-rows' turns on caches keys that find no row."},
}

// partitionKeys are the options that go together.
var partitionKeys = []string{"scan.partition.column", "scan.partition.num", "scan.partition.lower-bound", "scan.partition.upper-bound"}

// readConfig is the configuration of the scan and lookup sources.
type readConfig struct {
	*config
	partColumn    string // "" when the scan is not partitioned
	partNum       int
	lower, upper  string
	fetchSize     int
	cache         bool
	cacheRows     int64 // 0: no bound
	expireWrite   time.Duration
	expireAccess  time.Duration
	cacheMissing  bool
	lookupRetries int
}

func newReadConfig(o connector.Options) (*readConfig, error) {
	cfg, err := newConfig(o)
	if err != nil {
		return nil, err
	}
	r := &readConfig{config: cfg, fetchSize: int(o.Int("scan.fetch-size")), lookupRetries: int(o.Int("lookup.max-retries"))}
	var set, unset []string
	for _, k := range partitionKeys {
		if o.IsSet(k) {
			set = append(set, "'"+k+"'")
		} else {
			unset = append(unset, "'"+k+"'")
		}
	}
	if len(set) > 0 && len(unset) > 0 {
		return nil, &connector.OptionError{Connector: "jdbc", Key: strings.Trim(unset[0], "'"),
			Problem: fmt.Sprintf("is missing: the scan of %s is partitioned by %s only with all four of %s; set %s too, or none of them",
				cfg.where(), strings.Join(set, ", "), strings.Join(quoted(partitionKeys), ", "), strings.Join(unset, ", "))}
	}
	if len(set) > 0 {
		r.partColumn, r.partNum = o.String("scan.partition.column"), int(o.Int("scan.partition.num"))
		r.lower, r.upper = strings.TrimSpace(o.String("scan.partition.lower-bound")), strings.TrimSpace(o.String("scan.partition.upper-bound"))
	}
	switch {
	case o.Int("lookup.cache.max-rows") > 0 && o.Duration("lookup.cache.ttl") > 0:
		r.cache, r.cacheRows, r.expireWrite = true, o.Int("lookup.cache.max-rows"), o.Duration("lookup.cache.ttl")
		r.cacheMissing = o.Bool("lookup.cache.caching-missing-key")
	case strings.EqualFold(o.String("lookup.cache"), "PARTIAL"):
		r.cache, r.cacheRows = true, o.Int("lookup.partial-cache.max-rows")
		r.expireWrite, r.expireAccess = o.Duration("lookup.partial-cache.expire-after-write"), o.Duration("lookup.partial-cache.expire-after-access")
		r.cacheMissing = o.Bool("lookup.partial-cache.cache-missing-key")
		if r.cacheRows == 0 && r.expireWrite <= 0 && r.expireAccess <= 0 {
			return nil, &connector.OptionError{Connector: "jdbc", Key: "lookup.cache",
				Problem: "= 'PARTIAL' needs a bound on the cache, or it grows without end: set 'lookup.partial-cache.max-rows', 'lookup.partial-cache.expire-after-write' or 'lookup.partial-cache.expire-after-access'"}
		}
	}
	return r, nil
}

func quoted(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = "'" + k + "'"
	}
	return out
}
