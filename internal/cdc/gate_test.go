package cdc

import (
	"log/slog"
	"testing"
	"time"

	"github.com/eddystream/eddy/connector"
)

type ctx struct {
	p  int
	cp bool
}

func (c ctx) SourceName() string                                    { return "cdc" }
func (c ctx) Parallelism() int                                      { return c.p }
func (c ctx) AssignSplits(int, ...connector.Split)                  {}
func (c ctx) SignalNoMoreSplits(int)                                {}
func (c ctx) SendEvent(int, []byte)                                 {}
func (c ctx) CallAsync(func() (any, error), func(any, error) error) {}
func (c ctx) Every(time.Duration, func() error)                     {}
func (c ctx) Log() *slog.Logger                                     { return slog.Default() }
func (c ctx) Checkpointing() bool                                   { return c.cp }

// TestStreamGate: the gate shuts only for several readers with
// checkpoints, and opens at the completion of the first checkpoint
// snapshotted after it shut, not of an earlier one.
func TestStreamGate(t *testing.T) {
	for _, c := range []ctx{{1, true}, {2, false}} {
		var g StreamGate
		if g.Shut(c) || !g.Open() {
			t.Errorf("%+v: the gate shut", c)
		}
	}
	var g StreamGate
	if !g.Shut(ctx{2, true}) || g.Open() {
		t.Fatal("the gate did not shut for two readers with checkpoints")
	}
	if g.Complete(3) || g.Open() {
		t.Fatal("a checkpoint snapshotted before the gate shut opened it")
	}
	g.Snapshot(4)
	g.Snapshot(5)
	if g.Complete(3) || g.Open() {
		t.Fatal("an older checkpoint opened the gate")
	}
	if !g.Complete(4) || !g.Open() {
		t.Fatal("checkpoint 4 did not open the gate")
	}
	if g.Complete(5) {
		t.Fatal("the gate opened twice")
	}
}
