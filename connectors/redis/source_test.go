package redis_test

import (
	"testing"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

// TestSourceConformance reads a stream without a group, bounded.
func TestSourceConformance(t *testing.T) {
	cli := server(t)
	connectortest.RunSource(t, connectortest.SourceCase[line]{
		Open: func(t testing.TB) (connector.Source[line], func()) {
			stream := freshStream(t, cli)
			addLines(t, cli, stream, 0, 3000, 3)
			return openSource(t, map[string]string{"stream": stream, "format": "json", "scan.bounded.mode": "latest-offset", "scan.fetch-size": "100"}), nil
		},
		Want: linesUpTo(3000, 3),
		Seq:  func(l line) int64 { return l.N },
	})
}

// TestUnboundedSourceConformance reads a stream without a group while it
// grows.
func TestUnboundedSourceConformance(t *testing.T) {
	cli := server(t)
	connectortest.RunSource(t, connectortest.SourceCase[line]{
		Open: func(t testing.TB) (connector.Source[line], func()) {
			stream := freshStream(t, cli)
			addLines(t, cli, stream, 0, 800, 2)
			grow := func() { addLines(t, cli, stream, 800, 2000, 2) }
			return openSource(t, map[string]string{"stream": stream, "format": "json", "scan.fetch-size": "50"}), grow
		},
		Want:       linesUpTo(2000, 2),
		Unbounded:  true,
		Seq:        func(l line) int64 { return l.N },
		PauseAfter: 400,
	})
}

// TestGroupSourceConformance reads a stream through a consumer group while
// it grows: two consumers at parallelism 2, restored at parallelism 1 and
// 3 from one savepoint (which moves the group back each time).
func TestGroupSourceConformance(t *testing.T) {
	cli := server(t)
	connectortest.RunSource(t, connectortest.SourceCase[line]{
		Open: func(t testing.TB) (connector.Source[line], func()) {
			stream := freshStream(t, cli)
			addLines(t, cli, stream, 0, 1500, 3)
			grow := func() { addLines(t, cli, stream, 1500, 3000, 3) }
			return openSource(t, map[string]string{"stream": stream, "format": "json", "group": "g-" + random(), "scan.fetch-size": "40"}), grow
		},
		Want:       linesUpTo(3000, 3),
		Unbounded:  true,
		Seq:        func(l line) int64 { return l.N },
		PauseAfter: 700,
	})
}
