package blackhole_test

import (
	"context"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/connectors/blackhole"
)

func TestConformance(t *testing.T) {
	in := make([]int, 1000)
	for i := range in {
		in[i] = i
	}
	connectortest.RunSink(t, connectortest.SinkCase[int]{
		Open:      func(testing.TB) (connector.Sink[int], func() []int) { return blackhole.NewSink[int](), nil },
		Input:     in,
		Guarantee: connectortest.Discards,
	})
	connectortest.RunOptions[int](t, connectortest.OptionsCase{Name: "blackhole"})
}

// TestTakesChanges writes a retracting stream through the registry.
func TestTakesChanges(t *testing.T) {
	env := eddy.NewEnvironment()
	in := []changelog.Change[int]{changelog.InsertOf(1), changelog.Of(changelog.UpdateBefore, 1), changelog.Of(changelog.UpdateAfter, 2)}
	eddy.WriteToConnector(eddy.FromSlice(env, in, eddy.NoWatermarks[changelog.Change[int]]()), "blackhole", nil)
	if err := env.Execute(context.Background(), "blackhole"); err != nil {
		t.Fatal(err)
	}
	env = eddy.NewEnvironment()
	eddy.WriteToConnector(eddy.FromSlice(env, in, eddy.NoWatermarks[changelog.Change[int]]()), "blackhole", map[string]string{"path": "/x"})
	if err := env.Execute(context.Background(), "blackhole"); err == nil {
		t.Fatal("an option of a connector that takes none was accepted")
	}
}
