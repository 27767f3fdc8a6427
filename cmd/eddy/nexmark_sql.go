package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark/queries"
	"github.com/eddystream/eddy/nexmark/reference"
	"github.com/eddystream/eddy/sql"
)

// runNexmarkSQL runs query name as the Nexmark reference's SQL file in dir
// (with its blackhole sink) over the same events as the Go API's version,
// and measures it as runNexmarkQuery does. tmp is a directory of the run:
// q10 writes under it and q13 reads its side input from it.
func runNexmarkSQL(ctx context.Context, name, dir, tmp string, o nexmarkOptions, backend eddy.StateBackend) (nexmarkResult, error) {
	home := filepath.Join(tmp, "flink-home")
	side := filepath.Join(home, "data", "side_input.txt")
	if _, err := os.Stat(side); err != nil {
		if err := os.MkdirAll(filepath.Dir(side), 0o755); err != nil {
			return nexmarkResult{}, err
		}
		src := o.sideInput
		if src == "" {
			if err := queries.WriteSideInput(side, queries.SideInputRows); err != nil {
				return nexmarkResult{}, err
			}
		} else if err := os.Symlink(src, side); err != nil {
			return nexmarkResult{}, err
		}
	}
	nexmarkDir := o.dir
	if nexmarkDir == "" {
		nexmarkDir = filepath.Join(tmp, "q10")
	}
	script, err := reference.Query(dir, name, reference.Vars(reference.Workload{
		Events: o.events, TPS: o.tps, NexmarkDir: nexmarkDir, FlinkHome: home,
	}))
	if err != nil {
		return nexmarkResult{}, err
	}
	label := name + "/sql"
	s := sql.NewSession(sql.WithParallelism(o.parallelism))
	if _, err := s.Execute(script); err != nil {
		return nexmarkResult{}, fmt.Errorf("%s (%s): %w", label, filepath.Join(dir, name+".sql"), err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(o.parallelism), eddy.WithStateBackend(backend))
	if err := s.Build(env); err != nil {
		return nexmarkResult{}, fmt.Errorf("%s (%s): %w", label, filepath.Join(dir, name+".sql"), err)
	}
	goruntime.GC()
	cpu0, wall0 := processCPU(), time.Now()
	err = env.Execute(ctx, "nexmark "+label)
	wall, cpu := time.Since(wall0), processCPU()-cpu0
	if err != nil {
		return nexmarkResult{}, fmt.Errorf("%s: %w", label, err)
	}
	r := nexmarkResult{name: label, events: o.events, wall: wall, cpu: cpu}
	// The reference's sinks are blackhole tables: every sink counts.
	for _, m := range env.Metrics() {
		if strings.HasPrefix(m.Name, "Sink: ") {
			r.rows += m.RecordsIn
		}
	}
	return r, nil
}
