//go:build !linux

package hashlog

import "os"

// mapSegments: elsewhere sealed segments are read with pread.
const mapSegments = false

func mapFile(*os.File, int) ([]byte, bool) { return nil, false }

func unmap([]byte) error { return nil }
