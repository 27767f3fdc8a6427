package nats

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// TestLookupClosesWhenIdle: a lookup's connection, watcher and cache close
// once unused for lookupIdle (a lookup is not told when its job ends), and
// the next lookup opens them again.
func TestLookupClosesWhenIdle(t *testing.T) {
	old := lookupIdle
	lookupIdle = 50 * time.Millisecond
	defer func() { lookupIdle = old }()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	defer ns.Shutdown()
	nc, err := natsgo.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "IDLE"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.PutString(ctx, "1", `{"v": "one"}`); err != nil {
		t.Fatal(err)
	}
	tb := &connector.Table{Name: "t", PrimaryKey: []int{0}, Schema: types.MustRowType(types.F("k", types.BigInt()), types.F("v", types.String()))}
	src, err := connector.OpenTableSource(connector.Default, "nats", map[string]string{"url": ns.ClientURL(), "bucket": "IDLE", "format": "json", "lookup.cache": "FULL"}, tb)
	if err != nil {
		t.Fatal(err)
	}
	ls, _ := connector.TableLookup(src)
	l, err := ls.(*bucketSource).newLookup([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	key := types.NewRowWriter(types.MustRowType(types.F("k", types.BigInt())), types.NewArena(0))
	key.SetInt64(0, 1)
	k := key.Finish()
	look := func() string {
		rows, err := l.lookup(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 {
			t.Fatalf("found %d rows", len(rows))
		}
		return rows[0].String(1)
	}
	if v := look(); v != "one" {
		t.Fatalf("found %q", v)
	}
	first := l.cur.Load()
	deadline := time.Now().Add(30 * time.Second)
	for !first.closed.Load() || !first.nc.IsClosed() {
		if time.Now().After(deadline) {
			t.Fatal("the idle lookup's connection is still open after 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := kv.PutString(ctx, "1", `{"v": "uno"}`); err != nil {
		t.Fatal(err)
	}
	if v := look(); v != "uno" {
		t.Fatalf("the lookup opened again found %q, want uno", v)
	}
	if l.cur.Load() == first {
		t.Fatal("the lookup did not open a new connection")
	}
}
