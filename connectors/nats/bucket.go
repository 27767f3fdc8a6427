package nats

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// A table with 'bucket' is a JetStream key/value bucket: the table's
// primary key (one column) is the key, rendered as text, and the other
// columns are the value, in 'format'. Lookup joins look keys up in it
// (lookup.go); a sink puts the rows by key and deletes the keys of
// deletions (bucket_sink.go).

// Lookup caches ('lookup.cache').
const (
	cacheNone    = "NONE"
	cachePartial = "PARTIAL"
	cacheFull    = "FULL"
)

// bucketOptions are the options of bucket tables.
var bucketOptions = []connector.Option{
	{Key: "bucket", Type: connector.String,
		Description: "A JetStream key/value bucket that backs the table: its PRIMARY KEY (one STRING or integer column) is the key, the other columns are the value, in 'format'. Looked up by lookup joins (JOIN t FOR SYSTEM_TIME AS OF s.proc_time ON s.k = t.k) and written as upserts by key (deletions delete the key). Not with 'stream' or 'subject'.",
		Check: func(v string) error {
			if !bucketName.MatchString(v) {
				return fmt.Errorf("a bucket name has only letters, digits, '-' and '_'")
			}
			return nil
		}},
	{Key: "lookup.cache", Type: connector.Enum, Default: cacheNone, Values: []string{cacheNone, cachePartial, cacheFull},
		Description: "Buckets, lookup joins: 'NONE' reads each key from the bucket; 'PARTIAL' keeps the rows of the keys looked up, as the 'lookup.partial-cache.*' options say; 'FULL' loads the whole bucket into memory at the first lookup. 'FULL', and 'PARTIAL' unless 'lookup.partial-cache.watch' = 'false', watch the bucket and apply every change to what they hold, so they serve no value the bucket has replaced or deleted once the change has reached the job."},
	{Key: "lookup.partial-cache.max-rows", Type: connector.Int, Check: connector.Positive,
		Description: "With 'PARTIAL': the most rows the cache holds (a key that finds nothing counts as one); the least recently used keys go first."},
	{Key: "lookup.partial-cache.expire-after-write", Type: connector.Duration,
		Description: "With 'PARTIAL': how long the row of a key stays cached after it was read."},
	{Key: "lookup.partial-cache.expire-after-access", Type: connector.Duration,
		Description: "With 'PARTIAL': how long the row of a key stays cached after it was last used."},
	{Key: "lookup.partial-cache.cache-missing-key", Type: connector.Bool, Default: "true",
		Description: "With 'PARTIAL': whether a key that finds nothing is cached as such."},
	{Key: "lookup.partial-cache.watch", Type: connector.Bool, Default: "true",
		Description: "With 'PARTIAL': whether the lookup watches the bucket's changes and drops the cached keys they change, so that a cached row is never one the bucket has replaced or deleted (one subscription to every change of the bucket); with 'false' a cached row may be stale until it expires."},
	{Key: "lookup.max-retries", Type: connector.Int, Default: "3", Check: connector.NonNegative,
		Description: "Buckets: how many times a failed read of a key is retried before the job fails."},
}

var bucketName = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// kvKey matches the keys a bucket takes.
var kvKey = regexp.MustCompile(`^[-/_=.a-zA-Z0-9]+$`)

// validKey says whether k is a key a bucket can hold.
func validKey(k string) bool {
	return k != "" && k[0] != '.' && k[len(k)-1] != '.' && !strings.Contains(k, "..") && kvKey.MatchString(k)
}

// checkBucket checks the options of a bucket table (c.bucket set).
func (c *config) checkBucket(o connector.Options, sink bool) error {
	for _, k := range []string{"stream", "subject", "consumer", "scan.startup.mode", "scan.startup.timestamp-millis", "scan.startup.specific-offset", "scan.bounded.mode"} {
		if o.IsSet(k) {
			return optErr(k, "is an option of streams and subjects; a table with 'bucket' is a key/value bucket: remove one of them")
		}
	}
	if sink {
		for _, opt := range bucketOptions[1:] {
			if o.IsSet(opt.Key) {
				return optErr(opt.Key, "is an option of lookups; remove it from the sink's options")
			}
		}
		switch c.guarantee {
		case "":
			c.guarantee = atLeastOnce
		case exactlyOnce:
			return optErr("sink.delivery-guarantee", "= 'exactly-once' is not offered for a bucket: rows are put by key, so writing them again after a failure leaves each key at its last value; use 'at-least-once' (the default) or 'none'")
		}
		return nil
	}
	if o.IsSet("sink.delivery-guarantee") {
		return optErr("sink.delivery-guarantee", "is an option of sinks; remove it from the source's options")
	}
	c.cache = o.String("lookup.cache")
	c.cacheRows = o.Int("lookup.partial-cache.max-rows")
	c.expireWrite = o.Duration("lookup.partial-cache.expire-after-write")
	c.expireAccess = o.Duration("lookup.partial-cache.expire-after-access")
	c.cacheMissing = o.Bool("lookup.partial-cache.cache-missing-key")
	c.watch = o.Bool("lookup.partial-cache.watch")
	c.lookupRetries = int(o.Int("lookup.max-retries"))
	if c.cache != cachePartial {
		for _, opt := range bucketOptions {
			if strings.HasPrefix(opt.Key, "lookup.partial-cache.") && o.IsSet(opt.Key) {
				return optErr(opt.Key, fmt.Sprintf("is an option of 'lookup.cache' = 'PARTIAL', and 'lookup.cache' is '%s'; set it to 'PARTIAL' or remove the option", c.cache))
			}
		}
		return nil
	}
	if c.cacheRows == 0 && c.expireWrite <= 0 && c.expireAccess <= 0 {
		return optErr("lookup.cache", "= 'PARTIAL' needs a bound on the cache, or it grows without end: set 'lookup.partial-cache.max-rows', 'lookup.partial-cache.expire-after-write' or 'lookup.partial-cache.expire-after-access'")
	}
	return nil
}

