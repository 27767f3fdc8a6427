package redis_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	_ "github.com/eddystream/eddy/connectors/redis"
)

// serverAddr is the Redis server the tests use.
const serverAddr = "127.0.0.1:6379"

const serverURL = "redis://" + serverAddr + "/0"

type line struct {
	Part int   `json:"part"`
	N    int64 `json:"n"`
}

// server returns a client of the test server, skipping the test when there
// is none (failing it under CI=true).
func server(t testing.TB) *goredis.Client {
	t.Helper()
	cli := goredis.NewClient(&goredis.Options{Addr: serverAddr, DisableIdentity: true})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := cli.Ping(ctx).Err(); err != nil {
		cli.Close()
		if os.Getenv("CI") == "true" {
			t.Fatalf("no Redis server at %s (CI=true requires one): %v", serverAddr, err)
		}
		t.Skipf("no Redis server at %s: %v", serverAddr, err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func random() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

// freshStream returns the key of a stream no other test uses, deleted
// with the sink's marker keys when the test ends.
func freshStream(t testing.TB, cli *goredis.Client) string {
	t.Helper()
	name := strings.NewReplacer("/", ".", " ", "_").Replace(t.Name())
	key := fmt.Sprintf("eddy-test:%s:%s", name, random())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cli.Del(ctx, key)
		var cursor uint64
		for {
			keys, next, err := cli.Scan(ctx, cursor, "eddy:txn:"+key+":*", 1000).Result()
			if err != nil {
				return
			}
			if len(keys) > 0 {
				cli.Del(ctx, keys...)
			}
			if cursor = next; cursor == 0 {
				return
			}
		}
	})
	return key
}

// addLines adds lines [from, to) to the stream, line n of part n mod
// parts, as JSON in the field "data".
func addLines(t testing.TB, cli *goredis.Client, stream string, from, to, parts int) []line {
	t.Helper()
	var out []line
	ctx := context.Background()
	for lo := from; lo < to; lo += 1000 {
		p := cli.Pipeline()
		for n := lo; n < min(lo+1000, to); n++ {
			l := line{Part: n % parts, N: int64(n)}
			b, _ := json.Marshal(l)
			p.XAdd(ctx, &goredis.XAddArgs{Stream: stream, Values: []any{"data", b}})
			out = append(out, l)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// readEntries returns the "data" field of every entry of a stream, in
// order.
func readEntries(t testing.TB, cli *goredis.Client, stream string) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	start := "-"
	for {
		msgs, err := cli.XRangeN(ctx, stream, start, "+", 5000).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			s, _ := m.Values["data"].(string)
			out = append(out, s)
		}
		if len(msgs) < 5000 {
			return out
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
}

func readLines(t testing.TB, cli *goredis.Client, stream string) []line {
	t.Helper()
	var out []line
	for _, s := range readEntries(t, cli, stream) {
		var l line
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			t.Fatalf("stream %s holds %q: %v", stream, s, err)
		}
		out = append(out, l)
	}
	return out
}

func openSource(t testing.TB, opts map[string]string) connector.Source[line] {
	t.Helper()
	if _, ok := opts["url"]; !ok {
		opts["url"] = serverURL
	}
	src, err := connector.OpenSource[line](connector.Default, "redis", opts)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func openSink(t testing.TB, opts map[string]string) connector.Sink[line] {
	t.Helper()
	if _, ok := opts["url"]; !ok {
		opts["url"] = serverURL
	}
	sink, err := connector.OpenSink[line](connector.Default, "redis", opts)
	if err != nil {
		t.Fatal(err)
	}
	return sink
}

func linesUpTo(n, parts int) []line {
	var out []line
	for i := 0; i < n; i++ {
		out = append(out, line{Part: i % parts, N: int64(i)})
	}
	return out
}

func TestOptionsConformance(t *testing.T) {
	connectortest.RunOptions[line](t, connectortest.OptionsCase{
		Name:  "redis",
		Valid: map[string]string{"stream": "orders", "format": "json", "password": "pw"},
	})
}

func TestOptionErrors(t *testing.T) {
	for _, c := range []struct {
		sink    bool
		opts    map[string]string
		key     string
		problem string
	}{
		{false, map[string]string{"format": "json"}, "stream", "required"},
		{false, map[string]string{"format": "json", "stream": "s", "scan.startup.mode": "group-offsets"}, "scan.startup.mode", "needs a consumer 'group'"},
		{false, map[string]string{"format": "json", "stream": "s", "group": "g", "scan.bounded.mode": "latest-offset"}, "scan.bounded.mode", "without a consumer group"},
		{false, map[string]string{"format": "json", "stream": "s", "scan.startup.mode": "timestamp"}, "scan.startup.timestamp-millis", "is required"},
		{false, map[string]string{"format": "json", "stream": "s", "scan.startup.specific-offset": "3-0"}, "scan.startup.specific-offset", "is not 'specific-offset'"},
		{false, map[string]string{"format": "json", "stream": "s", "scan.startup.mode": "specific-offset", "scan.startup.specific-offset": "3-x"}, "scan.startup.specific-offset", "not a stream entry id"},
		{false, map[string]string{"format": "json", "stream": "s", "group.consumer-prefix": "p"}, "group.consumer-prefix", "set 'group'"},
		{false, map[string]string{"format": "json", "stream": "s", "sink.max-len": "10"}, "sink.max-len", "option of sinks"},
		{true, map[string]string{"format": "json", "stream": "s", "group": "g"}, "group", "option of sources"},
		{true, map[string]string{"format": "json", "stream": "s", "url": "http://x:1"}, "url", "scheme"},
		{true, map[string]string{"format": "json", "stream": "s", "url": "redis://u:secret-pw@host:6379/x"}, "url", "database"},
		{true, map[string]string{"format": "json", "stream": "s", "url": "redis://u:secret-pw@ho st:6379/0"}, "url", "not a URL"},
		{true, map[string]string{"format": "json", "stream": "s", "sink.transaction.marker-ttl": "0 s"}, "sink.transaction.marker-ttl", "at least 1 ms"},
	} {
		var err error
		if c.sink {
			_, err = connector.OpenSink[line](connector.Default, "redis", c.opts)
		} else {
			_, err = connector.OpenSource[line](connector.Default, "redis", c.opts)
		}
		var oe *connector.OptionError
		if !errors.As(err, &oe) || oe.Key != c.key || !strings.Contains(err.Error(), c.problem) {
			t.Errorf("%v: got %v, want an error of option '%s' saying %q", c.opts, err, c.key, c.problem)
		}
		if err != nil && strings.Contains(err.Error(), "secret-pw") {
			t.Errorf("%v: the error shows the password: %v", c.opts, err)
		}
	}
}

// TestUnreachableServer names the server without its password and says
// what to check.
func TestUnreachableServer(t *testing.T) {
	src := openSource(t, map[string]string{"url": "redis://me:secret-pw@127.0.0.1:1/0", "stream": "s", "format": "json", "group": "g"})
	_, err := src.NewEnumerator(enumCtx{}, nil)
	if err == nil || !strings.Contains(err.Error(), "redis://127.0.0.1:1/0") || !strings.Contains(err.Error(), "check 'url'") {
		t.Fatalf("got %v, want an error naming redis://127.0.0.1:1/0 and 'url'", err)
	}
	if strings.Contains(err.Error(), "secret-pw") {
		t.Fatalf("the error shows the password: %v", err)
	}
}

// enumCtx is an EnumeratorContext for calling NewEnumerator directly.
type enumCtx struct{}

func (enumCtx) SourceName() string                                    { return "redis in" }
func (enumCtx) Parallelism() int                                      { return 1 }
func (enumCtx) AssignSplits(int, ...connector.Split)                  {}
func (enumCtx) SignalNoMoreSplits(int)                                {}
func (enumCtx) SendEvent(int, []byte)                                 {}
func (enumCtx) CallAsync(func() (any, error), func(any, error) error) {}
func (enumCtx) Every(time.Duration, func() error)                     {}
func (enumCtx) Log() *slog.Logger                                     { return slog.New(slog.DiscardHandler) }
func (enumCtx) Checkpointing() bool                                   { return true }
