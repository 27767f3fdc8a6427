package agg_test

import (
	"testing"

	"github.com/eddystream/eddy/agg"
)

// counter is a Function written as a type, as users may.
type counter struct{}

func (counter) Create() int               { return 0 }
func (counter) Add(acc int, _ string) int { return acc + 1 }
func (counter) Merge(a, b int) int        { return a + b }
func (counter) Result(acc int) int        { return acc }

func TestFunctionIsAnInterface(t *testing.T) {
	var f agg.Function[string, int, int] = counter{}
	if got := f.Result(f.Add(f.Add(f.Create(), "a"), "b")); got != 2 {
		t.Errorf("got %d", got)
	}
}
