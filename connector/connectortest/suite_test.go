package connectortest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

// TestPullSourceConformance runs the suite on a source whose enumerator
// assigns splits after the start, on the readers' requests.
func TestPullSourceConformance(t *testing.T) {
	src := &pullSource{ranges: 9, size: 400}
	connectortest.RunSource(t, connectortest.SourceCase[row]{
		Open: func(testing.TB) (connector.Source[row], func()) { return src, nil },
		Want: src.want(),
		Seq:  func(r row) int64 { return r.N },
	})
}

func kvInput() []kv {
	var in []kv
	for i := 0; i < 2000; i++ {
		in = append(in, kv{K: string(rune('a' + i%13)), V: i})
	}
	return in
}

func TestMemorySinkConformance(t *testing.T) {
	connectortest.RunSink(t, connectortest.SinkCase[kv]{
		Open: func(testing.TB) (connector.Sink[kv], func() []kv) {
			m := connectortest.NewMemorySink[kv]()
			return m.Sink(), m.Committed
		},
		Input:     kvInput(),
		Guarantee: connectortest.ExactlyOnce,
	})
}

func TestAtLeastOnceSinkConformance(t *testing.T) {
	connectortest.RunSink(t, connectortest.SinkCase[kv]{
		Open: func(testing.TB) (connector.Sink[kv], func() []kv) {
			s := &appendSink{}
			return s, s.all
		},
		Input:     kvInput(),
		Guarantee: connectortest.AtLeastOnce,
	})
}

func TestUpsertSinkConformance(t *testing.T) {
	connectortest.RunSink(t, connectortest.SinkCase[kv]{
		Open: func(testing.TB) (connector.Sink[kv], func() []kv) {
			s := &upsertSink{table: map[string]kv{}}
			return s, s.all
		},
		Input:     kvInput(),
		Guarantee: connectortest.Upsert,
		UpsertKey: func(r kv) string { return r.K },
	})
}

// changeSink keeps a table of rows by key, applying changes.
type changeSink struct{ upsertSink }

func (s *changeSink) ChangelogMode() changelog.Mode { return changelog.Upsert }

func (s *changeSink) NewWriter(connector.WriterContext) (connector.Writer[changelog.Change[kv]], error) {
	return changeWriter{s}, nil
}

type changeWriter struct{ s *changeSink }

func (w changeWriter) Write(records []changelog.Change[kv], _ []int64) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	for _, c := range records {
		if c.Kind.IsRetraction() {
			delete(w.s.table, c.Row.K)
		} else {
			w.s.table[c.Row.K] = c.Row
		}
	}
	return nil
}
func (w changeWriter) Flush() error { return nil }
func (w changeWriter) Close() error { return nil }

func TestUpsertChangelogSinkConformance(t *testing.T) {
	var in []changelog.Change[kv]
	for i := 0; i < 2000; i++ {
		k := changelog.UpdateAfter
		if i%7 == 3 {
			k = changelog.Delete
		}
		in = append(in, changelog.Of(k, kv{K: string(rune('a' + i%11)), V: i}))
	}
	connectortest.RunSink(t, connectortest.SinkCase[changelog.Change[kv]]{
		Open: func(testing.TB) (connector.Sink[changelog.Change[kv]], func() []changelog.Change[kv]) {
			s := &changeSink{upsertSink{table: map[string]kv{}}}
			return s, func() []changelog.Change[kv] {
				var out []changelog.Change[kv]
				for _, r := range s.all() {
					out = append(out, changelog.Of(changelog.UpdateAfter, r))
				}
				return out
			}
		},
		Input:     in,
		Guarantee: connectortest.Upsert,
		UpsertKey: func(c changelog.Change[kv]) string { return c.Row.K },
		Mode:      changelog.Upsert,
	})
}

func TestOptionsConformance(t *testing.T) {
	connectortest.RunOptions[row](t, connectortest.OptionsCase{
		Registry: fakeRegistry(fakeFactory{leaky: true}),
		Name:     "fake",
		Valid:    map[string]string{"url": "fake://x", "format": "fakefmt", "token": "abc"},
	})
	connectortest.RunOptions[row](t, connectortest.OptionsCase{
		Registry: fakeRegistry(fakeFactory{}),
		Name:     "fakefmt",
		Format:   true,
	})
}

// brokenEnv makes TestBroken run its broken cases, in the child process of
// TestSuiteCatchesBrokenConnectors.
const brokenEnv = "CONNECTORTEST_BROKEN"

// TestSuiteCatchesBrokenConnectors runs the suite on broken connectors, in
// a child process, and checks that it fails them for the right reason.
func TestSuiteCatchesBrokenConnectors(t *testing.T) {
	if os.Getenv(brokenEnv) != "" {
		t.Skip("this is the child process")
	}
	for _, c := range []struct{ name, want string }{
		{"positions", "differs from the reference"},
		{"forgetful_enumerator", "differs from the reference"},
		{"at_least_once_as_exactly_once", "does not hold what the sink promises"},
		{"unregistered_format", "lists format \"avro\", which is not registered"},
		{"missing_required", "lack the required option 'url'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBroken$/^"+c.name+"$", "-test.count=1")
			cmd.Env = append(os.Environ(), brokenEnv+"=1")
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a broken connector:\n%s", out)
			}
			if !strings.Contains(string(out), c.want) {
				t.Fatalf("the suite failed the broken connector, but not saying %q:\n%s", c.want, out)
			}
		})
	}
}

// TestBroken holds the broken cases; it runs only in the child process of
// TestSuiteCatchesBrokenConnectors.
func TestBroken(t *testing.T) {
	if os.Getenv(brokenEnv) == "" {
		t.Skip("run by TestSuiteCatchesBrokenConnectors")
	}
	t.Run("positions", func(t *testing.T) {
		// The pause after half of the records falls inside a range.
		src := &pullSource{ranges: 5, size: 333, stuckPositions: true}
		connectortest.RunSource(t, connectortest.SourceCase[row]{
			Open: func(testing.TB) (connector.Source[row], func()) { return src, nil },
			Want: src.want(),
		})
	})
	t.Run("forgetful_enumerator", func(t *testing.T) {
		src := &pullSource{ranges: 12, size: 300, forgetful: true}
		connectortest.RunSource(t, connectortest.SourceCase[row]{
			Open: func(testing.TB) (connector.Source[row], func()) { return src, nil },
			Want: src.want(),
		})
	})
	t.Run("at_least_once_as_exactly_once", func(t *testing.T) {
		connectortest.RunSink(t, connectortest.SinkCase[kv]{
			Open: func(testing.TB) (connector.Sink[kv], func() []kv) {
				s := &appendSink{}
				return s, s.all
			},
			Input:     kvInput(),
			Guarantee: connectortest.ExactlyOnce,
		})
	})
	t.Run("unregistered_format", func(t *testing.T) {
		connectortest.RunOptions[row](t, connectortest.OptionsCase{
			Registry: fakeRegistry(fakeFactory{unregistered: true}),
			Name:     "fake",
			Valid:    map[string]string{"url": "fake://x", "format": "fakefmt"},
		})
	})
	t.Run("missing_required", func(t *testing.T) {
		// A case whose valid options lack a required one.
		connectortest.RunOptions[row](t, connectortest.OptionsCase{
			Registry: fakeRegistry(fakeFactory{}),
			Name:     "fake",
			Valid:    map[string]string{"format": "fakefmt"},
		})
	})
}
