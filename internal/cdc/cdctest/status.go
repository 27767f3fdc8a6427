package cdctest

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy/connector"
)

// IdleLagBytes is the most lagBytes a reader that has caught up may
// report: the server may have written a little more since it last said
// how far it sent the log (to other tables, other databases).
const IdleLagBytes = 16 << 10

// CheckLagBytes runs j, which reads a table of before rows, with
// checkpoints (50 ms apart unless j says), in batches of 16 records, slowed down by 2 ms a record. Once the reader reads the
// stream and has caught up (lagBytes at most IdleLagBytes), write writes
// changes, after records in all, of well over IdleLagBytes: while the
// slowed reader reads them, its lagBytes must exceed IdleLagBytes; then it
// reads on at full speed, and once every record is in, lagBytes must fall
// back to at most IdleLagBytes. It returns the statuses seen then.
func CheckLagBytes(t testing.TB, j Job, before int, write func(), after int) (behind, caughtUp map[string]any) {
	t.Helper()
	var released atomic.Bool
	j.BatchSize, j.Timeout = 16, 5*time.Minute
	if j.Checkpoints == 0 {
		j.Checkpoints = 50 * time.Millisecond // the sink commits at checkpoints
	}
	j.Hook = func(r connector.TableRecord) connector.TableRecord {
		if !released.Load() {
			time.Sleep(2 * time.Millisecond)
		}
		return r
	}
	r := j.Start(t)
	r.WaitFor(t, before)
	lag := func(m map[string]any) (int64, bool) {
		l, ok := m["lagBytes"].(int64)
		return l, ok
	}
	r.WaitStatus(t, "the reader caught up with the server", func(m map[string]any) bool {
		l, ok := lag(m)
		return ok && l <= IdleLagBytes
	})
	write()
	behind = r.WaitStatus(t, "the reader reported lagBytes over IdleLagBytes", func(m map[string]any) bool {
		l, ok := lag(m)
		return ok && l > IdleLagBytes
	})
	released.Store(true)
	r.WaitFor(t, after)
	caughtUp = r.WaitStatus(t, "the reader caught up again", func(m map[string]any) bool {
		l, ok := lag(m)
		return ok && l <= IdleLagBytes
	})
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	return behind, caughtUp
}
