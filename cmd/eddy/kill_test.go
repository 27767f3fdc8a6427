package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/eddystream/eddy/internal/testutil"
)

// built is the eddy binary of the end-to-end tests, built once for all of
// them into binDir (which TestMain removes).
var (
	buildOnce sync.Once
	binDir    string
	built     string
	buildErr  error
)

// buildEddy returns the eddy binary for end-to-end tests, building it on
// first use.
func buildEddy(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "eddy-test-bin-"); buildErr != nil {
			return
		}
		built = filepath.Join(binDir, "eddy")
		if out, err := exec.Command("go", "build", "-o", built, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("%w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building eddy: %v", buildErr)
	}
	return built
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// committed returns the committed lines of the file sink in dir.
func committed(t *testing.T, dir string) []string { return testutil.CommittedLines(t, dir) }

// TestKill9ExactlyOnce kills the eddy process with SIGKILL several times
// while it writes through the exactly-once file sink, restarts it on the
// same checkpoint directory each time, and checks that the committed output
// equals that of a run without failures, with keyed state on the heap and in
// Pebble.
func TestKill9ExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the eddy binary")
	}
	bin := buildEddy(t)
	t.Run("heap", func(t *testing.T) { testKill9ExactlyOnce(t, bin, nil) })
	t.Run("pebble", func(t *testing.T) {
		testKill9ExactlyOnce(t, bin, []string{"--state", "pebble", "--state-dir", t.TempDir()})
	})
}

// testKill9ExactlyOnce runs the demo with the extra flags state.
func testKill9ExactlyOnce(t *testing.T, bin string, state []string) {
	args := func(chk, out string) []string {
		return append([]string{"demo", "--events", "3000000", "--parallelism", "2", "--checkpoint-dir", chk,
			"--checkpoint-interval", "100ms", "--output", out}, state...)
	}
	root := t.TempDir()
	ref := filepath.Join(root, "ref")
	if out, err := exec.Command(bin, args(filepath.Join(root, "refchk"), ref)...).CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, out)
	}
	want := committed(t, ref)
	if len(want) == 0 {
		t.Fatal("reference run committed nothing")
	}

	chk, out := filepath.Join(root, "chk"), filepath.Join(root, "out")
	rng := rand.New(rand.NewPCG(1, 2))
	kills := 0
	for attempt := 0; attempt < 50; attempt++ {
		cmd := exec.Command(bin, args(chk, out)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if kills < 3 {
			select {
			case err := <-exited:
				if err != nil {
					t.Fatalf("run %d failed: %v\n%s", attempt, err, stderr.String())
				}
				// It finished before the kill; the output must be
				// complete anyway.
				kills = 3
				continue
			case <-time.After(time.Duration(200+rng.IntN(600)) * time.Millisecond):
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-exited
			kills++
			continue
		}
		if err := <-exited; err != nil {
			t.Fatalf("final run failed: %v\n%s", err, stderr.String())
		}
		if !strings.Contains(stderr.String(), "resuming from the latest checkpoint") && !strings.Contains(stderr.String(), "already finished") {
			t.Logf("final run did not resume (it may have been killed before the first checkpoint):\n%s", stderr.String())
		}
		break
	}
	got := committed(t, out)
	if !slices.Equal(got, want) {
		var d strings.Builder
		for i := range max(len(got), len(want)) {
			var g, w string
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w {
				fmt.Fprintf(&d, "line %d: got  %s\n         want %s\n", i+1, g, w)
			}
		}
		t.Fatalf("after %d kills the committed output has %d lines, a failure-free run %d:\n%s", kills, len(got), len(want), d.String())
	}
	t.Logf("killed %d times; %d committed lines equal the failure-free run", kills, len(got))
}
