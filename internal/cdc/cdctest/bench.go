package cdctest

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
)

// ProcessCPU returns the CPU time the process has used, user and system.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Measure calls read, which reads records and returns how many, and
// fails b unless it read n without an error; it reports records/s,
// records per CPU-second of the process, and the cores it kept busy.
func Measure(b *testing.B, n int64, read func() (int64, error)) {
	b.Helper()
	cpu0, wall0 := ProcessCPU(), time.Now()
	got, err := read()
	wall, cpu := time.Since(wall0), ProcessCPU()-cpu0
	if err != nil || got != n {
		b.Fatalf("read %d records, want %d: %v", got, n, err)
	}
	b.ReportMetric(float64(n)/wall.Seconds(), "records/s")
	b.ReportMetric(float64(n)/cpu.Seconds(), "records/CPU-s")
	b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores")
}

// RunCounting runs a job of src, a source of c, at parallelism p until it
// has read n records (or ends by itself), and Measures it.
func RunCounting(b *testing.B, c Connector, src connector.Source[connector.TableRecord], p int, n int64) {
	b.Helper()
	Measure(b, n, func() (int64, error) {
		env := eddy.NewEnvironment(eddy.WithParallelism(p))
		var seen atomic.Int64
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		st := eddy.FromSource(env, string(c), src, eddy.WatermarkStrategy[connector.TableRecord]{})
		eddy.Discard(eddy.Map(st, func(r connector.TableRecord) connector.TableRecord {
			if seen.Add(1) == n {
				cancel()
			}
			return r
		}))
		err := env.Execute(ctx, "bench")
		if seen.Load() == n {
			err = nil // the job was stopped after n records
		}
		return seen.Load(), err
	})
}
