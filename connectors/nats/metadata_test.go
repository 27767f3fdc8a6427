package nats_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	natsgo "github.com/nats-io/nats.go"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/sql/types"
)

func mustType(t testing.TB, s string) types.Type {
	t.Helper()
	ty, err := types.ParseType(s)
	if err != nil {
		t.Fatal(err)
	}
	return ty
}

// lineTable is the table of line records with the given metadata
// columns, each "key TYPE".
func lineTable(t testing.TB, meta ...string) *connector.Table {
	t.Helper()
	tb := &connector.Table{Name: "lines", Schema: types.MustRowType(types.F("part", mustType(t, "INT")), types.F("n", mustType(t, "BIGINT")))}
	for _, m := range meta {
		k, ty, _ := strings.Cut(m, " ")
		tb.Metadata = append(tb.Metadata, k)
		tb.MetadataTypes = append(tb.MetadataTypes, mustType(t, ty))
	}
	return tb
}

func openTable(t testing.TB, opts map[string]string, tb *connector.Table) connector.Source[connector.TableRecord] {
	t.Helper()
	src, err := connector.OpenTableSource(connector.Default, "nats", opts, tb)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// readRows reads a bounded table source at parallelism 1 and returns its
// rows, each rendered with types.RowValues, sorted.
func readRows(t testing.TB, src connector.Source[connector.TableRecord], rt *types.RowType) []string {
	t.Helper()
	mem := connectortest.NewMemorySink[connector.TableRecord]()
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	eddy.WriteTo(eddy.FromSource(env, "nats table", src, eddy.NoWatermarks[connector.TableRecord]()), "memory", mem.Sink())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := env.Execute(ctx, "read rows"); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range mem.Committed() {
		out = append(out, fmt.Sprint(types.RowValues(rt, r.Row)))
	}
	slices.Sort(out)
	return out
}

// TestMetadataColumns reads a stream's messages with every metadata
// column: the subject, the stream sequence, the time the stream stored the
// message and its headers (the first value of each).
func TestMetadataColumns(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	createStream(t, js, "META", "meta.>")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stored []time.Time
	for i, subj := range []string{"meta.a", "meta.b.c", "meta.a"} {
		m := natsgo.NewMsg(subj)
		m.Data = []byte(fmt.Sprintf(`{"part": %d, "n": %d}`, i%2, i))
		if i != 1 {
			m.Header.Add("trace", fmt.Sprintf("t%d", i))
			m.Header.Add("trace", "second")
			m.Header.Set("origin", "test")
		}
		ack, err := js.PublishMsg(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		st, err := js.Stream(ctx, "META")
		if err != nil {
			t.Fatal(err)
		}
		raw, err := st.GetMsg(ctx, ack.Sequence)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, raw.Time)
	}
	tb := lineTable(t, "subject STRING", "stream-sequence BIGINT", "timestamp TIMESTAMP_LTZ(3)", "headers MAP<STRING, STRING>")
	got := readRows(t, openTable(t, map[string]string{"url": url, "stream": "META", "format": "json", "scan.bounded.mode": "latest-offset"}, tb), tb.RowType())
	rt := tb.RowType()
	var want []string
	for i, subj := range []string{"meta.a", "meta.b.c", "meta.a"} {
		w := types.NewRowWriter(rt, types.NewArena(0))
		w.SetInt64(0, int64(i%2))
		w.SetInt64(1, int64(i))
		w.SetString(2, subj)
		w.SetInt64(3, int64(i+1))
		w.SetTimestampMillis(4, stored[i].UnixMilli())
		mw := types.NewMapWriter(tb.MetadataTypes[3])
		if i != 1 {
			mw.Keys().AppendString("origin")
			mw.Values().AppendString("test")
			mw.Keys().AppendString("trace")
			mw.Values().AppendString(fmt.Sprintf("t%d", i))
		}
		w.SetMapFrom(5, mw)
		want = append(want, fmt.Sprint(types.RowValues(rt, w.Finish())))
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("read\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCoreMetadata reads core NATS messages with their subject, arrival
// time and headers.
func TestCoreMetadata(t *testing.T) {
	url := startServer(t)
	nc, _ := connect(t, url)
	tb := lineTable(t, "subject STRING", "timestamp TIMESTAMP_LTZ(3)", "headers MAP<STRING, STRING>")
	src := openTable(t, map[string]string{"url": url, "subject": "core.*", "format": "json"}, tb)
	mem := connectortest.NewMemorySink[connector.TableRecord]()
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(10*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	eddy.WriteTo(eddy.FromSource(env, "core", src, eddy.NoWatermarks[connector.TableRecord]()), "memory", mem.Sink())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "core metadata") }()
	before := time.Now().UnixMilli()
	for len(mem.Committed()) == 0 {
		select {
		case err := <-done:
			t.Fatalf("the job ended: %v", err)
		default:
		}
		m := natsgo.NewMsg("core.x")
		m.Data = []byte(`{"part": 1, "n": 7}`)
		m.Header.Set("k", "v")
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	rt := tb.RowType()
	r := mem.Committed()[0].Row
	vs := types.RowValues(rt, r)
	if vs[2] != "core.x" {
		t.Fatalf("subject %v, want core.x", vs[2])
	}
	if ms := r.TimestampMillis(3); ms < before || ms > time.Now().UnixMilli() {
		t.Fatalf("timestamp %v is not the time the message arrived (after %d)", vs[3], before)
	}
	if h := fmt.Sprint(vs[4]); !strings.Contains(h, "k") || !strings.Contains(h, "v") {
		t.Fatalf("headers %s, want k: v", h)
	}
}

// TestMetadataErrors refuses metadata columns the source does not offer,
// or of the wrong type.
func TestMetadataErrors(t *testing.T) {
	for _, c := range []struct {
		opts map[string]string
		meta string
		want string
	}{
		{map[string]string{"stream": "S"}, "offset BIGINT", "offers no metadata \"offset\""},
		{map[string]string{"stream": "S"}, "stream-sequence STRING", "declare it as BIGINT"},
		{map[string]string{"stream": "S"}, "headers MAP<STRING, INT>", "MAP<STRING, STRING>"},
		{map[string]string{"stream": "S"}, "timestamp TIMESTAMP_LTZ(6)", "TIMESTAMP_LTZ(3)"},
		{map[string]string{"subject": "a"}, "stream-sequence BIGINT", "needs a JetStream 'stream'"},
	} {
		opts := map[string]string{"format": "json"}
		for k, v := range c.opts {
			opts[k] = v
		}
		_, err := connector.OpenTableSource(connector.Default, "nats", opts, lineTable(t, c.meta))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.meta, err, c.want)
		}
	}
}
