package ops

import (
	"testing"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/ops/opstest"
)

func newTemporalHarness(t *testing.T, leftOuter bool) *opstest.Harness {
	t.Helper()
	h := opstest.New("temporal join")
	opstest.Output[changelog.Change[string]](h, "", nil)
	spec := EitherKeySpec(joinRecordKey(), joinRecordKey())
	j, err := NewTemporalJoin(h.Context(), spec, h.Backend, TemporalJoinLogic[opstest.Record, opstest.Record, string]{LeftOuter: leftOuter, Output: joinPair}, h.Outputs())
	if err != nil {
		t.Fatal(err)
	}
	h.Timers = j.timers.Len
	if err := h.Start(joinChangeInputs(TwoInputs[changelog.Change[opstest.Record], changelog.Change[opstest.Record]](j))); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestTemporalJoinWatermarkOrder checks that a probe row waits for the
// watermark to pass its time, joins the version valid at that time, and
// that versions no probe row can need any more are deleted.
func TestTemporalJoinWatermarkOrder(t *testing.T) {
	h := newTemporalHarness(t, true)
	checkJoinScript(t, h, `
right a 1 v=10
right a 5 v=20
left a 3 v=1
left a 5 v=2
left b 4 v=3
state
watermark 4
state
watermark 10
state
right a 12 v=20 -D
left a 13 v=4
left a 11 v=5
watermark 20
state
`, `
state: temporal-probe=2 temporal-timer=2 temporal-versions=2 timers=2
emit ts=3: +I[a 1|10]
emit ts=4: +I[b 3|-]
watermark 4
state: temporal-probe=1 temporal-timer=1 temporal-versions=2 timers=1
emit ts=5: +I[a 2|20]
watermark 10
state: temporal-probe=0 temporal-timer=0 temporal-versions=1 timers=0
emit ts=11: +I[a 5|20]
emit ts=13: +I[a 4|-]
watermark 20
state: temporal-probe=0 temporal-timer=0 temporal-versions=0 timers=0
`, false)
}

// TestTemporalJoinUpdates checks that the last change of a version at one
// time wins, that an inner join drops probe rows without a version, and
// that a probe update at one time comes out as an update.
func TestTemporalJoinUpdates(t *testing.T) {
	h := newTemporalHarness(t, false)
	checkJoinScript(t, h, `
right a 1 v=10
right a 2 v=10 -U
right a 2 v=11 +U
left a 2 v=1
left a 3 v=1 -U
left a 3 v=2 +U
left b 3 v=9
watermark 3
`, `
emit ts=2: +I[a 1|11]
emit ts=3: -U[a 1|11]
emit ts=3: +U[a 2|11]
watermark 3
`, true)
}

// TestTemporalJoinLateProbe checks that a probe row behind the watermark
// joins the versions still kept, at the next watermark.
func TestTemporalJoinLateProbe(t *testing.T) {
	h := newTemporalHarness(t, true)
	checkJoinScript(t, h, `
right a 1 v=10
right a 5 v=20
watermark 6
left a 3 v=1
left a 7 v=2
watermark 7
`, `
watermark 6
emit ts=3: +I[a 1|-]
emit ts=7: +I[a 2|20]
watermark 7
`, false)
}
