package nats_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

var buckets atomic.Int64

// freshBucket creates a key/value bucket of a new name.
func freshBucket(t testing.TB, js jetstream.JetStream) (string, jetstream.KeyValue) {
	t.Helper()
	name := fmt.Sprintf("B%d", buckets.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: name})
	if err != nil {
		t.Fatal(err)
	}
	return name, kv
}

func put(t testing.TB, kv jetstream.KeyValue, k, v string) {
	t.Helper()
	if _, err := kv.PutString(context.Background(), k, v); err != nil {
		t.Fatal(err)
	}
}

// customers is the table of a bucket of customers keyed by id.
func customers(t testing.TB) *connector.Table {
	return &connector.Table{Name: "customers", PrimaryKey: []int{0}, Schema: types.MustRowType(
		types.F("id", mustType(t, "BIGINT NOT NULL")), types.F("name", mustType(t, "STRING")), types.F("tier", mustType(t, "STRING")))}
}

// lookupOf opens the table of a bucket and returns its lookup by key.
func lookupOf(t testing.TB, opts map[string]string, tb *connector.Table, keys ...int) connector.LookupFunc {
	t.Helper()
	src := openTable(t, opts, tb)
	ls, ok := connector.TableLookup(src)
	if !ok {
		t.Fatalf("the source of a bucket is a %T, which looks nothing up", src)
	}
	if len(keys) == 0 {
		keys = []int{0}
	}
	f, err := ls.NewLookup(keys)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// names looks id up and returns the names found.
func names(t testing.TB, f connector.LookupFunc, id int64) []string {
	t.Helper()
	kt := types.MustRowType(types.F("id", mustType(t, "BIGINT")))
	w := types.NewRowWriter(kt, types.NewArena(0))
	w.SetInt64(0, id)
	rows, err := f(context.Background(), w.Finish())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		if r.Int64(0) != id {
			t.Fatalf("looking up %d found a row of id %d", id, r.Int64(0))
		}
		out = append(out, r.String(1))
	}
	return out
}

