package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// killRuns runs an eddy command again and again on one checkpoint
// directory, killing it with SIGKILL, for the tests of recovery.
type killRuns struct {
	t    *testing.T
	bin  string
	dir  string
	args []string
	logs []string
}

// newKillRuns prepares runs of bin with args, their output in files of dir.
func newKillRuns(t *testing.T, bin, dir string, args ...string) *killRuns {
	return &killRuns{t: t, bin: bin, dir: dir, args: args}
}

// start starts the next run, its output in dir/run<N>.log.
func (k *killRuns) start() *exec.Cmd {
	k.t.Helper()
	log := filepath.Join(k.dir, fmt.Sprintf("run%d.log", len(k.logs)))
	k.logs = append(k.logs, log)
	f, err := os.Create(log)
	if err != nil {
		k.t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(k.bin, k.args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		k.t.Fatal(err)
	}
	return cmd
}

// kill kills a run with SIGKILL and waits for it to end.
func kill(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_, _ = cmd.Process.Wait()
}

// killTimes starts a run and kills it n times, each after wait plus up to
// spread more, drawn from the random numbers of seed.
func (k *killRuns) killTimes(n int, seed1, seed2 uint64, wait, spread time.Duration) {
	k.t.Helper()
	rng := rand.New(rand.NewPCG(seed1, seed2))
	for range n {
		cmd := k.start()
		time.Sleep(wait + time.Duration(rng.Int64N(int64(spread))))
		kill(cmd)
	}
}

// startLast starts a run that the test's end kills.
func (k *killRuns) startLast() {
	k.t.Helper()
	cmd := k.start()
	k.t.Cleanup(func() { kill(cmd) })
}

// dump logs the output of every run.
func (k *killRuns) dump() {
	for _, l := range k.logs {
		b, _ := os.ReadFile(l)
		k.t.Logf("%s:\n%s", filepath.Base(l), b)
	}
}
