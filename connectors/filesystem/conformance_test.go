package filesystem_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/connectors/filesystem"
	"github.com/eddystream/eddy/formats"
)

type line struct {
	File int   `json:"file"`
	N    int64 `json:"n"`
}

func writeFiles(t testing.TB, dir string, from, to, lines int) []line {
	var want []line
	for f := from; f < to; f++ {
		b := []byte{}
		for n := 0; n < lines; n++ {
			b = fmt.Appendf(b, "{\"file\":%d,\"n\":%d}\n", f, n)
			want = append(want, line{f, int64(n)})
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.jsonl", f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return want
}

func TestSourceConformance(t *testing.T) {
	want := writeFiles(t, t.TempDir(), 0, 7, 300)
	connectortest.RunSource(t, connectortest.SourceCase[line]{
		Open: func(t testing.TB) (connector.Source[line], func()) {
			dir := t.TempDir()
			writeFiles(t, dir, 0, 7, 300)
			return filesystem.NewSource(filesystem.SourceOptions{Paths: []string{dir}}, formats.JSON[line]), nil
		},
		Want: want,
		Seq:  func(l line) int64 { return l.N },
	})
}

func TestMonitoringSourceConformance(t *testing.T) {
	scratch := t.TempDir()
	want := writeFiles(t, scratch, 0, 8, 200)
	connectortest.RunSource(t, connectortest.SourceCase[line]{
		Open: func(t testing.TB) (connector.Source[line], func()) {
			dir := t.TempDir()
			writeFiles(t, dir, 0, 3, 200)
			grow := func() {
				stage := t.TempDir()
				writeFiles(t, stage, 3, 8, 200)
				for f := 3; f < 8; f++ {
					name := fmt.Sprintf("f%03d.jsonl", f)
					if err := os.Rename(filepath.Join(stage, name), filepath.Join(dir, name)); err != nil {
						t.Error(err)
					}
				}
			}
			return filesystem.NewSource(filesystem.SourceOptions{Paths: []string{"file://" + dir}, MonitorInterval: 5 * time.Millisecond}, formats.JSON[line]), grow
		},
		Want:       want,
		Unbounded:  true,
		Seq:        func(l line) int64 { return l.N },
		PauseAfter: 300,
	})
}

// readParts reads the committed part files of dir.
func readParts(t testing.TB, dir string) []line {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []line
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l == "" {
				continue
			}
			var v line
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatalf("%s: %v", e.Name(), err)
			}
			out = append(out, v)
		}
	}
	return out
}

func TestPartFileSinkConformance(t *testing.T) {
	var input []line
	for i := 0; i < 3000; i++ {
		input = append(input, line{File: i % 7, N: int64(i)})
	}
	connectortest.RunSink(t, connectortest.SinkCase[line]{
		Open: func(t testing.TB) (connector.Sink[line], func() []line) {
			dir := t.TempDir()
			return filesystem.NewSink(filesystem.SinkOptions{Dir: dir, Suffix: ".jsonl"}, formats.JSONEncoder[line]),
				func() []line { return readParts(t, dir) }
		},
		Input:     input,
		Guarantee: connectortest.ExactlyOnce,
	})
}

// TestRegisteredPartFileSinkConformance runs the sink suite on the sink the
// registry makes, through the adapters of reflective factories.
func TestRegisteredPartFileSinkConformance(t *testing.T) {
	var input []line
	for i := 0; i < 2000; i++ {
		input = append(input, line{File: i % 3, N: int64(i)})
	}
	connectortest.RunSink(t, connectortest.SinkCase[line]{
		Open: func(t testing.TB) (connector.Sink[line], func() []line) {
			dir := t.TempDir()
			sink, err := connector.OpenSink[line](connector.Default, "filesystem", map[string]string{"path": "file://" + dir, "format": "json"})
			if err != nil {
				t.Fatal(err)
			}
			return sink, func() []line { return readParts(t, dir) }
		},
		Input:     input,
		Guarantee: connectortest.ExactlyOnce,
	})
}
