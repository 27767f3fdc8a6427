package connectortest

import (
	"testing"
	"time"
)

// Meter measures a connector benchmark's run: its wall time and the CPU
// time the process used meanwhile, over all its threads, so that a rate
// can be given per core as well as per second. The CPU time is the
// process's: with a broker in another process, the connector's and its
// client's; with an embedded one, the broker's too.
type Meter struct {
	start time.Time
	cpu   time.Duration
}

// StartMeter starts measuring now.
func StartMeter() Meter { return Meter{start: time.Now(), cpu: CPUTime()} }

// Report reports n records, of size bytes each (0: no byte rate), moved
// since the meter started: unit+"/s" over the wall time, "MB/s", and
// unit+"/cpu-s" over the process's CPU time (the rate per core, where the
// platform reports CPU time). It returns the wall time.
func (m Meter) Report(b *testing.B, n, size int, unit string) time.Duration {
	b.Helper()
	elapsed, used := time.Since(m.start), CPUTime()-m.cpu
	b.ReportMetric(float64(n)/elapsed.Seconds(), unit+"/s")
	if size > 0 {
		b.ReportMetric(float64(n*size)/elapsed.Seconds()/1e6, "MB/s")
	}
	if used > 0 {
		b.ReportMetric(float64(n)/used.Seconds(), unit+"/cpu-s")
	}
	return elapsed
}
