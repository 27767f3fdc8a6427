package connectortest_test

import (
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector/connectortest"
)

// TestSliceConformance runs the suite on eddy.FromSlice.
func TestSliceConformance(t *testing.T) {
	data := make([]int, 3000)
	for i := range data {
		data[i] = i
	}
	connectortest.RunStream(t, connectortest.StreamCase[int]{
		Build: func(env *eddy.Environment) *eddy.Stream[int] {
			return eddy.FromSlice(env, data, eddy.NoWatermarks[int]())
		},
		Want: data,
	})
}

// TestGeneratorConformance runs the suite on eddy.FromGenerator, with the
// reference taken from a full read.
func TestGeneratorConformance(t *testing.T) {
	connectortest.RunStream(t, connectortest.StreamCase[kv]{
		Build: func(env *eddy.Environment) *eddy.Stream[kv] {
			return eddy.FromGenerator(env, eddy.GeneratorOptions{Count: 4000}, func(i int64) kv {
				return kv{K: string(rune('a' + i%26)), V: int(i)}
			}, eddy.NoWatermarks[kv]())
		},
	})
}
