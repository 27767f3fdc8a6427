package print_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/connectors/print"
)

type order struct {
	ID       int64
	Customer string
	Amount   float64
	secret   int
}

func TestRow(t *testing.T) {
	ts := time.Date(2024, 5, 1, 12, 30, 0, 0, time.UTC)
	name := "Bob"
	for _, c := range []struct {
		v    any
		want string
	}{
		{order{ID: 1, Customer: "Alice", Amount: 9.5, secret: 3}, "+I[1, Alice, 9.5]"},
		{&order{ID: 2, Customer: "Bob"}, "+I[2, Bob, 0]"},
		{changelog.Of(changelog.UpdateBefore, order{ID: 3, Customer: "Carol", Amount: 1}), "-U[3, Carol, 1]"},
		{changelog.Of(changelog.Delete, 42), "-D[42]"},
		{changelog.InsertOf("x"), "+I[x]"},
		{17, "+I[17]"},
		{"hello, world", "+I[hello, world]"},
		{ts, "+I[2024-05-01T12:30:00Z]"},
		{struct {
			At   time.Time
			Name *string
			Nick *string
		}{ts, &name, nil}, "+I[2024-05-01T12:30:00Z, Bob, null]"},
		{nil, "+I[null]"},
	} {
		if got := print.Row(c.v); got != c.want {
			t.Errorf("Row(%#v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestPrefix(t *testing.T) {
	for _, c := range []struct {
		id     string
		sub, p int
		want   string
	}{
		{"", 0, 1, ""}, {"", 1, 3, "2> "}, {"orders", 0, 1, "orders> "}, {"orders", 2, 4, "orders:3> "},
	} {
		if got := print.Prefix(c.id, c.sub, c.p); got != c.want {
			t.Errorf("Prefix(%q, %d, %d) = %q, want %q", c.id, c.sub, c.p, got, c.want)
		}
	}
}

// lockedBuffer is a buffer safe for the writes of several subtasks and the
// reads of the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := strings.TrimSuffix(b.buf.String(), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func TestPrintsWithSubtaskPrefixes(t *testing.T) {
	var buf lockedBuffer
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	in := []order{{1, "a", 1, 0}, {2, "b", 2, 0}, {3, "c", 3, 0}, {4, "d", 4, 0}}
	eddy.WriteTo(eddy.FromSlice(env, in, eddy.NoWatermarks[order]()), "print", print.NewSink[order](print.Options{Identifier: "orders", Writer: &buf}))
	if err := env.Execute(context.Background(), "print"); err != nil {
		t.Fatal(err)
	}
	got := buf.lines()
	sort.Strings(got)
	want := []string{"orders:1> +I[1, a, 1]", "orders:1> +I[2, b, 2]", "orders:2> +I[3, c, 3]", "orders:2> +I[4, d, 4]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("printed %q, want %q", got, want)
	}
}

func TestPrintsChanges(t *testing.T) {
	var buf lockedBuffer
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	in := []changelog.Change[order]{
		changelog.InsertOf(order{ID: 1, Customer: "a"}),
		changelog.Of(changelog.UpdateBefore, order{ID: 1, Customer: "a"}),
		changelog.Of(changelog.UpdateAfter, order{ID: 1, Customer: "b"}),
		changelog.Of(changelog.Delete, order{ID: 1, Customer: "b"}),
	}
	eddy.WriteTo(eddy.FromSlice(env, in, eddy.NoWatermarks[changelog.Change[order]]()), "print", print.NewSink[changelog.Change[order]](print.Options{Writer: &buf}))
	if err := env.Execute(context.Background(), "print changes"); err != nil {
		t.Fatal(err)
	}
	want := []string{"+I[1, a, 0]", "-U[1, a, 0]", "+U[1, b, 0]", "-D[1, b, 0]"}
	if got := buf.lines(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("printed %q, want %q", got, want)
	}
}

// TestRegisteredToStandardError writes through the registry with Flink's
// options, to a file standing in for standard error.
func TestRegisteredToStandardError(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stderr := os.Stderr
	os.Stderr = f
	defer func() { os.Stderr = stderr }()
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	eddy.WriteToConnector(eddy.FromSlice(env, []order{{7, "z", 1.25, 0}}, eddy.NoWatermarks[order]()), "print",
		map[string]string{"print-identifier": "dbg", "standard-error": "true"})
	if err := env.Execute(context.Background(), "print to stderr"); err != nil {
		t.Fatal(err)
	}
	os.Stderr = stderr
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "dbg> +I[7, z, 1.25]\n") {
		t.Fatalf("standard error holds %q; want the line dbg> +I[7, z, 1.25]", b)
	}
}

type kv struct {
	K string
	V int
}

// parseLine reads back a line printed from a kv: "2> +I[a, 3]".
func parseLine(t testing.TB, l string) kv {
	if _, rest, ok := strings.Cut(l, "> "); ok {
		l = rest
	}
	var v kv
	body, ok := strings.CutPrefix(l, "+I[")
	if !ok || !strings.HasSuffix(body, "]") {
		t.Fatalf("printed line %q is not +I[…]", l)
	}
	k, n, _ := strings.Cut(strings.TrimSuffix(body, "]"), ", ")
	v.K = k
	if _, err := fmt.Sscan(n, &v.V); err != nil {
		t.Fatalf("printed line %q: %v", l, err)
	}
	return v
}

func TestConformance(t *testing.T) {
	var in []kv
	for i := 0; i < 1500; i++ {
		in = append(in, kv{K: fmt.Sprintf("k%d", i%17), V: i})
	}
	connectortest.RunSink(t, connectortest.SinkCase[kv]{
		Open: func(t testing.TB) (connector.Sink[kv], func() []kv) {
			buf := &lockedBuffer{}
			return print.NewSink[kv](print.Options{Writer: buf}), func() []kv {
				var out []kv
				for _, l := range buf.lines() {
					out = append(out, parseLine(t, l))
				}
				return out
			}
		},
		Input:     in,
		Guarantee: connectortest.AtLeastOnce,
	})
	connectortest.RunOptions[kv](t, connectortest.OptionsCase{Name: "print"})
}