// eventually waits until cond holds, failing after a generous deadline.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 30 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestBucketLookup looks keys up in a bucket with each cache: a key held
// finds its row (the id from the key, the rest from the value), a missing
// key finds nothing, and changes to the bucket reach the lookups of the
// caches that watch it.
func TestBucketLookup(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	for _, c := range []struct {
		name  string
		opts  map[string]string
		fresh bool // changes reach cached keys
	}{
		{"none", nil, true},
		{"partial watched", map[string]string{"lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "100"}, true},
		{"partial unwatched", map[string]string{"lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "100", "lookup.partial-cache.watch": "false"}, false},
		{"full", map[string]string{"lookup.cache": "FULL"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			bucket, kv := freshBucket(t, js)
			put(t, kv, "1", `{"name": "Ann", "tier": "gold"}`)
			put(t, kv, "2", `{"id": 99, "name": "Bob"}`)
			put(t, kv, "007", `{"name": "Zero"}`)
			opts := map[string]string{"url": url, "bucket": bucket, "format": "json"}
			for k, v := range c.opts {
				opts[k] = v
			}
			f := lookupOf(t, opts, customers(t))
			if got := names(t, f, 1); !slices.Equal(got, []string{"Ann"}) {
				t.Fatalf("key 1 found %v, want Ann", got)
			}
			if got := names(t, f, 2); !slices.Equal(got, []string{"Bob"}) {
				t.Fatalf("key 2 (whose value says id 99) found %v, want Bob", got)
			}
			if got := names(t, f, 3); got != nil {
				t.Fatalf("missing key 3 found %v", got)
			}
			if got := names(t, f, 7); got != nil {
				t.Fatalf("key 7 found %v, the value of key '007'", got)
			}
			// Change the bucket: a new value, a new key, a deletion.
			put(t, kv, "1", `{"name": "Ann2"}`)
			put(t, kv, "3", `{"name": "Cid"}`)
			if err := kv.Delete(context.Background(), "2"); err != nil {
				t.Fatal(err)
			}
			if !c.fresh {
				if got := names(t, f, 1); !slices.Equal(got, []string{"Ann"}) {
					t.Fatalf("the unwatched cache found %v for key 1, want the cached Ann", got)
				}
				if got := names(t, f, 3); got != nil {
					t.Fatalf("the unwatched cache found %v for key 3, cached as missing", got)
				}
				return
			}
			eventually(t, "key 1 finds its new value", func() bool { return slices.Equal(names(t, f, 1), []string{"Ann2"}) })
			eventually(t, "new key 3 is found", func() bool { return slices.Equal(names(t, f, 3), []string{"Cid"}) })
			eventually(t, "deleted key 2 is not found", func() bool { return names(t, f, 2) == nil })
			// Once a change has been seen, the lookup never goes back to the
			// value it replaced.
			for i := 0; i < 50; i++ {
				if got := names(t, f, 1); !slices.Equal(got, []string{"Ann2"}) {
					t.Fatalf("key 1 found %v after it had found Ann2", got)
				}
			}
		})
	}
}

// TestBucketLookupKeys looks up STRING keys (one that no bucket can hold
// finds nothing) and joins on the key and another column.
func TestBucketLookupKeys(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	bucket, kv := freshBucket(t, js)
	put(t, kv, "eu.paris", `{"name": "Paris", "tier": "gold"}`)
	tb := &connector.Table{Name: "cities", PrimaryKey: []int{0}, Schema: types.MustRowType(
		types.F("code", mustType(t, "STRING NOT NULL")), types.F("name", mustType(t, "STRING")), types.F("tier", mustType(t, "STRING")))}
	for _, cache := range []string{"NONE", "FULL"} {
		opts := map[string]string{"url": url, "bucket": bucket, "format": "json", "lookup.cache": cache}
		look := func(f connector.LookupFunc, vals ...string) int {
			var fs []types.Field
			for i := range vals {
				fs = append(fs, types.F(fmt.Sprintf("k%d", i), mustType(t, "STRING")))
			}
			w := types.NewRowWriter(types.MustRowType(fs...), types.NewArena(0))
			for i, v := range vals {
				w.SetString(i, v)
			}
			rows, err := f(context.Background(), w.Finish())
			if err != nil {
				t.Fatal(err)
			}
			return len(rows)
		}
		byKey := lookupOf(t, opts, tb, 0)
		for k, want := range map[string]int{"eu.paris": 1, "eu.lyon": 0, "eu paris": 0, "eu.*": 0, ".eu": 0} {
			if got := look(byKey, k); got != want {
				t.Errorf("%s: key %q found %d rows, want %d", cache, k, got, want)
			}
		}
		byBoth := lookupOf(t, opts, tb, 2, 0)
		if got := look(byBoth, "gold", "eu.paris"); got != 1 {
			t.Errorf("%s: (gold, eu.paris) found %d rows, want 1", cache, got)
		}
		if got := look(byBoth, "silver", "eu.paris"); got != 0 {
			t.Errorf("%s: (silver, eu.paris) found %d rows, want 0", cache, got)
		}
	}
	src := openTable(t, map[string]string{"url": url, "bucket": bucket, "format": "json"}, tb)
	ls, _ := connector.TableLookup(src)
	if _, err := ls.NewLookup([]int{1}); err == nil || !strings.Contains(err.Error(), "looked up by its key, column code") {
		t.Fatalf("a lookup by name only: %v, want an error naming the key column", err)
	}
}

// TestBucketLookupFailures: a missing bucket fails the lookup's creation,
// a value the format cannot decode fails the lookup naming the key.
func TestBucketLookupFailures(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	src := openTable(t, map[string]string{"url": url, "bucket": "NOPE", "format": "json"}, customers(t))
	ls, _ := connector.TableLookup(src)
	if _, err := ls.NewLookup([]int{0}); err == nil || !strings.Contains(err.Error(), `bucket "NOPE" does not exist`) {
		t.Fatalf("a lookup of a missing bucket: %v", err)
	}
	bucket, kv := freshBucket(t, js)
	put(t, kv, "5", `{not json`)
	for _, cache := range []string{"NONE", "FULL"} {
		f := lookupOf(t, map[string]string{"url": url, "bucket": bucket, "format": "json", "lookup.cache": cache}, customers(t))
		kt := types.MustRowType(types.F("id", mustType(t, "BIGINT")))
		w := types.NewRowWriter(kt, types.NewArena(0))
		w.SetInt64(0, 5)
		if _, err := f(context.Background(), w.Finish()); err == nil || !strings.Contains(err.Error(), `key "5"`) || !strings.Contains(err.Error(), bucket) {
			t.Fatalf("%s: looking up a malformed value: %v, want an error naming the key and bucket", cache, err)
		}
	}
}

// TestBucketLookupJoinSQL joins a stream of orders with a bucket of
// customers at processing time, INNER and LEFT, with each cache.
func TestBucketLookupJoinSQL(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	bucket, kv := freshBucket(t, js)
	put(t, kv, "1", `{"name": "Ann", "tier": "gold"}`)
	put(t, kv, "2", `{"name": "Bob", "tier": "silver"}`)
	put(t, kv, "4", `{"name": "Dan", "tier": "gold"}`)
	name, prefix := freshStream(t, js)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	for i := 0; i < 60; i++ {
		b := fmt.Sprintf(`{"id": %d, "customer": %d}`, i, i%6)
		if i == 59 {
			b = `{"id": 59, "customer": null}`
		}
		if _, err := js.Publish(ctx, prefix+".o", []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	known := map[int]string{1: "Ann", 2: "Bob", 4: "Dan"}
	for _, cache := range []string{"NONE", "PARTIAL", "FULL"} {
		t.Run(cache, func(t *testing.T) {
			inner, _ := freshStream(t, js)
			left, _ := freshStream(t, js)
			extra := ""
			if cache == "PARTIAL" {
				extra = ", 'lookup.partial-cache.max-rows' = '2'"
			}
			script := fmt.Sprintf(`
CREATE TABLE orders (id BIGINT, customer BIGINT, p AS PROCTIME()) WITH (
  'connector' = 'nats', 'url' = '%[1]s', 'stream' = '%[2]s', 'format' = 'json', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE customers (id BIGINT, name STRING, tier STRING, PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = 'nats', 'url' = '%[1]s', 'bucket' = '%[3]s', 'format' = 'json', 'lookup.cache' = '%[4]s'%[5]s);
CREATE TABLE joined (id BIGINT, name STRING) WITH (
  'connector' = 'nats', 'url' = '%[1]s', 'stream' = '%[6]s', 'subject' = '%[7]s.out', 'format' = 'json');
CREATE TABLE joined_left (id BIGINT, name STRING) WITH (
  'connector' = 'nats', 'url' = '%[1]s', 'stream' = '%[8]s', 'subject' = '%[9]s.out', 'format' = 'json');
INSERT INTO joined SELECT o.id, c.name FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.p AS c ON o.customer = c.id;
INSERT INTO joined_left SELECT o.id, c.name FROM orders AS o LEFT JOIN customers FOR SYSTEM_TIME AS OF o.p AS c ON o.customer = c.id;
`, url, name, bucket, cache, extra, inner, strings.ToLower(inner), left, strings.ToLower(left))
			s := sql.NewSession(sql.WithParallelism(2))
			if _, err := s.Execute(script); err != nil {
				t.Fatal(err)
			}
			env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
			if err := s.Build(env); err != nil {
				t.Fatal(err)
			}
			if err := env.Execute(ctx, "lookup join"); err != nil {
				t.Fatal(err)
			}
			var wantInner, wantLeft []string
			for i := 0; i < 60; i++ {
				n, ok := known[i%6]
				switch {
				case i == 59:
					wantLeft = append(wantLeft, "59 <nil>")
				case ok:
					wantInner = append(wantInner, fmt.Sprintf("%d %s", i, n))
					wantLeft = append(wantLeft, fmt.Sprintf("%d %s", i, n))
				default:
					wantLeft = append(wantLeft, fmt.Sprintf("%d <nil>", i))
				}
			}
			read := func(stream string) []string {
				var out []string
				for _, b := range readStream(t, js, stream) {
					var r struct {
						ID   int64
						Name *string
					}
					if err := json.Unmarshal(b, &r); err != nil {
						t.Fatal(err)
					}
					if r.Name == nil {
						out = append(out, fmt.Sprintf("%d <nil>", r.ID))
					} else {
						out = append(out, fmt.Sprintf("%d %s", r.ID, *r.Name))
					}
				}
				slices.Sort(out)
				return out
			}
			slices.Sort(wantInner)
			slices.Sort(wantLeft)
			if got := read(inner); !slices.Equal(got, wantInner) {
				t.Errorf("the inner join wrote %v, want %v", got, wantInner)
			}
			if got := read(left); !slices.Equal(got, wantLeft) {
				t.Errorf("the left join wrote %v, want %v", got, wantLeft)
			}
		})
	}
}

// TestBucketSink writes upserts and deletions into a bucket: each key
// holds the value of its last change, deleted keys are gone.
func TestBucketSink(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	for _, g := range []string{"at-least-once", "none"} {
		t.Run(g, func(t *testing.T) {
			bucket, kv := freshBucket(t, js)
			tb := customers(t)
			sink, err := connector.OpenTableSink(connector.Default, "nats", map[string]string{"url": url, "bucket": bucket, "format": "json", "sink.delivery-guarantee": g}, tb)
			if err != nil {
				t.Fatal(err)
			}
			if m := sink.(interface{ ChangelogMode() changelog.Mode }).ChangelogMode(); m != changelog.Upsert {
				t.Fatalf("the bucket sink takes %v, want upserts", m)
			}
			w, err := sink.NewWriter(connectortest.WriterContext{Name: "nats out"})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			row := func(id int64, name string) types.Row {
				rw := types.NewRowWriter(tb.Schema, types.NewArena(0))
				rw.SetInt64(0, id)
				rw.SetString(1, name)
				return rw.Finish()
			}
			recs := []connector.TableRecord{
				{Kind: changelog.Insert, Row: row(1, "a")},
				{Kind: changelog.Insert, Row: row(2, "b")},
				{Kind: changelog.Insert, Row: row(3, "c")},
				{Kind: changelog.UpdateBefore, Row: row(1, "a")},
				{Kind: changelog.UpdateAfter, Row: row(1, "a2")},
				{Kind: changelog.Delete, Row: row(2, "b")},
				{Kind: changelog.UpdateAfter, Row: row(-4, "d")},
			}
			if err := w.Write(recs, nil); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"1": "a2", "3": "c", "-4": "d"}
			eventually(t, "the bucket holds the last values", func() bool {
				for k, n := range want {
					e, err := kv.Get(context.Background(), k)
					if err != nil {
						return false
					}
					var v struct {
						ID   int64
						Name string
					}
					if err := json.Unmarshal(e.Value(), &v); err != nil || v.Name != n || fmt.Sprint(v.ID) != k {
						return false
					}
				}
				_, err := kv.Get(context.Background(), "2")
				return errors.Is(err, jetstream.ErrKeyNotFound)
			})
			keys, err := kv.Keys(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(keys)
			if !slices.Equal(keys, []string{"-4", "1", "3"}) {
				t.Fatalf("the bucket holds keys %v, want -4, 1, 3", keys)
			}
		})
	}
}

// TestSQLIntoBucketAndBack aggregates a stream into a bucket (an upsert
// per customer) and looks the aggregates up from another job.
func TestSQLIntoBucketAndBack(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	bucket, kv := freshBucket(t, js)
	name, prefix := freshStream(t, js)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	for i := 0; i < 100; i++ {
		b := fmt.Sprintf(`{"customer": "c%d", "amount": %d}`, i%5, i)
		if _, err := js.Publish(ctx, prefix+".o", []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	script := fmt.Sprintf(`
CREATE TABLE orders (customer STRING, amount BIGINT) WITH (
  'connector' = 'nats', 'url' = '%[1]s', 'stream' = '%[2]s', 'format' = 'json', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE totals (customer STRING, total BIGINT, n BIGINT, PRIMARY KEY (customer) NOT ENFORCED) WITH (
  'connector' = 'nats', 'url' = '%[1]s', 'bucket' = '%[3]s', 'format' = 'json');
INSERT INTO totals SELECT customer, SUM(amount), COUNT(*) FROM orders GROUP BY customer;
`, url, name, bucket)
	s := sql.NewSession(sql.WithParallelism(2))
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	if err := env.Execute(ctx, "totals"); err != nil {
		t.Fatal(err)
	}
	for c := 0; c < 5; c++ {
		e, err := kv.Get(ctx, fmt.Sprintf("c%d", c))
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Customer string
			Total, N int64
		}
		if err := json.Unmarshal(e.Value(), &v); err != nil {
			t.Fatal(err)
		}
		want := int64(0)
		for i := c; i < 100; i += 5 {
			want += int64(i)
		}
		if v.Customer != fmt.Sprintf("c%d", c) || v.Total != want || v.N != 20 {
			t.Fatalf("key c%d holds %+v, want total %d of 20 orders", c, v, want)
		}
	}
}

// TestBucketOptionErrors refuses what a bucket table cannot be.
func TestBucketOptionErrors(t *testing.T) {
	for _, c := range []struct {
		sink    bool
		opts    map[string]string
		table   *connector.Table
		problem string
	}{
		{false, map[string]string{"bucket": "B", "stream": "S"}, nil, "option 'stream'"},
		{false, map[string]string{"bucket": "B", "lookup.cache": "PARTIAL"}, nil, "needs a bound"},
		{false, map[string]string{"bucket": "B", "lookup.partial-cache.max-rows": "5"}, nil, "'lookup.cache' is 'NONE'"},
		{false, map[string]string{"subject": "a", "lookup.cache": "FULL"}, nil, "set 'bucket'"},
		{false, map[string]string{"bucket": "a.b"}, nil, "letters, digits"},
		{true, map[string]string{"bucket": "B", "sink.delivery-guarantee": "exactly-once"}, nil, "'at-least-once'"},
		{true, map[string]string{"bucket": "B", "lookup.cache": "FULL"}, nil, "option of lookups"},
		{false, map[string]string{"bucket": "B"}, &connector.Table{Schema: types.MustRowType(types.F("id", types.BigInt()))}, "PRIMARY KEY of one column"},
		{false, map[string]string{"bucket": "B"}, &connector.Table{PrimaryKey: []int{0}, Schema: types.MustRowType(types.F("id", types.Double()))}, "declare it STRING, or an integer"},
		{false, map[string]string{"bucket": "B"}, &connector.Table{PrimaryKey: []int{0}, Schema: types.MustRowType(types.F("id", types.BigInt())),
			Metadata: []string{"subject"}, MetadataTypes: []types.Type{types.String()}}, "no metadata columns"},
		{false, map[string]string{"bucket": "B", "format": "debezium-json"}, nil, "is a changelog"},
	} {
		opts := map[string]string{"format": "json"}
		for k, v := range c.opts {
			opts[k] = v
		}
		tb := c.table
		if tb == nil {
			tb = customers(t)
		}
		var err error
		if c.sink {
			_, err = connector.OpenTableSink(connector.Default, "nats", opts, tb)
		} else {
			_, err = connector.OpenTableSource(connector.Default, "nats", opts, tb)
		}
		if err == nil || !strings.Contains(err.Error(), c.problem) {
			t.Errorf("%v: %v, want an error saying %q", c.opts, err, c.problem)
		}
	}
	// A bucket's table is looked up, not read whole.
	src := openTable(t, map[string]string{"bucket": "B", "format": "json"}, customers(t))
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	eddy.SinkTo(eddy.FromSource(env, "bucket", src, eddy.NoWatermarks[connector.TableRecord]()), func(connector.TableRecord) error { return nil })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := env.Execute(ctx, "scan"); err == nil || !strings.Contains(err.Error(), "'stream' = 'KV_B'") {
		t.Fatalf("reading a bucket's table whole: %v, want an error pointing at its stream", err)
	}
}
