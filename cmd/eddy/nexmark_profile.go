package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
)

// startCPUProfile starts a CPU profile written to dir/file, for
// --cpuprofile-dir; with dir empty it does nothing. The function it returns
// stops the profile and closes the file.
func startCPUProfile(dir, file string) (func() error, error) {
	if dir == "" {
		return func() error { return nil }, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--cpuprofile-dir: %w", err)
	}
	path := filepath.Join(dir, file)
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile-dir: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile-dir: profile %s: %w", path, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("--cpuprofile-dir: %w", err)
		}
		return nil
	}, nil
}
