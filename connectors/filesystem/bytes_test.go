package filesystem_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connectors/filesystem"
	"github.com/eddystream/eddy/formats"
)

// TestBytesCounted copies files into part files: the source counts the
// bytes of the files it read, line endings included, and the sink those of
// the part files it wrote.
func TestBytesCounted(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	var read int64
	for f, content := range []string{"{\"file\":0,\"n\":1}\n{\"file\":0,\"n\":2}\r\n\n", "{\"file\":1,\"n\":3}\n{\"file\":1,\"n\":4}"} {
		path := filepath.Join(in, "f"+strings.Repeat("x", f)+".jsonl")
		write(t, path, content)
		read += int64(len(content))
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	src := eddy.FromSource(env, "files", filesystem.NewSource(filesystem.SourceOptions{Paths: []string{in}}, formats.JSON[line]), eddy.NoWatermarks[line]())
	eddy.WriteTo(src.Rebalance(), "parts", filesystem.NewSink(filesystem.SinkOptions{Dir: out, Suffix: ".jsonl"}, formats.JSONEncoder[line]))
	if err := env.Execute(context.Background(), "bytes"); err != nil {
		t.Fatal(err)
	}
	var written int64
	parts, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		fi, err := p.Info()
		if err != nil {
			t.Fatal(err)
		}
		written += fi.Size()
	}
	var bytesIn, bytesOut int64
	for _, m := range env.Metrics() {
		bytesIn += m.BytesIn
		bytesOut += m.BytesOut
	}
	if bytesIn != read {
		t.Errorf("the source counted %d bytes in, want the %d bytes of its files", bytesIn, read)
	}
	if written == 0 || bytesOut != written {
		t.Errorf("the sink counted %d bytes out, want the %d bytes of the part files", bytesOut, written)
	}
}