// checkNoBucketOptions refuses the options of buckets on a table of a
// stream or of subjects.
func checkNoBucketOptions(o connector.Options) error {
	for _, opt := range bucketOptions[1:] {
		if o.IsSet(opt.Key) {
			return optErr(opt.Key, "is an option of key/value buckets; set 'bucket' or remove the option")
		}
	}
	return nil
}

// bucketTable is what a bucket table's declaration says: the key column
// and the decoders and encoders of its values.
type bucketTable struct {
	table  *connector.Table
	keyCol int
	keyT   types.Type
}

// newBucketTable checks the table of a bucket: a primary key of one
// STRING or integer column, no metadata columns, a format of rows.
func (c *config) newBucketTable(ctx connector.Context) (*bucketTable, error) {
	t := ctx.Table
	if t == nil {
		return nil, fmt.Errorf("nats %q: 'bucket' backs SQL tables (looked up by lookup joins, written by INSERT INTO); in Go, read the bucket with the NATS client", c.name)
	}
	if len(t.PrimaryKey) != 1 {
		return nil, fmt.Errorf("nats %q: the table of bucket %q needs a PRIMARY KEY of one column, the bucket's key: declare PRIMARY KEY (k) NOT ENFORCED", c.name, c.bucket)
	}
	if len(t.Metadata) > 0 {
		return nil, fmt.Errorf("nats %q: the table of bucket %q offers no metadata columns: remove %q", c.name, c.bucket, t.Metadata[0])
	}
	if !c.changelogs.IsInsertOnly() {
		f, _ := ctx.Options.Format()
		return nil, fmt.Errorf("nats %q: bucket %q holds one row per key, and format '%s' is a changelog: use 'json', 'csv' or 'raw'", c.name, c.bucket, f)
	}
	b := &bucketTable{table: t, keyCol: t.PrimaryKey[0]}
	b.keyT = t.Schema.FieldType(b.keyCol)
	switch b.keyT.Kind() {
	case types.KindVarChar, types.KindChar, types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
	default:
		return nil, fmt.Errorf("nats %q: the key of bucket %q, column %s, is %v; a bucket's keys are text: declare it STRING, or an integer type (written in decimal)", c.name, c.bucket, t.Schema.Field(b.keyCol).Name, b.keyT)
	}
	return b, nil
}

// renderKey returns the bucket key of field i of r (of the key's type t),
// and false if it is NULL.
func renderKey(t types.Type, r types.Row, i int) (string, bool) {
	if r.IsNull(i) {
		return "", false
	}
	switch t.Kind() {
	case types.KindTinyInt:
		return strconv.FormatInt(int64(int8(r.Int64(i))), 10), true
	case types.KindSmallInt:
		return strconv.FormatInt(int64(int16(r.Int64(i))), 10), true
	case types.KindInt:
		return strconv.FormatInt(int64(r.Int32(i)), 10), true
	case types.KindBigInt:
		return strconv.FormatInt(r.Int64(i), 10), true
	}
	return r.String(i), true
}

// parseKey sets field i of w (of the key's type t) to the key k, and
// returns false if k is not the rendering of a value of t (renderKey
// never gives it, so no lookup finds it).
func parseKey(t types.Type, w *types.RowWriter, i int, k string) bool {
	bits := 0
	switch t.Kind() {
	case types.KindTinyInt:
		bits = 8
	case types.KindSmallInt:
		bits = 16
	case types.KindInt:
		bits = 32
	case types.KindBigInt:
		bits = 64
	default:
		w.SetString(i, k)
		return true
	}
	v, err := strconv.ParseInt(k, 10, bits)
	if err != nil || strconv.FormatInt(v, 10) != k {
		return false
	}
	w.SetInt64(i, v)
	return true
}

// keyValue connects and opens the bucket.
func (c *config) keyValue(what string, log *slog.Logger, extra ...natsgo.Option) (*natsgo.Conn, jetstream.JetStream, jetstream.KeyValue, error) {
	nc, err := c.connect(what, log, extra...)
	if err != nil {
		return nil, nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, nil, fmt.Errorf("nats %q: %w", c.name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	kv, err := js.KeyValue(ctx, c.bucket)
	if err != nil {
		nc.Close()
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			return nil, nil, nil, fmt.Errorf("nats %q: bucket %q does not exist on %s: %w; create it (nats kv add %s) or fix 'bucket'", c.name, c.bucket, c.servers(), err, c.bucket)
		}
		return nil, nil, nil, fmt.Errorf("nats %q: opening bucket %q on %s: %w; is JetStream enabled on the server?", c.name, c.bucket, c.servers(), err)
	}
	return nc, js, kv, nil
}
