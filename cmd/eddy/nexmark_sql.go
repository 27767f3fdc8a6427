package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark/queries"
	"github.com/eddystream/eddy/nexmark/reference"
	"github.com/eddystream/eddy/sql"
)

// errSQLPlan marks the error of a reference SQL file that eddy does not
// plan (q6's, which Flink refuses too).
var errSQLPlan = errors.New("the query is not planned")

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
	// A line and column count in the DDL, the views and the query, one
	// after the other.
	where := fmt.Sprintf("the reference's DDL, views and %s.sql in %s, one after the other", name, dir)
	s := sql.NewSession(sql.WithParallelism(o.parallelism))
	if _, err := s.Execute(script); err != nil {
		return nexmarkResult{}, fmt.Errorf("%w: %s (%s): %w", errSQLPlan, label, where, err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(o.parallelism), eddy.WithStateBackend(backend))
	if err := s.Build(env); err != nil {
		return nexmarkResult{}, fmt.Errorf("%w: %s (%s): %w", errSQLPlan, label, where, err)
	}
	goruntime.GC()
	stopProfile, err := startCPUProfile(o.profileDir, name+"-sql.pprof")
	if err != nil {
		return nexmarkResult{}, err
	}
	cpu0, wall0 := processCPU(), time.Now()
	err = env.Execute(ctx, "nexmark "+label)
	wall, cpu := time.Since(wall0), processCPU()-cpu0
	if perr := stopProfile(); perr != nil && err == nil {
		err = perr
	}
	if err != nil {
		return nexmarkResult{}, fmt.Errorf("%s: %w", label, err)
	}
	r := nexmarkResult{name: label, events: o.events, wall: wall, cpu: cpu}
	// rows stays unknown: a sink chained to the operator before it counts
	// no records in, and the reference's sinks are blackhole tables.
	r.rows = -1
	return r, nil
}
