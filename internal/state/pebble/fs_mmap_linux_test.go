package pebble

import "github.com/cockroachdb/pebble/v2/vfs"

// mappedTables tells whether fsys maps table files (Linux only).
const mappedTables = true

// isMapped tells whether f reads through a mapping.
func isMapped(f vfs.File) bool { _, ok := f.(*mappedFile); return ok }
