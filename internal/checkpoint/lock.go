package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Lock is an exclusive hold on a checkpoint directory, so that two running
// jobs never write checkpoints into the same directory.
type Lock struct {
	f *os.File
}

// LockDir takes the lock of the checkpoint directory dir, or explains who
// holds it. The lock is released by Unlock or when the process ends.
func LockDir(dir string) (*Lock, error) {
	path := filepath.Join(dir, ".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := strings.TrimSpace(string(b[:n]))
			return nil, fmt.Errorf("checkpoint: the checkpoint directory %s is in use by another running job (process %s); stop it, or give this job a directory of its own", dir, holder)
		}
		return nil, fmt.Errorf("checkpoint: locking %s: %w", path, err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &Lock{f: f}, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
