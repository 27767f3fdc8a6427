//go:build !linux

package pebble

import "github.com/cockroachdb/pebble/v2/vfs"

// mappedTables tells whether fsys maps table files (Linux only).
const mappedTables = false

func isMapped(vfs.File) bool { return false }
