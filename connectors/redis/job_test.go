package redis_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/sql"
)

// TestMalformedEntries reads a stream with an entry that is not JSON and
// one without the record's field: the job fails naming the first, or,
// with dead letters, sets both aside and goes on, with and without a
// group.
func TestMalformedEntries(t *testing.T) {
	cli := server(t)
	ctx := context.Background()
	stream := freshStream(t, cli)
	addLines(t, cli, stream, 0, 10, 1)
	bad, err := cli.XAdd(ctx, &goredis.XAddArgs{Stream: stream, Values: []any{"data", "{not json"}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	other, err := cli.XAdd(ctx, &goredis.XAddArgs{Stream: stream, Values: []any{"payload", `{"part": 0, "n": 99}`}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	addLines(t, cli, stream, 10, 20, 1)
	read := func(deadLetters bool, group string) ([]line, []connector.DeadLetter, error) {
		opts := map[string]string{"stream": stream, "format": "json", "scan.bounded.mode": "latest-offset"}
		if group != "" {
			opts = map[string]string{"stream": stream, "format": "json", "group": group}
		}
		mem := connectortest.NewMemorySink[line]()
		dead := connectortest.NewMemorySink[connector.DeadLetter]()
		env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()), eddy.WithRestartStrategy(eddy.NoRestart()))
		var sopts []eddy.SourceOption
		if deadLetters {
			sopts = append(sopts, eddy.OnBadRecord(eddy.DeadLetterBadRecords))
		}
		s := eddy.FromSource(env, "bad", openSource(t, opts), eddy.NoWatermarks[line](), sopts...)
		eddy.WriteTo(s, "memory", mem.Sink())
		if deadLetters {
			eddy.WriteTo(eddy.DeadLetters(s), "dead letters", dead.Sink())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- env.Execute(ctx, "bad") }()
		if group != "" && deadLetters {
			if err := mem.WaitFor(ctx, 20); err != nil {
				t.Fatal(err)
			}
			for len(dead.Committed()) < 2 && ctx.Err() == nil {
				time.Sleep(5 * time.Millisecond)
			}
			cancel()
			<-done
			return mem.Committed(), dead.Committed(), nil
		}
		err := <-done
		return mem.Committed(), dead.Committed(), err
	}
	for _, group := range []string{"", "g-" + random()} {
		if _, _, err := read(false, group); err == nil || !strings.Contains(err.Error(), "entry "+bad) || !strings.Contains(err.Error(), "stream "+stream) {
			t.Fatalf("group %q: reading a malformed entry: %v, want an error naming stream %s entry %s", group, err, stream, bad)
		}
		if group != "" {
			group = "g-" + random()
		}
		got, dead, err := read(true, group)
		if err != nil {
			t.Fatal(err)
		}
		checkOnce(t, got, numbers(0, 20))
		if len(dead) != 2 || dead[0].Raw != "{not json" || !strings.Contains(dead[0].Location, bad) ||
			!strings.Contains(dead[1].Location, other) || !strings.Contains(dead[1].Error, `no field "data"`) || !strings.Contains(dead[1].Error, `"payload"`) {
			t.Fatalf("group %q: dead letters: %+v, want the entry that is not JSON and the one without field data", group, dead)
		}
		if group != "" {
			if n := pendingCount(t, cli, stream, group); n > 2 {
				t.Fatalf("%d entries stay pending; dead letters are acknowledged as the others are", n)
			}
		}
	}
}

// TestSQLStreamToStream runs INSERT INTO a stream SELECT from another,
// with the entry id, timestamp and stream as metadata columns.
func TestSQLStreamToStream(t *testing.T) {
	cli := server(t)
	ctx := context.Background()
	orders, big := freshStream(t, cli), freshStream(t, cli)
	ids := map[int]string{}
	for i := 0; i < 500; i++ {
		id, err := cli.XAdd(ctx, &goredis.XAddArgs{Stream: orders, Values: []any{"order", fmt.Sprintf(`{"id": %d, "customer": "c%d", "amount": %d}`, i, i%7, i)}}).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	s := sql.NewSession(sql.WithParallelism(2))
	script := fmt.Sprintf(`
CREATE TABLE orders (
  id BIGINT, customer STRING, amount BIGINT,
  entry STRING METADATA FROM 'entry-id' VIRTUAL, added TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,
  src STRING METADATA FROM 'stream' VIRTUAL,
  WATERMARK FOR added AS added - INTERVAL '5' SECOND
) WITH (
  'connector' = 'redis', 'url' = '%[1]s', 'stream' = '%[2]s', 'value.field' = 'order',
  'format' = 'json', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE big_orders (id BIGINT, customer STRING, doubled BIGINT, entry STRING, added BIGINT, src STRING) WITH (
  'connector' = 'redis', 'url' = '%[1]s', 'stream' = '%[3]s', 'format' = 'json');
INSERT INTO big_orders
SELECT id, UPPER(customer), amount * 2, entry, EXTRACT(EPOCH FROM added) * 1000 + EXTRACT(MILLISECOND FROM added) %% 1000, src
FROM orders WHERE amount >= 100;
`, serverURL, orders, big)
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	jctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := env.Execute(jctx, "orders"); err != nil {
		t.Fatal(err)
	}
	type out struct {
		ID       int64  `json:"id"`
		Customer string `json:"customer"`
		Doubled  int64  `json:"doubled"`
		Entry    string `json:"entry"`
		Added    int64  `json:"added"`
		Src      string `json:"src"`
	}
	var got, want []string
	for _, b := range readEntries(t, cli, big) {
		var o out
		if err := json.Unmarshal([]byte(b), &o); err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		ms, _, _ := strings.Cut(o.Entry, "-")
		got = append(got, fmt.Sprintf("%d %s %d %s %v %s", o.ID, o.Customer, o.Doubled, o.Entry, fmt.Sprint(o.Added) == ms, o.Src))
	}
	for i := 100; i < 500; i++ {
		want = append(want, fmt.Sprintf("%d C%d %d %s true %s", i, i%7, 2*i, ids[i], orders))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("stream %s holds %d entries, want %d; first: %v, want %v", big, len(got), len(want), got[:min(3, len(got))], want[:3])
	}
}

// TestExactlyOnceAcrossFailures copies a stream into another through a map
// that panics three times, reading with and without a group; the output
// stream holds each record once, as a run without failures does.
func TestExactlyOnceAcrossFailures(t *testing.T) {
	const n = 20000
	cli := server(t)
	in := freshStream(t, cli)
	addLines(t, cli, in, 0, n, 4)
	for _, group := range []bool{false, true} {
		t.Run(fmt.Sprintf("group=%v", group), func(t *testing.T) {
			run := func(panicAt map[int64]bool) (string, int) {
				out := freshStream(t, cli)
				env := eddy.NewEnvironment(eddy.WithParallelism(2),
					eddy.WithCheckpointing(10*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()),
					eddy.WithRestartStrategy(eddy.FixedDelayRestart(10, 5*time.Millisecond)))
				var mu sync.Mutex
				opts := map[string]string{"stream": in, "format": "json", "scan.bounded.mode": "latest-offset", "scan.fetch-size": "300"}
				if group {
					opts = map[string]string{"stream": in, "format": "json", "group": "g-" + random(), "scan.fetch-size": "300"}
				}
				s := eddy.FromSource(env, "redis in", openSource(t, opts), eddy.NoWatermarks[line]())
				s = eddy.Map(s, func(l line) line {
					mu.Lock()
					boom := panicAt[l.N]
					delete(panicAt, l.N)
					mu.Unlock()
					if boom {
						panic(fmt.Sprintf("injected failure at record %d", l.N))
					}
					return line{Part: l.Part, N: l.N * 10}
				})
				eddy.WriteTo(s, "redis out", openSink(t, map[string]string{"stream": out, "format": "json"}))
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				if !group {
					if err := env.Execute(ctx, "copy"); err != nil {
						t.Fatal(err)
					}
					return out, env.Restarts()
				}
				// A group is read until the job is cancelled: wait for the
				// output, and a little longer for duplicates to show.
				done := make(chan error, 1)
				go func() { done <- env.Execute(ctx, "copy") }()
				for {
					l, err := cli.XLen(ctx, out).Result()
					if err != nil && err != goredis.Nil {
						t.Fatal(err)
					}
					if l >= n {
						break
					}
					select {
					case err := <-done:
						t.Fatalf("the job ended: %v", err)
					case <-time.After(20 * time.Millisecond):
					}
				}
				time.Sleep(300 * time.Millisecond)
				cancel()
				<-done
				return out, env.Restarts()
			}
			render := func(ls []line) []string {
				out := make([]string, len(ls))
				for i, l := range ls {
					out[i] = fmt.Sprintf("%d/%d", l.Part, l.N)
				}
				slices.Sort(out)
				return out
			}
			clean, r := run(nil)
			if r != 0 {
				t.Fatalf("the failure-free run restarted %d times", r)
			}
			want := render(readLines(t, cli, clean))
			if len(want) != n {
				t.Fatalf("the failure-free run wrote %d records, want %d", len(want), n)
			}
			failAt := map[int64]bool{3000: true, 9001: true, 15002: true}
			failing, r := run(failAt)
			if r < 2 || r > 3 || len(failAt) != 0 {
				t.Fatalf("the job restarted %d times and %d injected failures never struck; want 2 or 3 restarts and none left", r, len(failAt))
			}
			got := render(readLines(t, cli, failing))
			if !slices.Equal(got, want) {
				seen := map[string]int{}
				var dups []string
				for _, k := range got {
					if seen[k]++; seen[k] == 2 {
						dups = append(dups, k)
					}
				}
				t.Fatalf("the output stream holds %d records (duplicates: %d, e.g. %v), want the failure-free run's %d", len(got), len(dups), dups[:min(5, len(dups))], len(want))
			}
		})
	}
}

// TestReadAnotherType fails a job reading a key that is not a stream,
// naming it, with and without a group.
func TestReadAnotherType(t *testing.T) {
	cli := server(t)
	key := freshStream(t, cli)
	if err := cli.Set(context.Background(), key, "a string", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []map[string]string{
		{"stream": key, "format": "json"},
		{"stream": key, "format": "json", "scan.bounded.mode": "latest-offset"},
		{"stream": key, "format": "json", "group": "g"},
	} {
		env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithRestartStrategy(eddy.NoRestart()))
		eddy.WriteTo(eddy.FromSource(env, "redis in", openSource(t, opts), eddy.NoWatermarks[line]()), "memory", connectortest.NewMemorySink[line]().Sink())
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := env.Execute(ctx, "wrong type")
		cancel()
		if err == nil || !strings.Contains(err.Error(), "WRONGTYPE") || !strings.Contains(err.Error(), key) {
			t.Errorf("%v: reading a string key: %v, want a WRONGTYPE error naming %s", opts, err, key)
		}
	}
}
