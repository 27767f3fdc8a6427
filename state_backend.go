package eddy

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/heap"
	"github.com/eddystream/eddy/internal/state/pebble"
)

// StateBackend says where keyed state lives. See HeapState and PebbleState.
type StateBackend struct {
	name    string
	factory func(e *Environment) ops.BackendFactory
}

// Name returns the backend's name ("heap" or "pebble").
func (b StateBackend) Name() string { return b.name }

// HeapState keeps keyed state as Go values in memory: the fastest backend,
// bounded by memory. It is the default.
func HeapState() StateBackend {
	return StateBackend{name: "heap", factory: func(*Environment) ops.BackendFactory {
		return func(ctx *runtime.Context, kgs state.KeyGroupRange) (state.Backend, error) {
			return heap.New(kgs, ctx.MaxParallelism), nil
		}
	}}
}

// PebbleState keeps keyed state in an embedded LSM (Pebble) under dir, one
// database per keyed operator subtask, so state can be larger than memory.
// memoryBudget bounds Pebble's block cache and memtables for the whole
// process; 0 derives it from the machine's memory. Each subtask's database
// is deleted when the subtask ends.
//
// Checkpoints of Pebble state are incremental: each uploads only the SST
// files that earlier retained checkpoints do not hold, into shared/ of the
// checkpoint directory, plus a few small files; they restore at any
// parallelism (key-group ranges of files are kept or dropped, not
// rewritten), into the Pebble backend only. Savepoints hold every key group
// in a self-contained canonical format instead, which restores into either
// backend: a savepoint moves a job between HeapState and PebbleState.
func PebbleState(dir string, memoryBudget int64) StateBackend {
	return StateBackend{name: "pebble", factory: func(e *Environment) ops.BackendFactory {
		removeStale(dir, e.cfg.Log)
		return func(ctx *runtime.Context, kgs state.KeyGroupRange) (state.Backend, error) {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("pebble state directory: %w", err)
			}
			sub, err := os.MkdirTemp(dir, fmt.Sprintf("%s-%d-%d-", safeName(ctx.Operator), ctx.Subtask, os.Getpid()))
			if err != nil {
				return nil, fmt.Errorf("pebble state directory: %w", err)
			}
			opts := pebble.Options{MemoryBudget: memoryBudget}
			var b *pebble.Backend
			if rs := ctx.Restored; rs != nil && len(rs.Backends) > 0 {
				b, err = pebble.RestoreSnapshots(sub, rs.Backends, kgs, ctx.MaxParallelism, opts, ctx.Shared)
			} else {
				b, err = pebble.Open(sub, kgs, ctx.MaxParallelism, opts)
			}
			if err != nil {
				os.RemoveAll(sub)
				return nil, err
			}
			return &removeOnClose{Backend: b, dir: sub}, nil
		}
	}}
}

// removeOnClose deletes a Pebble database's directory when it closes.
type removeOnClose struct {
	*pebble.Backend
	dir string
}

func (r *removeOnClose) Close() error {
	err := r.Backend.Close()
	if rerr := os.RemoveAll(r.dir); err == nil && rerr != nil {
		err = fmt.Errorf("removing %s: %w", r.dir, rerr)
	}
	return err
}

// removeStale deletes the databases under dir that a process that no longer
// runs left behind (killed before it could remove them): their names carry
// the process id. A directory of a running process is never touched.
func removeStale(dir string, log *slog.Logger) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	if log == nil {
		log = slog.Default()
	}
	for _, e := range ents {
		parts := strings.Split(e.Name(), "-")
		if len(parts) < 4 {
			continue
		}
		pid, err := strconv.Atoi(parts[2])
		if err != nil || pid <= 0 || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := os.RemoveAll(p); err != nil {
			log.Warn("could not remove the state of an ended process", "dir", p, "error", err)
			continue
		}
		log.Info("removed the local state an ended process left", "dir", p)
	}
}

// WithStateBackend sets where keyed state lives (default HeapState()).
func WithStateBackend(b StateBackend) Option { return func(e *Environment) { e.backend = b } }

func safeName(s string) string {
	out := []byte(s)
	for i, c := range out {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			out[i] = '_'
		}
	}
	if len(out) > 32 {
		out = out[:32]
	}
	return string(out)
}

// checkBackend reports a backend setting the job cannot run with.
func (e *Environment) checkBackend() error {
	if e.backend.factory == nil {
		return errors.New("invalid state backend; use eddy.HeapState() or eddy.PebbleState(dir, budget)")
	}
	return nil
}
